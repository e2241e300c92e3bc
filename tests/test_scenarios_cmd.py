"""`scenarios list` and `scenarios generate` on odd input: a row cache of the wrong shape, a
scenario that cannot be rendered, an unwritable --out. Bad input is one line and exit 2."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.cli import main as cli

ROOT = Path(__file__).resolve().parent.parent
HAND = ROOT / "src" / "bench" / "scenarios" / "hand"
ONE = sorted(HAND.glob("*.yaml"))[0]


def cache_file(tmp_path: Path) -> Path:
    return tmp_path / "compaction-bench" / "scenario-rows.json"


@pytest.mark.parametrize("content", [
    [1, 2], "rows", 5, None, {"k": 5}, {"k": [1]},
    "ROW:{}",                                                   # the file's own key, an empty row
    'ROW:{"stamp": "now"}',
    'ROW:{"stamp": STAMP, "id": "x"}',                          # current stamp, keys missing
    'ROW:{"stamp": STAMP, "id": "x", "tags": "a", "events": 1, "tokens": 1, "system": 1, "window": 1, "title": "t"}',
])
def test_list_treats_a_wrong_shaped_cache_as_empty(tmp_path, monkeypatch, capsys, content):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache_file(tmp_path).parent.mkdir(parents=True)
    if isinstance(content, str) and content.startswith("ROW:"):
        st = ONE.stat()
        row = content[4:].replace("STAMP", json.dumps([st.st_mtime_ns, st.st_size]))
        text = json.dumps({str(ONE.resolve()): json.loads(row)})
    else:
        text = json.dumps(content)
    cache_file(tmp_path).write_text(text)
    assert cli(["scenarios", "list", str(ONE)]) == 0
    out = capsys.readouterr().out
    assert "1 scenarios" in out and not any(line.startswith("x ") for line in out.splitlines())
    rows = json.loads(cache_file(tmp_path).read_text())
    assert rows[str(ONE.resolve())]["tokens"] > 0                # rewritten with a real row


def test_list_reports_a_scenario_it_cannot_render_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    bad = tmp_path / "date.yaml"
    bad.write_text("scenario: 1\nid: date-args\nuser: Dana\nwindow: 100000\nsystem: You are an agent.\nevents:\n"
                   "  - {id: u1, role: user, text: Schedule it.}\n"
                   "  - {id: a1, role: assistant, text: ok, calls: [{id: c1, tool: cal, args: {when: 2024-01-01}}]}\n"
                   "  - {id: r1, role: tool, call: c1, text: done}\n"
                   "  - {id: a2, role: assistant, text: done}\n")
    assert cli(["scenarios", "list", str(bad), str(ONE)]) == 2       # rejected by the validator or by list
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(str(bad)), err


def test_list_survives_rows_that_are_not_json_and_render_errors(tmp_path, monkeypatch, capsys):
    """Whatever the validator lets through: a render error is one line, a row the cache cannot
    serialise only costs the cache."""
    from bench.cli import scenarios as scenarios_cmd

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(scenarios_cmd, "scenario_tokens", lambda s: (_ for _ in ()).throw(TypeError("no")))
    assert cli(["scenarios", "list", str(ONE)]) == 2
    assert capsys.readouterr().err.strip() == f"{ONE}: cannot render the scenario to count its tokens: no"
    monkeypatch.setattr(scenarios_cmd, "scenario_tokens", lambda s: 10)
    real = scenarios_cmd.list_row
    monkeypatch.setattr(scenarios_cmd, "list_row", lambda path, cache: {**real(path, cache), "extra": object()}
                        if cache.setdefault("odd", {1, 2}) else None)
    assert cli(["scenarios", "list", str(ONE)]) == 0
    assert "1 scenarios" in capsys.readouterr().out


def test_generate_to_an_unwritable_out_is_one_line(tmp_path, capsys):
    assert cli(["scenarios", "generate", "--out", "/proc/no/x", "--only", "injection-16k", "--scale", "0.01"]) == 2
    assert capsys.readouterr().err.strip() == "--out: cannot create the directory /proc/no/x: No such file or directory"
    (tmp_path / "file").write_text("")
    assert cli(["scenarios", "generate", "--out", str(tmp_path / "file"), "--only", "injection-16k", "--scale", "0.01"]) == 2
    assert "--out: cannot create the directory" in capsys.readouterr().err


WARNED = """\
scenario: 1
id: warned
user: Dana
window: 1000
system: You are Dana's agent.
events:
  - {id: u1, role: user, text: "Review #1 then #2. Only come to me for sign-off."}
  - {id: a1, role: assistant, text: "Looking at #1."}
truth:
  constraints: [{id: k1, from: u1, kind: reporting, quote: "Only come to me for sign-off", keys: [sign-off]}]
probes:
  - {id: p1, at: a1, kind: constraint, ask: "When do you ask for sign-off?", expect: ["sign-off"]}
"""


def test_validate_prints_warnings_as_lines_and_exits_0(tmp_path, capsys):
    path = tmp_path / "warned.yaml"
    path.write_text(WARNED)
    assert cli(["scenarios", "validate", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == f"ok {path}: warned, 2 events, 1 warning"
    assert err.strip() == (f"{path}:12: probes[0].expect: warning: expected term 'sign-off' appears in the question, so an "
                           f"answer can pass without knowing anything: reword the question or expect another term")


def test_validate_strict_and_bundled_files_exit_2_on_warnings(tmp_path, capsys, monkeypatch):
    from bench.scenarios import loader

    path = tmp_path / "warned.yaml"
    path.write_text(WARNED)
    assert cli(["scenarios", "validate", "--strict", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip().startswith(f"{path}:12: probes[0].expect: warning: expected term 'sign-off'")
    monkeypatch.setattr(loader, "BUNDLED", (tmp_path,))
    assert cli(["scenarios", "validate", str(path)]) == 2
    assert capsys.readouterr().err.strip().endswith("(bundled scenarios are held to warnings)")


def test_validate_errors_are_one_line_each_never_a_traceback(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(WARNED.replace("truth:\n", "truth:\n  facts: [{id: f1, from: u1, keys: ['#1', 'sign-off']}]\n"
                                   "  workstreams: [{id: w1, from: u1, title: q, items: [{id: '#1'}, {id: '#9'}]}]\n")
                    .replace("#2. Only", "#2.\\nOnly"))
    assert cli(["scenarios", "validate", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"{path}:10: truth.facts[0].keys: keys '#1', 'sign-off' never occur together in one unit (a sentence, "
                   f"a line, or a bullet with its heading) of event u1's text, so no context can keep this fact",
                   f"{path}:11: truth.workstreams[0].items[1].id: item id '#9' occurs in no event's text (as a whole "
                   f"token), so no context can ever say where the work stands on it"]


def test_validate_passes_on_the_bundled_scenarios(capsys):
    assert cli(["scenarios", "validate", str(ROOT / "src" / "bench" / "scenarios")]) == 0
    out, err = capsys.readouterr()
    assert err == "" and len(out.splitlines()) >= 15 and all(line.startswith("ok ") for line in out.splitlines())
