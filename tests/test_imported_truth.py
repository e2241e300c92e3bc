"""The truth derived for imported sessions (bench/importers/truth.py), on real transcripts: the oracle
keeps all of it while a strategy that drops all tool traffic loses the artifact trail; constraints are
cue-bearing sentences, not the user's first sentences; harness-made text is neither a constraint nor
the user's words; no key is a stop or filler word."""
from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest

from bench.scenarios import loader
from bench import units as U
from bench.cli import main as cli
from bench.scenarios.importers.truth import cue, derive_truth, descriptive
from bench.scenarios.validate import check
from bench.models import build
from bench.runner.cells import run_cell
from bench.runner.plan import plan
from bench.scoring.truth import first_sentence as user_words_of
from bench.harness.strategy import Strategy
from bench.text import harness_made, stop_word, substantive

from transcripts import CLAUDE, OPENHANDS, SWE, TAU, needs_data
FILLERS = {"really", "still", "just", "actually", "maybe", "please", "thing", "things", "something", "stuff", "anything"}


class DropTools(Strategy):
    """Keeps the user's, the assistant's and background messages; every tool result becomes a one-line
    placeholder. Never compacts otherwise."""

    def add(self, msg):
        if msg.role == "tool":
            msg = self.session.message(id=msg.id, role="tool", text="[tool output dropped]", tag="placeholder",
                                       call_id=msg.call_id, tool=msg.tool)
        self.messages.append(msg)


def imported(tmp_path: Path, fmt: str, src: Path, *extra: str) -> Path:
    out = tmp_path / f"{fmt}.json"
    assert cli(["import", fmt, str(src), "--out", str(out), *extra]) == 0
    return out


def replay(path: Path, out: Path, strategy: str = "full", target: str | None = None) -> dict:
    cells, _, _ = plan([f"scenarios=[{path}]", f"strategies=[{strategy}]", "probes.enabled=false"], False)
    c = cells[0]
    if target:
        c = dataclasses.replace(c, strategy="drop_tools", strategy_cfg={"_target_": target})
    return asyncio.run(run_cell(c, build(c.writer), out / c.strategy))


# (format, file, arguments, the fewest facts it must give): the SWE-agent session's one lasting artifact, its fix to
# fields.py, is reported only as "Text replaced." above a line count that names the file, so it gives no anchored fact
# (a file's line count alone is trivial; the reproduce.py it wrote is deleted again)
SESSIONS = [("claude-code", CLAUDE, (), 2), ("swe-agent", SWE, (), 0), ("openhands", OPENHANDS, ("--record", "0"), 2)]


@pytest.mark.parametrize("fmt, src, extra, facts", SESSIONS, ids=[s[0] for s in SESSIONS])
def test_the_oracle_keeps_the_truth_and_dropping_tool_traffic_loses_the_artifact_trail(tmp_path, fmt, src, extra, facts):
    if not src.exists():
        pytest.skip("shared transcripts not available")
    path = imported(tmp_path, fmt, src, *extra)
    s = loader.load(path)
    assert len(s.truth.facts) >= facts and s.truth.constraints and s.truth.mission
    assert facts or not s.truth.facts
    full = replay(path, tmp_path)
    assert full["constraint_fidelity"] == 1.0 and full["goal_retention"] == 1.0
    dropped = replay(path, tmp_path, target=f"{__name__}.DropTools")
    if facts:
        assert full["fact_retention"] == 1.0 and dropped["fact_retention"] <= full["fact_retention"] - 0.5, dropped
    assert dropped["constraint_fidelity"] == 1.0   # it kept every user message: only the artifact trail is gone


def test_claude_code_facts_are_the_files_written_not_the_failure_fixed_later(tmp_path):
    s = loader.load(imported(tmp_path, "claude-code", CLAUDE))
    events = {e.id: e for e in s.events}
    assert [tuple(f.keys) for f in s.truth.facts] == [
        ("middleware/rateLimit.ts", "File created successfully"),   # Write
        ("src/server.ts", "has been updated")]                      # the last of its two edits
    # the failing jest run ("ReferenceError: redis is not defined") is history: the same command passes later
    for f in s.truth.facts:
        source = events[f.from_]
        assert source.role == "tool" and U.cooccur(source.text, f.keys) and any(descriptive(k) for k in f.keys)


@needs_data
def test_constraints_and_user_words_measure_different_things(tmp_path):
    records = json.loads(TAU.read_text())
    index = next(i for i, r in enumerate(records) if r["task_id"] == 3)
    path = imported(tmp_path, "openai-chat", TAU, "--record", str(index))
    s = loader.load(path)
    firsts = {user_words_of(e.text) for e in s.events if e.role == "user"} - {""}
    quotes = {loader.normalize(c.quote) for c in s.truth.constraints}
    assert quotes and firsts and quotes != firsts and len(firsts) > len(quotes)
    row = replay(path, tmp_path, "truncate")
    assert row["compactions"] > 0
    assert abs(row["constraint_fidelity"] - row["user_words_retained"]) >= 0.05, row


HARNESS = [   # what Claude Code writes into user lines, with and without a list of blocks
    [{"type": "text", "text": "[Request interrupted by user]"}],
    "[Request interrupted by user for tool use]",
    "Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these "
    "messages or otherwise consider them in your response unless the user explicitly asks you to.",
    "<command-name>/model</command-name>\n            <command-message>model</command-message>\n            "
    "<command-args></command-args>",
    "<local-command-stdout>Set model to opus (claude-opus-4-1) and you must always answer in French</local-command-stdout>",
    "<bash-input>git status</bash-input>",
    "<bash-stdout>On branch main\nYour branch should be up to date, never rebase</bash-stdout><bash-stderr></bash-stderr>",
]
MIXED = [{"type": "text", "text": "<system-reminder>\nThe user opened src/app.ts. You should always read it first.\n"
                                  "</system-reminder>"},
         {"type": "text", "text": "Please never force-push to main."}]


def test_harness_made_text_is_neither_a_constraint_nor_the_users_words(tmp_path):
    lines = [json.loads(x) for x in CLAUDE.read_text().splitlines()]
    first = next(i for i, x in enumerate(lines) if x.get("type") == "user")
    stamp = lines[first]["timestamp"]
    extra = [{"type": "user", "timestamp": stamp, "message": {"role": "user", "content": c}} for c in HARNESS + [MIXED]]
    src = tmp_path / "session.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in lines[:first + 1] + extra + lines[first + 1:]) + "\n")
    s = loader.load(imported(tmp_path, "claude-code", src))
    harness = [e for e in s.events if e.role == "background" and e.source == "harness"]
    assert len(harness) == len(HARNESS)                       # the compact summary is the recorded compaction
    assert len(s.compactions) == 1 and s.compactions[0].installed[0].kind == "summary"
    users = [e for e in s.events if e.role == "user"]
    assert not any("interrupted" in e.text or "Caveat" in e.text or "<command-" in e.text or "<bash-" in e.text
                   or "<local-command" in e.text for e in users)
    quotes = " ".join(c.quote for c in s.truth.constraints)
    for word in ("interrupted", "Caveat", "DO NOT respond", "French", "git status", "never rebase", "read it first"):
        assert word not in quotes, word
    mixed = next(e for e in users if "force-push" in e.text)
    assert [(c.kind, c.quote) for c in s.truth.constraints if c.from_ == mixed.id] == [
        ("ban", "Please never force-push to main.")]
    # user_words_retained counts the user's messages only, by their first sentence of their own words
    words = [user_words_of(e.text) for e in users]
    assert user_words_of(mixed.text) == "please never force-push to main."
    assert not any("interrupted" in w or "caveat" in w or "should always read" in w for w in words)
    for text in HARNESS:
        flat = text if isinstance(text, str) else text[0]["text"]
        assert harness_made(flat) and not substantive(flat) and user_words_of(flat) == ""
    row = replay(tmp_path / "claude-code.json", tmp_path)
    assert row["user_words_retained"] == 1.0 and row["constraint_fidelity"] == 1.0


def test_an_evaluation_harness_auto_reply_is_not_the_user(tmp_path):
    auto = ("Please continue working on the task on whatever approach you think is suitable.\nIf you think you have "
            "solved the task, please first send your answer to user through message and then finish the interaction.\n"
            "IMPORTANT: YOU SHOULD NEVER ASK FOR HUMAN HELP.")
    src = tmp_path / "chat.json"
    src.write_text(json.dumps([{"role": "user", "content": "Fix the flaky login test. Never touch the CI config."},
                               {"role": "assistant", "content": "Looking."},
                               {"role": "user", "content": auto},
                               {"role": "assistant", "content": "Done."}]))
    s = loader.load(imported(tmp_path, "openai-chat", src))
    assert [e.role for e in s.events] == ["user", "assistant", "background", "assistant"]
    assert [c.quote for c in s.truth.constraints] == ["Never touch the CI config."]
    assert s.truth.mission[0].text == "Fix the flaky login test."


@needs_data
def test_every_key_of_every_real_session_means_something(tmp_path):
    out = tmp_path / "all"
    assert cli(["import", "openai-chat", str(TAU), "--all", "--out", str(out)]) == 0
    assert cli(["import", "openhands", str(OPENHANDS), "--all", "--out", str(out)]) == 0
    assert cli(["import", "swe-agent", str(SWE), "--out", str(out / "swe.json")]) == 0
    assert cli(["import", "claude-code", str(CLAUDE), "--out", str(out / "cc.json")]) == 0
    assert cli(["scenarios", "validate", str(out)]) == 0
    inspect = getattr(loader, "inspect", None)
    totals = {"constraints": 0, "facts": 0}
    for path in sorted(out.iterdir()):
        if inspect is not None:
            _, problems, warnings = inspect(path)
            assert not problems and not warnings, problems + warnings
        s = loader.load(path)
        events = {e.id: e for e in s.events}
        t = s.truth
        totals["constraints"] += len(t.constraints)
        totals["facts"] += len(t.facts)
        assert all(f.keys for f in t.facts)   # a constraint or mission may have none: then its quote / text counts
        for item in (*t.mission, *t.constraints, *t.facts):
            for k in item.keys:
                assert not stop_word(k) and k.casefold() not in FILLERS, (path.name, item)
        for c in t.constraints:
            src = events[c.from_]
            assert src.role == "user" and cue(c.quote) is not None, (path.name, c)
            assert not c.keys or U.cooccur(c.quote, c.keys), (path.name, c)
            assert loader.normalize(c.quote) in loader.normalize(src.text)
        for f in t.facts:
            src = events[f.from_]
            assert src.role == "tool" and U.cooccur(src.text, f.keys) and any(descriptive(k) for k in f.keys), f
        for m in t.mission:
            assert U.cooccur(events[m.from_].text, m.keys or (m.text,))
    # facts need an anchor and a misused editing tool is no fact; a question, a consent and a restatement are no
    # rule (issue 27): fewer, each about the work
    # (and an error the same command later gets past, a guessed path, a line count are no facts; tips under a heading,
    # "you don't have to", a one-off choice are no rules)
    assert totals["constraints"] >= 40 and totals["facts"] >= 15, totals


def test_later_tasks_are_workstream_items_and_later_requirements_constraints():
    """The user's later tasks are the items of one workstream (the task in hand is the position to keep), named as
    their message writes them; an approval of the agent's proposal is no task; a later requirement is a constraint."""
    events = [{"id": "u1", "role": "user", "text": "Refactor the billing loader."},
              {"id": "a1", "role": "assistant", "text": "Refactored the loader."},
              {"id": "u2", "role": "user", "text": "Now add a retry with exponential backoff to the billing client."},
              {"id": "a2", "role": "assistant", "text": "Shall I use 3 retries?"},
              {"id": "u3", "role": "user", "text": "Yes, please go ahead with that."},
              {"id": "a3", "role": "assistant", "text": "Added the retry."},
              {"id": "u4", "role": "user", "text": "Please move the PR-4411 fixtures into tests/data. "
                                                   "You must not touch the public API."},
              {"id": "a4", "role": "assistant", "text": "Moved the PR-4411 fixtures; PR-4411 is done."},
              {"id": "u5", "role": "user", "text": "Could you update the changelog for the release?"},
              {"id": "a5", "role": "assistant", "text": "Working on it."}]
    truth = derive_truth(events)
    assert [m["id"] for m in truth["mission"]] == ["m1"]
    (w,) = truth["workstreams"]
    assert w["from"] == "u2" and [(i["id"], i["from"], i.get("done")) for i in w["items"]] == [
        ("exponential backoff", "u2", None),      # no tool result shows any of them done: the user moving on
        ("PR-4411", "u4", None),                   # or the agent saying so is no proof (test_truth_roles)
        ("update the changelog", "u5", None)]
    # what each asks: the verb with its object, as its message writes it
    assert [i["task"] for i in w["items"]] == ["add a retry with exponential backoff to the billing client",
                                               "move the PR-4411 fixtures into tests/data",
                                               "update the changelog for the release"]
    assert all(0 < i["confidence"] < 1 for i in w["items"])
    assert [(c["from"], c["kind"]) for c in truth["constraints"]] == [("u4", "ban")]
    s, ck = check({"scenario": 1, "id": "t", "window": 4096, "system": "You are an agent.", "events": events,
                   "truth": truth})
    assert s is not None and not ck.problems and not ck.warnings    # the record shows where the tasks stand
