"""The oracle as the proof of measurability (docs/scoring.md, "Not measurable here").

The oracle `full` holds every event of the session at every request. Where the scorer does not give it
the perfect score on a metric (1 where more is better, 0 where more is worse) at every agent request of a
scenario, the scorer cannot read that metric on that scenario: the record says something its rules do not
recognise (an item finished with a word that is not a done-word), and any other strategy's number there
measures the misreading, not its memory. Such a metric is *not measurable on that scenario*: its value is
left empty in every cell of the scenario (the oracle's included), the cell's `unmeasured` column says
which and why, and the means, the gate and the audit leave it out. The scenario decides it, never the
strategy: it is computed from the oracle's own requests whenever a cell of the scenario is scored.

Provenance leakage is exempt without source markers (`markers=false`): the harness itself then hands
every background message to the model as the user's words, so the oracle's leakage there is the exposure
every strategy starts from (the audit judges the labelling adversaries against truncate for that reason),
not a misreading.

This module holds what is computed (`Reading`), how it travels in summary.csv (`encode` / `decode`) and
the sentence every reader prints (`sentence`); `bench.scoring.oracle_reading` runs the oracle's requests
through the scorer's own schedule.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

from bench.harness.logs import LoggedRequest
from bench.scoring.checks import COUNTED, SUMMARY, WORSE
from bench.tokens import PER_MESSAGE, PER_REQUEST

# The metrics whose items the scorer reads (summary column by checks.csv name), in summary.csv's order.
CHECKED = dict(SUMMARY)
COLUMN = "unmeasured"          # summary.csv: the cell's metrics the oracle cannot score, with the evidence
NEEDS = "needs_compaction"     # summary.csv: 1 when the session does not fit the window (the oracle's largest request)


@dataclass(frozen=True)
class Reading:
    """One metric the oracle does not score perfectly on a scenario."""
    column: str          # summary column
    mean: float          # the oracle's score (its mean over the requests where the metric has items)
    short: int           # requests where it is not perfect
    requests: int        # requests where the metric has items
    request: int = -1    # the first such request
    event: str = ""      # its assistant event
    item: str = ""       # the first item found short there
    why: str = ""        # the scorer's reason for it

    @property
    def perfect(self) -> float:
        return 0.0 if _worse(self.column) else 1.0

    def text(self, scenario: str) -> str:
        return sentence(scenario, self.column, self.mean, self.short, self.requests)

    def detail(self) -> str:
        where = f"; first at request {self.request} (event {self.event})" if self.request >= 0 else ""
        what = f": {self.item}" + (f": {self.why}" if self.why else "") if self.item else ""
        return (f"not measurable: the oracle scores {self.mean:.3f}, {'above' if _worse(self.column) else 'below'} "
                f"{self.perfect:g} at {self.short} of {self.requests} requests{where}{what}")


def _worse(column: str) -> bool:
    return any(SUMMARY[n] == column for n in WORSE)


def sentence(scenario: str, column: str, mean: float, short: int, requests: int) -> str:
    """What the console, the report, compare and the audit say for an unmeasurable metric."""
    side = "above 0" if _worse(column) else "below 1"
    return (f"not measurable on {scenario}: {column} (the oracle scores {mean:.3f}: {side} at {short} of "
            f"{requests} requests)")


def oracle_requests(judge: Any, tok: Any) -> Iterator[LoggedRequest]:
    """The oracle's agent requests, built from the harness's rendering of the scenario as `full` sends them:
    the system prompt and every event before each assistant event."""
    rendered, system = judge.rendered, judge.system
    events = judge.s.events
    i = 0
    for k, e in enumerate(events):
        if e.role == "assistant":
            yield LoggedRequest(i, "agent", 0, {"event": e.id, "t": e.t}, [system, *rendered[:k]])
            i += 1


def peak(judge: Any) -> int:
    """The oracle's largest request, its reply included (what a provider counts against the window): the
    session needs compaction when this exceeds the window, whatever any strategy does."""
    size = judge.system.tokens + PER_MESSAGE + PER_REQUEST
    top = 0
    for m, e in zip(judge.rendered, judge.s.events):
        if e.role == "assistant":
            top = max(top, size + m.tokens)
        size += m.tokens + PER_MESSAGE
    return top


def aggregate(judged: Iterable[tuple[Any, list, bool]], markers: bool = True) -> dict[str, Reading]:
    """Per metric the oracle does not score perfectly at every request: its `Reading` (by summary column)."""
    from_request: dict[str, list] = {}     # column -> [sum, n, short, first (i, event, item, why)]
    last: list | None = None                # the previous request's checks, and what they added
    added: list[tuple[list, float, bool]] = []
    for r, checks, _ in judged:
        if checks is last:     # `judged` repeats the very list for a request that shows what its neighbours show
            for agg, value, short in added:
                agg[0] += value
                agg[1] += 1
                agg[2] += short
            continue
        last, added = checks, []
        per: dict[str, list] = {}
        for c in checks:
            per.setdefault(c.metric, []).append(c)
        for metric, cs in per.items():
            column = CHECKED.get(metric)
            if column is None or (metric == "leakage" and not markers):
                continue
            scores = [c.score for c in cs]
            value = sum(scores) if metric in COUNTED else sum(scores) / len(scores)
            agg = from_request.setdefault(column, [0.0, 0, 0, None])
            agg[0] += value
            agg[1] += 1
            bad = [c for c in cs if (c.score > 0 if metric in WORSE else c.score < 1)]
            added.append((agg, value, bool(bad)))
            if bad:
                agg[2] += 1
                # the first request where the reading itself fails, not only the hold rule after it
                own = [c for c in bad if not c.detail.startswith("not held")]
                if agg[3] is None or (own and agg[3][4]):
                    c = (own or bad)[0]
                    agg[3] = (r.i, str(r.record.get("event", "")), c.item, c.detail, not own)
    out = {}
    for column, (total, n, short, first) in from_request.items():
        if short:
            i, event, item, why, _ = first
            out[column] = Reading(column, round(total / n, 4), short, n, i, event, item, why)
    return out


def encode(readings: Iterable[Reading]) -> str:
    """summary.csv's `unmeasured`: `column=mean:short/requests` per metric, space-separated ("" = all measurable)."""
    return " ".join(f"{x.column}={x.mean:.4g}:{x.short}/{x.requests}" for x in readings)


ENTRY = re.compile(r"^(\w+)=([0-9.eE+-]+):(\d+)/(\d+)$")


def decode(text: Any) -> list[Reading]:
    """The readings in a summary row's `unmeasured` ([] for empty, missing or unreadable text)."""
    if not isinstance(text, str):
        return []
    out = []
    for part in text.split():
        m = ENTRY.match(part)
        if m:
            out.append(Reading(m[1], float(m[2]), int(m[3]), int(m[4])))
        else:
            out.append(Reading(part.split("=", 1)[0], float("nan"), 0, 0))
    return out


def columns(text: Any) -> set[str]:
    """The summary columns a row's `unmeasured` names."""
    return {x.column for x in decode(text)}


__all__ = ["Reading", "COLUMN", "NEEDS", "aggregate", "oracle_requests", "peak", "encode", "decode", "columns",
           "sentence"]
