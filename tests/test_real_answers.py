"""Real model output is the test that matters: the 34 writer answers SmolLM2-135M-Instruct gave in two bench runs
(tests/data/realmodel: each answer verbatim with its finish reason and the exact request it answered) are all
failed compactions — cut at max_tokens, loops, chat replies, echoes of the instruction, "None." under every
heading — through the same shared checks every strategy uses, and the harness flags each one on its call."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bench.harness import answers
from bench.harness.messages import make
from bench.harness.model import Model, Reply, Usage
from bench.harness.strategy import Session, Strategy
from bench.harness.wire import from_wire
from bench.strategies import sectioned
from bench.strategies.anchored import SECTIONS as ANCHORED
from bench.strategies.handoff import SECTIONS as HANDOFF
from bench.strategies.summary import draft
from test_strategy_common import TOK

DATA = Path(__file__).parent / "data" / "realmodel"
WIRE = json.loads((DATA / "messages.json").read_text(encoding="utf-8"))
ROWS = [json.loads(line) for line in (DATA / "answers.jsonl").read_text(encoding="utf-8").splitlines()]


def request(row):
    msgs = from_wire([WIRE[h] for h in row["request"]], TOK)
    # the wire has no record types: the strategies' shared helpers read only roles and texts here
    return [make(TOK, id=m.id, role=m.role, text=m.text, tag=m.tag) for m in msgs]


class Replay(Model):
    """Answers with the recorded text and finish reason."""
    name = "replay"

    def __init__(self, row):
        self.row = row

    async def chat(self, messages, *, tools=None, max_tokens=None, purpose=""):
        return Reply(text=self.row["text"], finish=self.row["finish"],
                     usage=Usage(output_tokens=self.row["completion_tokens"]), model="smollm2")


def session(row, msgs):
    s = Strategy()
    s.begin(Session(scenario=row["scenario"], user="Dana", window=4500, system=msgs[0], tok=TOK, writer=Replay(row),
                    limit=3960, reserve_output=450, margin=90))
    return s


def test_the_fixture_holds_every_answer_of_both_runs():
    assert len(ROWS) == 34
    assert {r["strategy"] for r in ROWS} == {"naive", "vibey", "anchored", "handoff"}
    assert sum(r["finish"] == "length" for r in ROWS) == 21


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r['run']}-{r['strategy']}-{r['compaction']}-{r['purpose']}")
def test_the_harness_flags_every_real_answer_as_no_answer(row):
    why = answers.assess(request(row), row["text"], row["finish"])
    assert why, row["text"][:120]
    if row["finish"] == "length":
        assert "cut at max_tokens" in why


@pytest.mark.parametrize("row", [r for r in ROWS if r["strategy"] == "naive"], ids=lambda r: f"{r['run']}-{r['compaction']}")
def test_every_real_naive_summary_is_a_failed_compaction(row):
    msgs = request(row)
    d = asyncio.run(draft(session(row, msgs).session, msgs[1:-1], msgs[-1], row["max_tokens"]))
    assert d.error and d.error.startswith("not a summary: ")


@pytest.mark.parametrize("row", [r for r in ROWS if r["strategy"] in ("anchored", "handoff")],
                         ids=lambda r: f"{r['run']}-{r['strategy']}-{r['compaction']}")
def test_every_real_sectioned_answer_is_a_failed_compaction(row):
    msgs = request(row)
    names = ANCHORED if row["strategy"] == "anchored" else HANDOFF
    with pytest.raises(sectioned.Failed):
        asyncio.run(sectioned.ask(session(row, msgs), msgs[1:-1], msgs[-1], row["max_tokens"], names, row["purpose"]))


def test_the_stop_ended_ones_fail_for_what_they_are_not_only_for_being_cut():
    kinds = {}
    for row in ROWS:
        if row["finish"] == "stop":
            kinds.setdefault(row["strategy"], set()).add(answers.assess(request(row), row["text"], "stop").split(" (")[0])
    assert kinds == {"naive": {"the answer carries nothing of the conversation",
                               "the answer repeats one short message of the conversation word for word"},
                     "anchored": {"the answer carries nothing of the conversation"}}


def test_none_under_every_heading_is_no_answer_even_when_it_names_the_sections():
    row = next(r for r in ROWS if r["strategy"] == "anchored" and r["finish"] == "stop")
    body = sectioned.parse(sectioned.answer.clean(row["text"]), ANCHORED)[0]
    assert body and all(sectioned.empty(v) or "session intent" in v.lower() or "</current-sections>" in v
                        for v in body.values())


def test_a_real_summary_passes():
    conversation = ["Fix the three flaky tests in checkout. Never force-push release/2.4.",
                    "Running the checkout suite with --repeat 20: test_apply_coupon failed 3 of 20 (timeout in "
                    "settleDebounce)."]
    good = ("The user asked to fix the three flaky tests in checkout and never to force-push release/2.4. "
            "test_apply_coupon fails 3 of 20 runs on a settleDebounce timeout; next: wait for whenSettled.")
    assert answers.problem(good, "stop", conversation, ["Summarise the conversation so far."]) is None
    assert answers.problem(good, "length", conversation, []) == "the answer was cut at max_tokens (finish: length)"
    assert "carries nothing" in answers.problem("I'm ready to continue. What's the next step?", "stop",
                                                conversation, [])
    assert answers.problem("💻" * 120, "stop", conversation, []) == "the answer is a repetition loop"


def test_an_extractive_summary_of_a_repetitive_log_is_no_loop():
    log = "\n".join(f"item {i} line {j}: value {i * 100 + j} in src/m{i}.py" for i in range(5) for j in range(8))
    summary = "\n".join(f"- Tool read: item {i} line {j}: value {i * 100 + j} in src/m{i}.py" for i in range(5)
                        for j in range(0, 8, 2))
    assert answers.problem(summary, "stop", [log], []) is None
    numbered = "\n".join(f"# {k}. I am here" for k in range(1, 30))
    assert answers.problem(numbered, "stop", [log], []) == "the answer is a repetition loop"
