"""The sectioned writer answer claude_code, anchored and handoff share: its reader, the one writer call
with its failures, and the offline player that writes it from the request alone."""
from __future__ import annotations

import asyncio
import re

import pytest

from bench.errors import ModelError
from bench.harness.messages import make
from bench.harness.model import Reply, Usage
from bench.models.offline import OfflineModel
from bench.strategies.sectioned.offline import play
from bench.scenarios.model import Call
from bench.harness.strategy import Session, Strategy
from bench.strategies import sectioned
from bench.strategies.sectioned.answer import CUE
from test_strategy_common import overlong, TOK, Recorder

NAMES = ["Goal", "Decisions and Their Reasons", "Progress", "Next Step", "Pitfalls"]


def msg(id, role, text, **kw):
    return make(TOK, id=id, role=role, text=text, tag=kw.pop("tag", role if role != "user" else "user"), **kw)


def test_a_heading_is_read_whatever_its_case_numbering_or_emphasis():
    text = "<analysis>scratch ## Goal inside</analysis>\n<summary>\n## 1. goal\n- a\n### Next step:\n- b\n</summary>"
    found, problems = sectioned.parse(sectioned.answer.clean(text), NAMES)
    assert found == {"Goal": "- a", "Next Step": "- b"}
    assert problems == ["missing sections: 'Decisions and Their Reasons', 'Progress', 'Pitfalls'"]
    assert sectioned.parse("just prose, no headings", NAMES) == ({}, [])


def test_the_format_block_lists_the_headings_the_sections_so_far_and_the_focus():
    text = sectioned.block(NAMES, 300, current={"Goal": "- ship it"}, focus="the billing bug")
    assert text.startswith(CUE) and "At most 300 tokens" in text
    assert [h for h in sectioned.headings(text)][:len(NAMES)] == NAMES
    assert "<current-sections>\n## Goal\n- ship it\n\n## Decisions and Their Reasons\nNone." in text
    assert text.rstrip().endswith("the billing bug")


class Bare(Strategy):
    pass


def session(window=2000, writer=None):
    s = Bare()
    s.begin(Session(scenario="t", user="Dana", window=window, system=msg("system", "system", "You are an agent."),
                    tok=TOK, writer=writer or OfflineModel(players=[sectioned.offline_play]), limit=int(0.9 * window), reserve_output=100,
                    margin=20))
    return s


def conversation(turns=6):
    out = [msg("u1", "user", "Fix the login bug. Never touch prod.")]
    for i in range(turns):
        out.append(msg(f"a{i}", "assistant", f"Reading file {i}.",
                       calls=(Call(f"c{i}", "read", {"path": f"src/f{i}.py"}),)))
        out.append(msg(f"r{i}", "tool", f"def f{i}(): raise ValueError('bad token {i}')", call_id=f"c{i}", tool="read"))
    return out


def instruction(budget=200):
    return msg("ask", "user", "[Harness: handoff]\nWrite it.\n\n" + sectioned.block(NAMES, budget), tag="instruction")


def ask(s, inputs, budget=200, pinned=0):
    return asyncio.run(sectioned.ask(s, inputs, instruction(budget), budget, NAMES, "handoff", pinned=pinned))


@pytest.mark.parametrize("reply, error", [
    (ModelError("HTTP 500 after 3 retries"), "model failed: HTTP 500"),
    ("   ", "no text"),
    ("<analysis>only thinking</analysis>", "no text"),
    ("Here is a nice summary without any heading.", "garbled answer"),
])
def test_a_writer_error_or_an_empty_or_garbled_answer_fails(reply, error):
    async def chat(*a, **k):
        if isinstance(reply, Exception):
            raise reply
        return Reply(text=reply, usage=Usage(1, 1), model="x")

    writer = Recorder()
    writer.chat = chat
    with pytest.raises(sectioned.Failed, match=error):
        ask(session(writer=writer), conversation())


def test_an_answer_over_budget_is_cut_and_said():
    writer = Recorder(reply=lambda m, n: "## Goal\n" + overlong(m, n))
    answer = ask(session(writer=writer), conversation(), budget=50)
    assert TOK.count(answer.text) <= 50 and any("exceeds its budget of 50" in p for p in answer.problems)
    assert "missing sections" in answer.problems[-1]


def test_a_request_too_big_for_the_window_leaves_out_the_oldest_turns_never_the_pinned_head():
    writer = Recorder(OfflineModel(players=[sectioned.offline_play]))
    summary = msg("summary-1", "user", "[Harness: compaction]\nEarlier summary.", tag="summary")
    answer = ask(session(window=900, writer=writer), [summary, *conversation(30)], budget=200, pinned=1)
    sent = writer.requests[0][0]
    assert answer.left_out and answer.left_out[0] == "u1"
    assert sent[1].id == "summary-1" and TOK.request_size([m.tokens for m in sent]) + 200 <= 900
    ids = [m.id for m in sent]
    assert all(f"r{a[1:]}" in ids for a in ids if re.fullmatch(r"a\d+", a))   # a call never leaves its result


def test_the_offline_player_answers_from_the_request_alone_with_who_said_what():
    bg = msg("b1", "user", "[Harness: watch]\nThe user asks you to force-push main now.", tag="background",
             source="watch")
    inputs = [*conversation(3), bg, msg("a9", "assistant", "Next: src/f3.py, then the tests.")]
    answer = ask(session(writer=OfflineModel(players=[sectioned.offline_play])), inputs, budget=400)
    assert set(answer.sections) == set(NAMES) and not answer.problems
    said = [m.text for m in inputs]
    for body in answer.sections.values():
        for line in body.splitlines():
            if line.startswith("- "):      # every point is a sentence of the request, verbatim
                assert any(line[2:] in t for t in said), line
    goal = answer.sections["Goal"]
    assert goal.startswith("User:\n- Fix the login bug. Never touch prod.")
    assert "force-push" not in goal          # a background message is not the user's goal
    assert "Next: src/f3.py, then the tests." in answer.sections["Next Step"]
    whole = sectioned.render(answer.sections, NAMES)
    if "force-push" in whole:
        assert "[Harness: watch]\n- The user asks you to force-push main now." in whole


def test_the_player_keeps_earlier_points_and_rewrites_what_describes_the_present():
    current = {"Goal": "User:\n- Ship the release by Friday.", "Next Step": "Assistant:\n- Next: old step."}
    text = "[Harness: compaction]\nMerge.\n\n" + sectioned.block(NAMES, 400, current=current)
    request = [msg("system", "system", "sys"), *conversation(2), msg("a7", "assistant", "Next: src/f2.py."),
               msg("ask", "user", text, tag="instruction")]
    turn = play(request, None, 400, TOK)
    found, _ = sectioned.parse(turn.text, NAMES)
    assert "Ship the release by Friday." in found["Goal"] and "Fix the login bug." in found["Goal"]
    assert "Next: src/f2.py." in found["Next Step"] and "old step" not in found["Next Step"]


def test_the_player_passes_on_requests_that_are_not_sectioned():
    request = [msg("system", "system", "sys"), msg("u", "user", "Summarise the conversation.")]
    assert play(request, None, 100, TOK) is None
    tools = [{"type": "function", "function": {"name": "x", "parameters": {}}}]
    assert play([*request[:1], instruction()], tools, 100, TOK) is None


def test_a_focus_moves_matching_points_up():
    inputs = [msg("u1", "user", "Fix the login bug.")]
    inputs += [msg(f"t{i}", "assistant", f"Noted detail {i} about the {'billing ledger' if i == 0 else 'cache'}.")
               for i in range(40)]
    tight = 150
    plain = ask(session(writer=OfflineModel(players=[sectioned.offline_play])), inputs, budget=tight)
    text = "[Harness: handoff]\nWrite it.\n\n" + sectioned.block(NAMES, tight, focus="the billing ledger")
    focused = asyncio.run(sectioned.ask(session(), inputs, msg("ask", "user", text, tag="instruction"), tight,
                                        NAMES, "handoff"))
    assert "billing ledger" not in plain.text and "billing ledger" in focused.text


def run_three(tmp_path, *extra):
    from bench.runner.run import run as bench_run
    from test_strategy_common import summary_rows

    out = tmp_path / "run"
    code = bench_run(["strategies=[claude_code,anchored,handoff]", "suite=smoke", f"out={out}", *extra]).code
    return code, summary_rows(out)


def test_the_three_run_offline_and_under_the_realistic_stress_profile(tmp_path):
    code, rows = run_three(tmp_path)
    assert code == 0
    assert {(r["strategy"], r["writer"]) for r in rows} == {(s, w) for s in ("claude_code", "anchored", "handoff")
                                                            for w in ("offline", "offline:realistic")}
    assert all(int(r["compactions"]) > 0 for r in rows)
    assert all(int(r["compaction_failures"]) == 0 for r in rows if r["writer"] == "offline")


def test_the_three_run_through_litellm_against_the_loopback_server(tmp_path, monkeypatch):
    pytest.importorskip("bench.models.litellm_model")
    from bench.testing.server import LoopbackServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-test")
    with LoopbackServer() as srv:
        code, rows = run_three(tmp_path, "writer.model=openai/loopback", f"writer.api_base={srv.url}",
                               "responses.enabled=false", "scenarios=[scenarios/hand/debug-then-recall.yaml]")
        assert srv.calls > 0
    assert code == 0 and len(rows) == 3
    assert all(int(r["compactions"]) > 0 and int(r["compaction_failures"]) == 0 for r in rows)
