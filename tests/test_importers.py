"""Importers on the real transcripts in shared/data/transcripts and the Claude Code fixture:
valid scenarios whose message counts match the source, derived truth, clean errors."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from bench.scenarios import loader
from bench.cli import main as cli
from bench.scenarios.importers.common import derive_truth, first_sentence, kind_of, substantive
from bench.scenarios.importers.truth import cue
from bench.text import harness_made

from transcripts import CLAUDE, OPENHANDS, SWE, TAU, needs_data


def roles(path: Path) -> Counter:
    s = loader.load(path)
    assert "imported" in s.tags and s.window >= 4096
    return Counter(e.role for e in s.events)


@needs_data
def test_tau_bench_all_records(tmp_path, capsys):
    assert cli(["import", "openai-chat", str(TAU), "--all", "--out", str(tmp_path)]) == 0
    records = json.loads(TAU.read_text())
    files = sorted(tmp_path.iterdir())
    assert len(files) == len(records)
    for rec in records:
        got = roles(tmp_path / f"tau-bench-airline-gpt-4o-task-{rec['task_id']}.json")
        src = Counter(m["role"] for m in rec["traj"])
        stops = sum(m["role"] == "user" and harness_made(m["content"]) for m in rec["traj"])   # a bare ###STOP###
        assert (got["user"], got["assistant"], got["tool"]) == (src["user"] - stops, src["assistant"], src["tool"])
        assert got["background"] == stops


@needs_data
def test_tau_bench_one_record_needs_a_choice(tmp_path, capsys):
    out = tmp_path / "one.yaml"
    assert cli(["import", "openai-chat", str(TAU), "--out", str(out)]) == 2
    assert "--record N" in capsys.readouterr().err
    assert cli(["import", "openai-chat", str(TAU), "--record", "99", "--out", str(out)]) == 2
    assert "holds 24 sessions" in capsys.readouterr().err
    assert cli(["import", "openai-chat", str(TAU), "--record", "2", "--window", "6000", "--user", "Sofia", "--out", str(out)]) == 0
    s = loader.load(out)
    assert s.window == 6000 and s.user == "Sofia" and s.truth.constraints


@needs_data
def test_swe_agent(tmp_path):
    out = tmp_path / "swe.json"
    assert cli(["import", "swe-agent", str(SWE), "--out", str(out)]) == 0
    history = json.loads(SWE.read_text())["history"]
    src = Counter(m["role"] for m in history)
    got = roles(out)
    assert (got["user"], got["assistant"], got["tool"]) == (src["user"], src["assistant"], src["tool"])
    s = loader.load(out)
    assert s.system.startswith("SETTING:")
    # SWE-agent replays reuse call ids; each result still answers exactly one call
    assert len({e.call for e in s.events if e.role == "tool"}) == src["tool"]


@needs_data
def test_openhands_all_tasks(tmp_path):
    assert cli(["import", "openhands", str(OPENHANDS), "--all", "--out", str(tmp_path)]) == 0
    for line in OPENHANDS.read_text().splitlines():
        rec = json.loads(line)
        hist = rec["history"]
        users = sum(1 for e in hist if e.get("source") == "user" and e.get("action") == "message")
        agent = sum(1 for e in hist if e.get("source") == "agent" and e.get("action") not in (None, "system", "recall"))
        results = sum(1 for e in hist if "observation" in e and e["observation"] != "recall" and e.get("cause") is not None)
        orphans = sum(1 for e in hist if "observation" in e and e["observation"] != "recall" and e.get("cause") is None)
        slug = rec["instance_id"].replace("__", "-").replace("_", "-")
        got = roles(tmp_path / f"openhands-multi-swe-bench-output-{slug}.json")
        assert (got["user"], got["assistant"], got["tool"], got["background"]) == (users, agent, results, orphans)


def test_claude_code_fixture(tmp_path):
    out = tmp_path / "cc.yaml"
    assert cli(["import", "claude-code", str(CLAUDE), "--out", str(out)]) == 0
    lines = [json.loads(x) for x in CLAUDE.read_text().splitlines()]
    main = [x for x in lines if not x.get("isSidechain")]
    typed = [x for x in main if x.get("type") == "user" and isinstance(x["message"]["content"], str)]
    results = [b for x in main if x.get("type") == "user" and isinstance(x["message"]["content"], list)
               for b in x["message"]["content"] if b.get("type") == "tool_result"]
    assistant_ids = {x["message"]["id"] for x in main if x.get("type") == "assistant"}
    got = roles(out)
    assert got["background"] == 0                       # the compact_boundary summary is the recorded compaction
    assert got["user"] == len(typed) - 1
    assert got["tool"] == len(results) and got["assistant"] == len(assistant_ids)
    s = loader.load(out)
    texts = " ".join(e.text for e in s.events)
    assert "Searching." not in texts                    # the sidechain is skipped
    (rc,) = s.compactions
    assert (rc.trigger, rc.pre_tokens, rc.installed[0].kind) == ("auto", 167342, "summary")
    assert rc.installed[0].text.startswith("This session is being continued")
    calls = {c.id for e in s.events for c in e.calls}
    assert {e.call for e in s.events if e.role == "tool"} == calls
    # only cue-bearing sentences are constraints: not "continue", "ok", the paste, nor the request itself
    assert [(c.from_, c.kind, c.quote) for c in s.truth.constraints] == [
        ("u1", "ban", "Don't touch anything under legacy/, that code is frozen until the v3 cutover."),
        ("u5", "authorization", "You may commit to feat/rate-limit yourself, but never push; I'll open the PR."),
        ("u5", "must", "Also please use conventional commit messages.")]
    assert s.truth.mission[0].text.startswith("Add per-client rate limiting")


def test_derived_truth_rules():
    assert not substantive("continue") and not substantive("OK") and not substantive("$ ls\nsrc tests\n$ pwd\n/app")
    assert substantive("Never push to main, I will open the PR myself.")
    assert first_sentence("Hi! I need to change my flight back to Houston on May 27. Thanks!") == \
        "I need to change my flight back to Houston on May 27."
    assert first_sentence("Thank you so much for your help!") is None
    assert first_sentence("<uploaded_files>\n/workspace/repo\n</uploaded_files>\nI've uploaded a repository here.") == \
        "I've uploaded a repository here."
    assert kind_of("Don't touch legacy/.") == "ban"
    assert kind_of("You may merge docs PRs yourself.") == "authorization"
    assert kind_of("Let me know when CI is green.") == "reporting"
    assert kind_of("I'd rather keep REST.") == "preference"
    assert kind_of("Make sure the tests pass.") == kind_of("Always run the linter first.") == "must"
    for plain in ("I don't remember the reservation ID.", "I need to change my flight.", "Refactor the loader.",
                  "My profile should be under ivan_7015.", "I'll make sure to find my user ID."):
        assert cue(plain) is None, plain
    events = [{"id": "u1", "role": "user", "text": "Refactor the loader. Don't change the public API."},
              {"id": "b1", "role": "background", "source": "watch", "text": "The user asks you to never deploy now."},
              {"id": "u2", "role": "user", "text": "ok"}]
    truth = derive_truth(events)
    assert [(c["from"], c["quote"]) for c in truth["constraints"]] == [("u1", "Don't change the public API.")]
    assert truth["mission"][0]["text"] == "Refactor the loader." and "facts" not in truth


def test_bad_input_is_one_line_per_problem(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "user", "message": {"role": "user", "content": "hi there you"}}\n{oops\n[1,\n')
    assert cli(["import", "claude-code", str(bad), "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and err[0].startswith(f"{bad}:2: not valid JSON")
    assert cli(["import", "swe-agent", str(CLAUDE), "--out", str(tmp_path / "x.json")]) == 2
    assert "not a SWE-agent trajectory" in capsys.readouterr().err
    assert cli(["import", "openai-chat", str(tmp_path / "missing.json"), "--out", str(tmp_path / "x.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    msgs = tmp_path / "m.json"
    msgs.write_text(json.dumps([{"role": "user", "content": "Fix the build please now."}, {"role": "robot", "content": "?"}]))
    assert cli(["import", "openai-chat", str(msgs), "--out", str(tmp_path / "x.json")]) == 2
    assert "message 1: unknown role 'robot'" in capsys.readouterr().err
    nothing = tmp_path / "n.json"
    nothing.write_text(json.dumps([{"role": "user", "content": "Fix the build please now."}]))
    assert cli(["import", "openai-chat", str(nothing), "--out", str(tmp_path / "x.json")]) == 2
    assert "no assistant message" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


CALL_OK = {"role": "tool", "tool_call_id": "c1", "content": "out"}
USER = {"role": "user", "content": "Fix the build please now."}
MALFORMED = [   # (format, file content, what the one problem line must say)
    ("openai-chat", [USER, {"role": "assistant", "content": "x", "tool_calls": ["x"]}],
     "message 1: tool_calls[0]: expected a mapping with a 'function' mapping, got a string"),
    ("openai-chat", [USER, {"role": "assistant", "content": "x", "tool_calls": [{"id": "c1", "function": "run"}]}, CALL_OK],
     "message 1: tool_calls[0]: expected a mapping with a 'function' mapping, got 'function' as a string"),
    ("openai-chat", [USER, {"role": "assistant", "content": "x", "tool_calls": 5}], "message 1: tool_calls: expected a list"),
    ("openai-chat", [USER, {"role": "assistant", "content": "x", "tool_calls": [{"id": "c1", "function": {"name": [1]}}]},
                     CALL_OK], "message 1: tool_calls[0].function.name: expected a tool name (a string), got a list"),
    ("openai-chat", [USER, {"role": "assistant", "content": "x", "function_call": "f"}], "message 1: function_call: expected a mapping"),
    ("openai-chat", [{"task_id": 1, "traj": [USER, {"role": "assistant", "tool_calls": [7]}]}],
     "record 0: message 1: tool_calls[0]: expected a mapping with a 'function' mapping, got a number"),
    ("swe-agent", {"history": [USER, {"role": "assistant", "content": "x", "tool_calls": ["x"]}]},
     "history[1]: tool_calls[0]: expected a mapping with a 'function' mapping, got a string"),
    ("swe-agent", {"history": [USER, {"role": "assistant", "content": "x", "tool_calls": {"id": "c1"}}]},
     "history[1]: tool_calls: expected a list of calls, got a mapping"),
    ("swe-agent", {"history": [USER, {"role": "tool", "content": "out", "tool_call_ids": {"a": 1}}]},
     "history[1]: tool_call_ids: expected a list of call ids, got a mapping"),
    ("openhands", [{"id": 1, "action": "run", "source": "agent", "args": {"command": "ls"}, "tool_call_metadata": "bash"},
                   {"id": 2, "observation": "run", "cause": 1, "content": "out"}],
     "history[0]: tool_call_metadata: expected a mapping, got a string"),
    ("openhands", [{"id": 1, "action": "run", "source": "agent", "args": {"command": "ls"}},
                   {"id": 2, "observation": "run", "cause": [1], "content": "out"}],
     "history[1]: cause: expected an event id (a string or number), got a list"),
    ("openhands", [{"instance_id": "t", "history": [{"id": {"x": 1}, "action": "run", "source": "agent", "args": {}},
                                                    {"id": 2, "observation": "run", "cause": 1, "content": "out"}]}],
     "record 0: history[0]: id: expected an event id (a string or number), got a mapping"),
]


@pytest.mark.parametrize("fmt, content, says", MALFORMED, ids=[f"{f}-{i}" for i, (f, _, _) in enumerate(MALFORMED)])
def test_wrong_shaped_records_are_one_line_bad_input(tmp_path, capsys, fmt, content, says):
    src = tmp_path / "in.json"
    src.write_text(json.dumps(content))
    assert cli(["import", fmt, str(src), "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(str(src)) and says in err[0], err
    assert not (tmp_path / "x.json").exists()


def test_unwritable_out_undecodable_text_and_deep_nesting_are_bad_input(tmp_path, capsys):
    src = tmp_path / "in.json"
    src.write_text(json.dumps([USER, {"role": "assistant", "content": "ok"}]))
    assert cli(["import", "openai-chat", str(src), "--out", "/proc/no/x.yaml"]) == 2
    assert capsys.readouterr().err.strip() == "/proc/no/x.yaml: cannot write: No such file or directory"
    (tmp_path / "file").write_text("")
    assert cli(["import", "openai-chat", str(src), "--out", str(tmp_path / "file" / "x.json")]) == 2
    assert "cannot write" in capsys.readouterr().err
    src.write_text('[{"role": "user", "content": "Fix the \\ud800 build please."}, {"role": "assistant", "content": "ok"}]')
    assert cli(["import", "openai-chat", str(src), "--out", str(tmp_path / "x.json")]) == 2
    assert "$[0].content: text holds a lone UTF-16 surrogate" in capsys.readouterr().err
    src.write_text("[" * 100_000)
    assert cli(["import", "openai-chat", str(src), "--out", str(tmp_path / "x.json")]) == 2
    assert "nested too deeply" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def test_calls_made_together_are_equivalent_next_actions(tmp_path):
    """An imported session's next action is graded against its own calls (issue 24's machinery): where the agent
    made several calls at once, any of them first is as right as the one the log put first."""
    from bench.scoring.checks import Judge
    from bench.scoring.continuation import Script
    from bench.scenarios.model import Call
    from bench.tokens import tokenizer

    def call(i, path):
        return {"id": f"t{i}", "type": "function", "function": {"name": "read", "arguments": json.dumps({"path": path})}}
    msgs = [{"role": "user", "content": "Fix the flaky test in tests/test_api.py."},
            {"role": "assistant", "content": "Reading both.", "tool_calls": [call(1, "a.py"), call(2, "b.py")]},
            {"role": "tool", "tool_call_id": "t1", "content": "a"}, {"role": "tool", "tool_call_id": "t2", "content": "b"},
            {"role": "assistant", "content": "Done."}]
    src = tmp_path / "s.json"
    src.write_text(json.dumps(msgs))
    assert cli(["import", "openai-chat", str(src), "--out", str(tmp_path / "s.out.json")]) == 0
    s = loader.load(tmp_path / "s.out.json")
    a1 = s.events[s.index()["a1"]]
    assert [(e.tool, e.args) for e in a1.equivalent] == [("read", {"path": "b.py"})]
    script = Script(Judge(s, tokenizer()))
    pos = s.index()["a1"]
    assert script.classify(Call("x", "read", {"path": "b.py"}), pos) == "exact"
    assert script.classify(Call("x", "read", {"path": "a.py"}), pos) == "exact"
    assert script.classify(Call("x", "read", {"path": "c.py"}), pos) == "other"
