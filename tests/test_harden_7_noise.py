"""Issue 16, class 7: one root cause, one line. A single bad `t` once gave 247 lines, a missing `events`
key 16-35, an importer whose clock stepped back 46, and Hydra's wording leaked through for broken
overrides; each is now one line in our words (or no line at all, when the input is fine)."""
from __future__ import annotations

import json

import pytest

from harden import WATCH, cli, one_line, scenario

TEXT = WATCH.read_text()


def validate(tmp_path, data, name="s.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data) if name.endswith(".json") else data)
    return one_line(*cli("scenarios", "validate", str(path))[::2], str(path))


@pytest.mark.parametrize("where, t", [(0, 10 ** 9), (0, -5), (30, 0), (30, "soon"), (66, 1.0)])
def test_one_bad_t_is_one_line(tmp_path, where, t):
    data = scenario()
    data["events"][where]["t"] = t
    line = validate(tmp_path, data)
    assert ".t: " in line


def test_a_missing_events_key_is_one_line(tmp_path):
    data = scenario()
    del data["events"]
    assert "missing required key 'events'" in validate(tmp_path, data)


def test_events_that_are_not_a_list_is_one_line(tmp_path):
    assert "events: must be a list" in validate(tmp_path, scenario(events={"u1": "hi"}))


def test_a_renamed_event_is_one_line_for_all_its_references(tmp_path):
    text = json.dumps(scenario()).replace('"u1"', '"u1x"', 1)     # the event only, not what cites it
    line = validate(tmp_path, json.loads(text))
    assert "unknown event 'u1'" in line and "also named by" in line


def test_an_invalid_event_is_not_also_reported_through_its_references(tmp_path):
    data = scenario()
    data["events"][0]["role"] = "human"            # u1: cited by missions, constraints ...
    assert "unknown role 'human'" in validate(tmp_path, data)


def test_a_result_of_an_invalid_assistant_event_is_one_line(tmp_path):
    data = scenario()
    data["events"][1]["role"] = "asistant"          # a1 holds call c1, answered by r1
    assert "unknown role 'asistant'" in validate(tmp_path, data)


def test_an_event_with_a_wrong_text_is_not_judged_by_the_truth(tmp_path):
    data = scenario()
    data["events"][0]["text"] = ["Fix the three flaky tests"]
    assert "events.u1.text: must be a string" in validate(tmp_path, data)


def test_an_id_used_twice_judges_truth_by_the_first_event(tmp_path):
    data = scenario()
    data["events"][5]["id"] = "u1"
    line = validate(tmp_path, data)
    assert "duplicate event id 'u1'" in line


CLOCKS = {   # importer transcripts whose clock steps back before the first kept event
    "claude-code": ("s.jsonl", [
        {"type": "system", "subtype": "init", "timestamp": "2030-01-01T00:00:00Z"},
        {"type": "user", "timestamp": "2025-01-01T00:00:00Z", "message": {"role": "user", "content": "Fix it, never touch main."}},
        {"type": "assistant", "timestamp": "2025-01-01T00:00:05Z",
         "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "On it."}]}},
        {"type": "user", "timestamp": "2025-01-01T00:00:01Z", "message": {"role": "user", "content": "Thanks."}},
        {"type": "assistant", "timestamp": "2025-01-01T00:00:09Z",
         "message": {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "Done."}]}}]),
    "openhands": ("s.jsonl", [{"instance_id": "x", "history": [
        {"id": 0, "action": "recall", "source": "agent", "timestamp": "2030-01-01T00:00:00", "args": {}},
        {"id": 1, "action": "message", "source": "user", "timestamp": "2025-01-01T00:00:00",
         "args": {"content": "Fix it, never touch main."}},
        {"id": 2, "action": "message", "source": "agent", "timestamp": "2025-01-01T00:00:04",
         "args": {"content": "On it."}},
        {"id": 3, "action": "finish", "source": "agent", "timestamp": "2025-01-01T00:00:02",
         "args": {"final_thought": "Done."}}]}]),
}


@pytest.mark.parametrize("fmt", list(CLOCKS))
def test_a_clock_that_steps_back_imports_cleanly(tmp_path, fmt):
    name, lines = CLOCKS[fmt]
    src = tmp_path / name
    src.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    code, out, err = cli("import", fmt, str(src), "--out", str(tmp_path / "o.json"))
    assert code == 0 and err == "", err
    times = [e["t"] for e in json.loads((tmp_path / "o.json").read_text())["events"] if "t" in e]
    assert times and times[0] == 0 and times == sorted(times)


OVERRIDES = {   # override -> what its one line says, in our words
    "=": "'=' is not KEY=VALUE",
    "a.b.c": "'a.b.c' is not KEY=VALUE",
    "strategies=[naive": "strategies=[naive: its brackets do not match",
    "strategies='naive": "a quote is not closed",
    "cache=unknown": "cache=unknown: no such cache (one of anthropic, deepseek, gemini, none, openai",
    "suite=nope": "suite=nope: no such suite (one of default, library, quick, smoke",
    "cache=": "no such cache",
    "nosuchkey=1": "unknown key 'nosuchkey'",
}


@pytest.mark.parametrize("override", list(OVERRIDES))
def test_a_broken_override_is_one_line_in_our_words(tmp_path, override):
    line = one_line(*cli("run", override, f"out={tmp_path / 'r'}")[::2], "overrides:")
    assert OVERRIDES[override] in line, line
    assert not (tmp_path / "r").exists()


def test_a_broken_sweep_is_one_line(tmp_path):
    line = one_line(*cli("run", "-m", "window=1000,,2000", f"out={tmp_path / 'r'}")[::2], "overrides:")
    assert "window=1000,,2000: cannot read it as KEY=VALUE" in line
