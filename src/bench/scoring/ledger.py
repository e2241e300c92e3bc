"""Tokens per task (issue 24, item 4): one cell's ledger, and the request at which compacting pays.

A compaction saves input at every later request and costs its writer calls, the cache it invalidates, and
whatever the agent then spends re-reading and redoing. Read apart, each of those flatters someone: savings
alone favour forgetting, writer tokens alone favour doing nothing. So the ledger puts them on one bill, in
tokens: agent input (of which the input the simulated cache did not hold at the first request after each
compaction: the rebuilt prefix the cache takes in again), agent output, writer input and output, and the rollouts' re-fetch and redo tokens
(`rollout.py`); `task_tokens` is their sum. The break-even request is where the savings over `full` (the
oracle's request at the same event, from the record) pass the costs so far and stay past them to the end;
a cell that compacted and never gets there has none (the report says "never"). Tokens, not dollars: cost
with the cache is `cost_usd`.
"""
from __future__ import annotations

import weakref
from typing import Any

from bench.scoring.cache_sim import billed
from bench.scoring.metric import CELLS, TOKENS, Family, Metric
from bench.tokens import PER_MESSAGE, PER_REQUEST

FAMILY = Family((
    Metric("compaction_cache_writes", "info", "of `input_tokens`, the input the simulated cache did not hold at the "
           "first agent request after each compaction: what the cache takes in again because the prefix changed",
           aggregate="total", views={TOKENS}),
    Metric("task_tokens", "info", "the cell's ledger total: agent input and output, writer input and output, and the "
           "rollouts' `refetch_tokens` and `redo_tokens`", aggregate="total", views={TOKENS}),
    Metric("breakeven_request", "info", "the request from which the cell's input savings over `full` stay above its "
           "costs (writer tokens, compaction cache writes, re-fetch and redo tokens); empty when it never compacted "
           "or never gets there (the report says which)", aggregate="total", views={CELLS}),
))
LINES = (("agent input", "input_tokens", "compaction_cache_writes"), ("compaction cache writes",
         "compaction_cache_writes", ""), ("agent output", "output_tokens", ""),
         ("writer input", "compaction_input_tokens", ""), ("writer output", "compaction_output_tokens", ""),
         ("re-fetch", "refetch_tokens", ""), ("redo", "redo_tokens", ""))


def lines(row: dict[str, Any]) -> list[tuple[str, int]]:
    """A summary row's ledger lines (label, tokens): the agent input net of the compaction cache writes, so the
    lines add up to `task_tokens`."""
    def num(c: str) -> int:
        try:
            return int(float(row.get(c) or 0)) if c else 0
        except (TypeError, ValueError):
            return 0
    return [(label, num(c) - num(minus)) for label, c, minus in LINES]


class Ledger:
    """Fed a cell's requests in order (`add(request, its uncached input)`); `columns(rollout_costs)` the ledger's
    columns. `starts`: the requests before which the strategy compacted."""

    def __init__(self, judge: Any, starts: list[int], oracle: bool):
        self.full = full_sizes(judge)
        self.pos = judge.timeline.pos
        self.starts, self.k, self.oracle = sorted(starts), 0, oracle
        self.agent_in = self.agent_out = self.writer_in = self.writer_out = self.writes = 0
        self.series: list[tuple[int, int, int]] = []   # (request, savings so far, costs so far before rollouts)

    def add(self, r: Any, uncached: int) -> None:
        rec = r.record
        if not billed(rec):
            return
        if r.kind != "agent":
            usage = rec.get("usage") or {}
            self.writer_in += int(usage.get("input_tokens") or r.tokens)
            self.writer_out += int(usage.get("output_tokens") or 0)
            return
        self.agent_in += r.tokens
        self.agent_out += int(rec.get("output_tokens") or 0)
        if self.k < len(self.starts) and self.starts[self.k] <= r.i:
            while self.k < len(self.starts) and self.starts[self.k] <= r.i:
                self.k += 1
            self.writes += uncached
        full = self.full.get(self.pos.get(rec.get("event"), -1), r.tokens)
        saved = (self.series[-1][1] if self.series else 0) + full - r.tokens
        self.series.append((r.i, saved, self.writer_in + self.writer_out + self.writes))

    def columns(self, rollout_costs: list[tuple[int, int, int]]) -> dict[str, Any]:
        """`rollout_costs`: (request, re-fetch tokens, redo tokens) of each rollout."""
        total = self.agent_in + self.agent_out + self.writer_in + self.writer_out + \
            sum(a + b for _, a, b in rollout_costs)
        breakeven = None if self.oracle or not self.starts else self._breakeven(rollout_costs)
        return dict(zip((m.column for m in FAMILY.metrics), (self.writes, total, breakeven)))

    def _breakeven(self, rollout_costs: list[tuple[int, int, int]]) -> int | None:
        extra = sorted((i, a + b) for i, a, b in rollout_costs)
        at, spent, found = 0, 0, None
        for i, saved, cost in self.series:
            while at < len(extra) and extra[at][0] <= i:
                spent += extra[at][1]
                at += 1
            if saved > 0 and saved >= cost + spent:
                found = i if found is None else found
            else:
                found = None
        return found


# per Judge, held weakly: a Judge lives as long as its owner's Memo keeps it, not as long as this module
# (kept alive here, finished scenarios' Judges with every message's findings made each full collection slower)
_FULL: "weakref.WeakKeyDictionary[Any, dict[int, int]]" = weakref.WeakKeyDictionary()


def full_sizes(judge: Any) -> dict[int, int]:
    """Record position of each assistant event -> the oracle's request there (everything before it), once per
    Judge: the reference a strategy's savings are counted against."""
    got = _FULL.get(judge)
    if got is None:
        size, got = judge.system.tokens + PER_MESSAGE + PER_REQUEST, {}
        for i, (msg, e) in enumerate(zip(judge.rendered, judge.s.events)):
            if e.role == "assistant":
                got[i] = size
            size += msg.tokens + PER_MESSAGE
        _FULL[judge] = got
    return got


__all__ = ["FAMILY", "LINES", "Ledger", "lines", "full_sizes"]
