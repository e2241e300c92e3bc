"""Rollouts and the tokens-per-task ledger (issue 24, items 3, 4): a re-read of a result a compaction dropped
costs exactly that result's tokens, an unknown call gets a marked stub and a repeated one counts as a loop,
the break-even request, and the ledger's lines adding up to the cell's totals in a real run."""
from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace

from bench.cli import main
from bench.harness.messages import make
from bench.scenarios.loader import check
from bench.scenarios.model import Call
from bench.scoring.actor import PROMPT, offline_actor
from bench.scoring.checks import Judge
from bench.scoring.continuation import Answer, Script
from bench.scoring.ledger import Ledger, lines, full_sizes
from bench.scoring.rollout import STUB, roll
from bench.tokens import tokenizer
from test_next_action import fixture, summary

TOK = tokenizer()


def setup():
    scenario, ck = check(fixture())
    assert scenario is not None, ck.problems
    judge = Judge(scenario, TOK)
    return scenario, judge, Script(judge)


def offline(ctx) -> Answer:
    turn = offline_actor([*ctx, make(TOK, id="next", role="user", tag="next", text=PROMPT)],
                         [{"function": {"name": "run"}}], None, TOK)
    return Answer(turn.calls[0] if turn.calls else None)


async def act(ctx):
    return offline(ctx)


def test_a_reread_of_a_dropped_result_costs_exactly_its_tokens():
    scenario, judge, script = setup()
    at, r = scenario.index(), judge.rendered
    # a compaction kept #101's routine (viewed, then reviewed) and the statement of what is next, and dropped
    # #102's view (r2): the actor reads #102 again, then reviews it, the scripted call
    review = make(TOK, id="x1", role="assistant", tag="assistant", text="",
                  calls=(Call("x1", "gh_pr_review", {"number": 101}),))
    done = make(TOK, id="x2", role="tool", tag="tool", text="Review submitted.", call_id="x1")
    note = make(TOK, id="note", role="user", tag="summary", text="#101 is done. Next: #102.")
    context = [judge.system, r[at["u1"]], r[at["a1"]], r[at["r1"]], review, done, note]
    got = asyncio.run(roll(act, TOK, script, context, at["a3"], offline(context), 3))
    assert got.classes == ["refetch", "exact"] and got.reached == 2
    assert got.refetch == TOK.count(scenario.events[at["r2"]].text) and got.redo == 0 and got.loops == 0


def test_an_unknown_call_gets_a_marked_stub_and_a_repeat_is_a_loop():
    scenario, judge, script = setup()
    seen = []

    async def stuck(ctx):
        seen.append(ctx[-1].text)
        return Answer(Call("y", "gh_pr_list", {"state": "open"}))
    first = Answer(Call("y", "gh_pr_list", {"state": "open"}))
    got = asyncio.run(roll(stuck, TOK, script, [judge.system], scenario.index()["a3"], first, 3))
    assert got.reached == 0 and got.steps(3) == 4 and got.loops == 2 and got.classes == ["other"] * 3
    assert seen == [STUB.format(call="gh_pr_list open")] * 2
    # a redo brings back the finished item's recorded result, counted as redo
    got = asyncio.run(roll(stuck, TOK, script, [judge.system], scenario.index()["a3"],
                           Answer(Call("y", "gh_pr_view", {"number": 101})), 1))
    assert got.classes == ["redo"] and got.redo == TOK.count(scenario.events[scenario.index()["r1"]].text)


def request(i: int, kind: str, tokens: int, event: str = "", **rec):
    return SimpleNamespace(i=i, kind=kind, tokens=tokens, record={"event": event, **rec})


def test_breakeven_is_where_savings_stay_past_the_costs():
    scenario, judge, _ = setup()
    full = full_sizes(judge)
    at = scenario.index()
    asks = [e.id for e in scenario.events if e.role == "assistant"]
    # compaction before request 2: a writer call of 150 tokens; each later request 100 tokens under full
    ledger = Ledger(judge, [2], oracle=False)
    ledger.add(request(0, "agent", full[at[asks[0]]], asks[0], output_tokens=5), full[at[asks[0]]])
    ledger.add(request(1, "compaction", 140, usage={"input_tokens": 140, "output_tokens": 10}), 140)
    for i, e in enumerate(asks[1:], start=2):
        ledger.add(request(i, "agent", full[at[e]] - 100, e, output_tokens=5), 7)
    cols = ledger.columns([])
    assert cols["compaction_cache_writes"] == 7               # only the first request after the compaction
    assert cols["breakeven_request"] == 3                     # 100 < 150 + 7 at request 2, 200 >= 157 at 3
    # a re-read at request 3 costing 60 puts it off to request 4
    assert ledger.columns([(3, 60, 0)])["breakeven_request"] == 4
    assert ledger.columns([(3, 600, 0)])["breakeven_request"] is None          # never
    assert Ledger(judge, [], oracle=False).columns([])["breakeven_request"] is None   # never compacted


RUN = ["run", "scenarios=[scenarios/library/withdrawal-12k.json]", "strategies=[full,truncate,naive]", "stress=[]",
       "probes.enabled=false", "concurrency=1"]


def test_the_ledger_adds_up_to_the_cells_totals(tmp_path: Path):
    assert main([*RUN, f"out={tmp_path}"]) == 0
    rows = summary(tmp_path)
    for row in rows:
        total = sum(int(float(row[c] or 0)) for c in ("input_tokens", "output_tokens", "compaction_input_tokens",
                                                      "compaction_output_tokens", "refetch_tokens", "redo_tokens"))
        assert sum(t for _, t in lines(row)) == int(row["task_tokens"]) == total, row["strategy"]
    by = {r["strategy"]: r for r in rows}
    assert by["full"]["breakeven_request"] == "" and int(by["naive"]["compaction_input_tokens"]) > 0
    assert int(by["naive"]["breakeven_request"]) > 0 and int(by["truncate"]["compaction_cache_writes"]) > 0
