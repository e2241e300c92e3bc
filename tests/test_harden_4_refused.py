"""Issue 16, class 4: what a run cannot use is refused by the validator, one line each: lone surrogates
(every cell once died of UnicodeEncodeError), keys given twice (the last silently won), a window that
cannot hold the system prompt and a reply, blank expect/reject entries (an empty term passes every
answer), settings that are not booleans; and one BOM rule for every reader: a UTF-8 BOM is ignored."""
from __future__ import annotations

import json
import shutil

import pytest

from harden import WATCH, cli, one_line, scenario, write

TEXT = WATCH.read_text()


def refused(tmp_path, name: str, text: str, *says: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return one_line(*cli("scenarios", "validate", str(path))[::2], str(path), *says)


def test_a_lone_surrogate_in_text_is_refused_and_run_writes_nothing(tmp_path):
    data = scenario()
    data["events"][3]["text"] += " \ud83d"
    text = json.dumps(data)           # JSON escapes it as \ud83d: valid JSON, not a character
    refused(tmp_path, "s.json", text, f"events.{data['events'][3]['id']}.text", "lone UTF-16 surrogate")
    out = tmp_path / "r"
    one_line(*cli("run", f"scenarios=[{tmp_path / 's.json'}]", "strategies=[truncate]", f"out={out}")[::2],
             "lone UTF-16 surrogate")
    assert not any((out / f).exists() for f in ("summary.csv", "checks.csv", "requests.jsonl"))


def test_a_lone_surrogate_in_a_key_is_refused(tmp_path):
    data = scenario()
    data["events"][1]["calls"][0]["args"] = {"a\udc00": 1}
    refused(tmp_path, "s.json", json.dumps(data), "events.a1.calls[0].args", "lone UTF-16 surrogate")


def test_a_lone_surrogate_escape_in_yaml_is_refused(tmp_path):
    code, _, err = cli("scenarios", "validate", str(write(tmp_path / "ok.yaml", scenario())))
    text = TEXT.replace('"Running the checkout suite to see the failures."', '"Running \\ud800 the suite."', 1)
    path = tmp_path / "s.yaml"
    path.write_text(text)
    code, out, err = cli("scenarios", "validate", str(path))
    assert code == 2 and len(err.strip().splitlines()) == 1 and str(path) in err, err


@pytest.mark.parametrize("name, old, new, key", [
    ("json-top", '"id": "injected-watch"', '"id": "injected-watch", "id": "other"', "id: key 'id'"),
    ("json-event", '"id": "u1"', '"id": "u1", "id": "u9"', "events.u9.id: key 'id'"),
    ("json-truth", '"kind": "ban"', '"kind": "ban", "kind": "must"', "kind: key 'kind'"),
])
def test_a_json_key_given_twice_is_refused(tmp_path, name, old, new, key):
    text = json.dumps(scenario())
    assert text.count(old) >= 1
    refused(tmp_path, "s.json", text.replace(old, new, 1), key, "more than once")


@pytest.mark.parametrize("old, new, key", [("user: Priya\n", "user: Priya\nuser: Sam\n", "user: key 'user'"),
                                           ("kind: ban", "kind: ban, kind: must", "kind: key 'kind'")])
def test_a_yaml_key_given_twice_is_refused(tmp_path, old, new, key):
    assert old in TEXT
    refused(tmp_path, "s.yaml", TEXT.replace(old, new, 1), key, "more than once")


def test_a_window_that_cannot_hold_the_system_prompt_is_refused(tmp_path):
    line = refused(tmp_path, "s.yaml", TEXT.replace("window: 4500", "window: 40"), "window", "system prompt")
    assert "smallest usable window is" in line


@pytest.mark.parametrize("override", ["window=1", "window=150", "reserve_output=4400", "margin=4450"])
def test_a_run_override_that_leaves_no_room_is_refused(tmp_path, override):
    line = one_line(*cli("run", f"scenarios=[{WATCH}]", "strategies=[truncate]", override,
                         f"out={tmp_path / 'r'}")[::2], "window:", "injected-watch")
    assert "cannot hold a request" in line and not (tmp_path / "r").exists()


@pytest.mark.parametrize("key, value", [("expect", [""]), ("expect", ["#102", "  "]), ("reject", [" "]),
                                        ("rubric", " ")])
def test_blank_probe_terms_are_refused(tmp_path, key, value):
    data = scenario()
    data["probes"][0][key] = value
    refused(tmp_path, "s.json", json.dumps(data), f"probes[0].{key}", "blank")


def test_an_id_with_a_trailing_newline_is_refused(tmp_path):
    line = refused(tmp_path, "s.json", json.dumps(scenario(id="injected-watch\n")), "id", "must match")
    assert "injected-watch\\n" in line        # shown escaped: still one line


@pytest.mark.parametrize("override, key", [("responses.enabled=maybe", "responses.enabled"),
                                           ("responses.refresh=1", "responses.refresh"),
                                           ("probes.enabled=maybe", "probes.enabled"),
                                           ("markers=yes", "markers"), ("resume=0", "resume"),
                                           ("responses.dir=5", "responses.dir"),
                                           ("writer.max_wait=-1", "writer.max_wait")])
def test_settings_of_the_wrong_type_are_refused(tmp_path, override, key):
    one_line(*cli("run", f"scenarios=[{WATCH}]", "strategies=[truncate]", override, f"out={tmp_path / 'r'}")[::2],
             f"{key}: must be")


BOM = "\ufeff"


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_bom_is_ignored_in_scenario_files(tmp_path, suffix):
    path = tmp_path / f"s{suffix}"
    text = TEXT if suffix == ".yaml" else json.dumps(scenario(), indent=1)
    path.write_text(BOM + text, encoding="utf-8")
    code, out, err = cli("scenarios", "validate", str(path))
    assert code == 0 and "ok " in out, err


@pytest.mark.parametrize("fmt, name, text", [
    ("openai-chat", "t.json", json.dumps([{"role": "user", "content": "Fix the build."},
                                          {"role": "assistant", "content": "Done."}])),
    ("openai-chat", "t.jsonl", '{"role": "user", "content": "Fix the build."}\n{"role": "assistant", "content": "Done."}\n'),
])
def test_a_bom_is_ignored_by_the_importers(tmp_path, fmt, name, text):
    src = tmp_path / name
    src.write_text(BOM + text, encoding="utf-8")
    code, out, err = cli("import", fmt, str(src), "--out", str(tmp_path / "o.json"))
    assert code == 0 and "wrote" in out, err


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    out = tmp_path_factory.mktemp("base") / "run"
    code, _, err = cli("run", f"scenarios=[{WATCH}]", "strategies=[truncate]", "probes.enabled=false", f"out={out}")
    assert code == 0, err
    return out


def test_a_bom_is_ignored_by_compare_and_report(finished, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(finished, out)
    for name in ("summary.csv", "checks.csv", "config.yaml"):
        (out / name).write_text(BOM + (out / name).read_text(encoding="utf-8"), encoding="utf-8")
    code, stdout, err = cli("compare", str(finished), str(out))
    assert code == 0 and "no regression" in stdout, err
    code, stdout, err = cli("report", str(out))
    assert code == 0, err
    code, stdout, err = cli("run", f"scenarios=[{WATCH}]", "strategies=[truncate]", "probes.enabled=false",
                            f"out={out}")
    assert code == 0 and "1 of 1 cells already done" in err, err
