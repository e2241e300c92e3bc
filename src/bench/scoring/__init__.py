"""Scorers read a finished cell's logs (never strategy internals) and return summary columns.

`score_cell` is the one entry point the run calls. It walks the cell's requests once:
every billed request goes through the cache simulator and the price meter, and **every
agent request** is checked against the truth in force at that moment — a schedule the
strategy cannot choose. A message's findings are computed once per message hash
(`checks.Judge`), so a request costs an OR over its messages, and a request that only
appends to the previous one costs only its new messages (one that changes a message, only those
since the last boundary before the change: `checks.Running`). The first request after each
compaction and the final one also get full rows in checks.csv (`point=compaction|final`);
every item gets one `point=all` row with its mean over the requests where it was in force.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from pathlib import Path
from bisect import bisect_right
from typing import Any, Callable, Iterable, Iterator

from bench.scoring.cache_sim import Profile
from bench.harness.logs import RequestLog, read_jsonl, replay_requests
from bench.harness.logs import KEY_COLUMNS
from bench.scoring.checks import SUMMARY, WORSE, Judge, Running, decide, point_values, shown
from bench.scoring.memo import Memo
from bench.scoring.usage import Meter
from bench.scoring.faults import Faults
from bench.scoring.continuation import Continuation
from bench.scoring.ledger import Ledger
from bench.scoring.actor import offline_actor
from bench.scoring.metrics import FAMILIES
from bench.scoring.pricing import rates
from bench.models import build as build_model
from bench.scoring.probes import Outcome, ask_all, offline_judge
from bench.scoring.trail import VERDICTS, Trail
from bench.scoring import oracle as O

CHECK_COLUMNS = [*KEY_COLUMNS, "check_point", "point", "request", "event", "metric", "item", "kind", "score",
                 "detail", "oracle"]
GRADES = ("auto", "rule", "judge")


@dataclass(frozen=True)
class Scoring:
    """The run's scoring settings (config keys cache.*, price.model, probes.*)."""
    cache: Profile = field(default_factory=Profile)
    price_model: str = ""
    probes: bool = True
    grade: str = "auto"
    pass_score: float = 4.0
    steps: int = 3              # continuation.steps: rollout steps from each continuation point

    @property
    def model(self) -> str:
        return self.price_model or self.cache.price_model


def settings(cache: dict[str, Any], price_model: str | None, probes: Any, steps: int = 3) -> Scoring:
    """Scoring settings from the run's (typed) settings: the cache profile's mapping, the price model,
    probes.{enabled, grade, pass_score} and continuation.steps; BadInput when the price model is unknown."""
    s = Scoring(Profile.from_dict(cache), str(price_model or ""), probes.enabled, probes.grade,
                float(probes.pass_score), int(steps))
    rates(s.model, s.cache)   # an unknown price model fails before anything runs
    return replace(s, cache=s.cache.for_model(s.model))


class Tally:
    """Per request values and per item aggregates of one cell."""

    def __init__(self) -> None:
        self.values: list[dict[str, float]] = []
        # (metric, item) -> [sum, n, requests where lost (or, worse-is-more, present), first such, kind, why]
        self.items: dict[tuple[str, str], list] = {}
        self._last: tuple[list, list] | None = None   # the previous checks, with their aggregates and verdicts

    def add(self, r: Any, checks: list) -> None:
        if self._last is not None and self._last[0] is checks:     # `judged` repeats an unchanged request's checks
            self.values.append(self.values[-1])
            counted = self._last[1]
        else:
            self.values.append(point_values(checks))
            counted = []
            for c in checks:
                agg = self.items.get((c.metric, c.item))
                if agg is None:
                    agg = self.items[(c.metric, c.item)] = [0.0, 0, 0, None, c.kind, ""]
                counted.append((agg, c, c.score > 0 if c.metric in WORSE else c.score < 1))
            self._last = (checks, counted)
        for agg, c, bad in counted:
            agg[0] += c.score
            agg[1] += 1
            agg[2] += bad
            if bad and agg[3] is None:
                agg[3] = (r.i, r.record.get("event"))
                agg[5] = c.detail

    def summary(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for metric, column in SUMMARY.items():
            vals = [p[metric] for p in self.values if metric in p]
            out[column] = round(sum(vals) / len(vals), 4) if vals else None
        return out

    def rows(self, base: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        for (metric, item), (total, n, bad, first, kind, why) in self.items.items():
            word = "present" if metric in WORSE else "lost"
            detail = f"{word} at {bad} of {n} requests" + (
                f"; first at request {first[0]} (event {first[1]}){': ' + why if why else ''}" if first else "")
            out.append({**base, "point": "all", "metric": metric, "item": item, "kind": kind,
                        "score": round(total / n, 4),
                        "detail": detail})
        return out


def judged(requests: Iterable[Any], judge: Judge, oracle: bool = False,
           seen: Callable[[Any], None] | None = None) -> Iterator[tuple[Any, list, bool]]:
    """(request, its checks, over the window) for every agent request of one cell, in order: the scorer's
    schedule and rules, shared by `score_cell` and the readers that show them (report, viewer).

    A request is judged once the next one is known (`decide`'s hold rule reads both neighbours), so each
    comes out one request late; `seen` is called on every billed request as it is read. A request that
    only appends to the previous one costs only its new messages, and one whose findings and truth in
    force are the very objects of the previous one (nothing new shown, nothing come into or out of force)
    reuses its reading, and its verdict when its neighbours are unchanged too."""
    timeline = judge.timeline
    channels: frozenset[str] = frozenset()   # wording the strategy has put on the user's words so far in the cell
    waiting: tuple | None = None     # the previous agent request (r, shown, its values, over): judged once the next is known
    held: dict | None = None         # the values of the request before that
    running = Running(judge)
    last: tuple | None = None        # (findings, truth in force, shown, values) of the previous agent request
    verdict: tuple | None = None     # the previous `decide`: its arguments and its checks
    plain: tuple | None = None       # (shown, its checks as they stand): what `decide` gives when nothing is held

    def decided(now: Any, values: dict, before: dict | None, after: dict | None, over: bool) -> list:
        """`decide`; the same list object for a request whose neighbours show what it shows (each item
        held at its own score: its checks as they stand), so the tally sees the request repeated."""
        nonlocal verdict, plain
        if (not over and len(values) == len(now.kept) and (before is None or before == values)
                and (after is None or after == values)):
            if plain is None or plain[0] is not now:
                plain = (now, [c for _, c in now.kept] + now.worse)
            return plain[1]
        if not (verdict is not None and verdict[0] is now and verdict[1] is before and verdict[2] is after
                and verdict[3] == over):
            verdict = (now, before, after, over, decide(now, before, after, over))
        return verdict[4]

    for r in requests:
        if r.kind == "probe":
            continue
        if seen is not None:
            seen(r)
        if r.kind != "agent":
            continue
        found = running.request(r.messages)
        if not found.channels <= channels:
            channels = channels | found.channels
        a = timeline.at(timeline.pos.get(r.record.get("event"), 0))
        if last is None or last[0] is not found or last[1] is not a or last[4] is not channels:
            now = shown(found, a, channels)
            last = (found, a, now, now.values, channels)
        if waiting is not None:
            yield waiting[0], decided(waiting[1], waiting[2], held, last[3], waiting[3] and not oracle), waiting[3]
            held = waiting[2]
        waiting = (r, last[2], last[3], bool(r.record.get("over")))
    if waiting is not None:
        yield waiting[0], decided(waiting[1], waiting[2], held, None, waiting[3] and not oracle), waiting[3]



def oracle_reading(judge: Judge, markers: bool = True) -> dict[str, O.Reading]:
    """The metrics the oracle does not score perfectly at every agent request of the Judge's scenario, read
    by the scorer's own schedule and rules (`judged`) on the requests `full` sends: not measurable there."""
    return O.aggregate(judged(O.oracle_requests(judge, None), judge, oracle=True), markers)


def _readings(memo: Memo, scenario: Any, tok: Any, markers: bool) -> tuple[dict[str, O.Reading], int]:
    """(`oracle_reading`, the oracle's largest request) of a scenario, once per process and marker setting."""
    judge = memo.judge(scenario, tok, markers)
    key = (scenario.id, scenario.path, tok.encoding_name, markers)
    got = memo.readings.get(key)
    if got is None or got[0] is not judge:
        got = memo.readings[key] = (judge, oracle_reading(judge, markers), O.peak(judge))
    return got[1], got[2]


def warm(memo: Memo, scenario: Any, tok: Any, markers: bool) -> None:
    """Work out a scenario's scoring index (its Judge, the oracle's reading) into `memo` ahead of its
    cells: worker processes forked afterwards share it rather than each building its own."""
    _readings(memo, scenario, tok, markers)


async def score_cell(cell: Any, cell_dir: Path, tok: Any, oracle: bool = False, memo: Memo | None = None
                     ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Summary columns and checks.csv rows for one cell. `oracle`: the run's config names the strategy's
    class an oracle (`full`); its over-window requests are scored as if served, and counted. `memo`:
    what the caller keeps between cells (bench.scoring.memo).

    A metric the oracle itself does not score perfectly at every request of the scenario is not measurable
    there (bench.scoring.oracle): its value is left empty, its check rows are replaced by one
    `point=unmeasured` row saying why, and the `unmeasured` column names it. `needs_compaction` says
    whether the session fits the cell's window at all (the oracle's largest request), for every strategy
    alike."""
    memo = memo or Memo()
    sc: Scoring = getattr(cell, "scoring", None) or Scoring()
    scenario, base = cell.scenario, dict(zip(KEY_COLUMNS, cell.key))
    compactions = list(read_jsonl(cell_dir / "compactions.jsonl"))
    # check points: after each compaction, and after each failed one whose fallback changed the context
    starts = sorted(c["request"] for c in compactions
                    if c.get("ok") or (c.get("fallback") and c.get("after") != c.get("before")))
    judge = memo.judge(scenario, tok, cell.markers)
    faults = Faults(cell, judge, compactions)
    nexts = Continuation(cell, judge, starts, memo, oracle)
    ledger = Ledger(judge, starts, oracle)
    timeline = judge.timeline
    meter = Meter(sc.cache, memo.rates_for(sc.model, sc.cache))
    probes = sorted(scenario.probes, key=lambda p: timeline.pos.get(p.at, 0)) if sc.probes else []
    targets: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    tally = Tally()
    trail = Trail(cell.name, judge)
    others = [f.scorer(cell) for f in FAMILIES if f.scorer is not None]   # families that score on their own
    last, prev, passed = None, None, 0
    over_requests = 0

    def full_rows(r: Any, k: int, point: str, checks: list) -> None:
        rows.extend({**base, "check_point": k, "point": point, "request": r.i, "event": r.record.get("event"),
                     "metric": c.metric, "item": c.item, "kind": c.kind, "score": c.score, "detail": c.detail}
                    for c in checks)

    def seen(r: Any) -> None:
        nonlocal prev
        prev = r
        meter.add(r)
        ledger.add(r, meter.uncached)
        faults.add(r)
        nexts.add(r)
        for o in others:
            o.add(r)
        if r.kind == "agent" and len(targets) < len(probes):
            at = timeline.pos.get(r.record.get("event"), 0)
            for p in probes:
                if p.id not in targets and timeline.pos.get(p.at, 0) < at:
                    targets[p.id] = r

    records = replay_requests(read_jsonl(cell_dir / "requests.jsonl"), scenario, tok, cell.markers)
    for r, checks, over in judged(records, judge, oracle, seen):
        k = bisect_right(starts, r.i)     # compactions done before this request
        over_requests += over
        tally.add(r, checks)
        trail.add(r, checks)
        if k > passed:
            full_rows(r, k, "compaction", checks)
        passed, last = k, (r, k, checks)
        await asyncio.sleep(0)   # a request at a time: real-model cells sharing this loop keep sending and reading
    if last is not None and last[0].i not in {row["request"] for row in rows}:
        full_rows(*last[:2], "final", last[2])
    rows.extend(tally.rows({**base, "check_point": "", "request": "", "event": ""}))
    with (cell_dir / VERDICTS).open("w", encoding="utf-8") as fh:
        trail.write(fh)
    rows.extend(faults.rows(base))
    scores: dict[str, Any] = {**tally.summary(), **meter.columns(), "overflow_requests": over_requests,
                              "oracle": int(oracle), "probe_pass_rate": None}
    unmeasured, top = _readings(memo, scenario, tok, cell.markers)
    scores[O.NEEDS] = int(top > int(cell.window))
    scores[O.COLUMN] = O.encode(unmeasured.values()) or None
    if unmeasured:
        names = {m for m, c in SUMMARY.items() if c in unmeasured}
        rows[:] = [r for r in rows if r["metric"] not in names]
        for x in unmeasured.values():
            scores[x.column] = None
            rows.append({**base, "check_point": "", "point": "unmeasured", "request": x.request, "event": x.event,
                         "metric": next(m for m, c in SUMMARY.items() if c == x.column), "item": x.item,
                         "kind": "", "score": x.mean, "detail": x.detail()})
    scores.update(faults.columns())
    agent = build_model(cell.agent).teach((offline_actor,))
    cols, next_rows = await nexts.grade(agent, tok, {**base, "oracle": ""}, sc.steps)
    scores.update(cols)
    scores.update(ledger.columns(nexts.costs))
    rows.extend(next_rows)
    for o in others:
        scores.update(o.columns())
    if probes:
        contexts = _contexts(probes, targets, last[0] if last else None, judge)
        # A probe whose request was over the window gets no answer: no provider would serve it.
        blocked = {p.id for p in probes if p.id in targets and targets[p.id].record.get("over") and not oracle}
        outcomes, answerable, unrun = await _probes(cell, sc, probes, contexts, targets, tok, cell_dir, prev, memo,
                                                    blocked)
        # a probe the oracle's run could not answer (False) or could not be asked (None: its agent or judge failed)
        # is left out: nothing says the agent could answer it
        graded = [o for o in outcomes if answerable.get(o.probe.id) is True]
        scores["probe_pass_rate"] = round(sum(bool(o.passed) for o in graded) / len(graded), 4) if graded else None
        scores["probes_answerable"] = len(graded)
        rows.extend({**base, "point": "probe", "request": targets[o.probe.id].i if o.probe.id in targets else "",
                     "event": o.probe.at, "metric": "probe", "item": o.probe.id, "kind": o.probe.kind,
                     "score": "" if o.passed is None else float(o.passed),
                     "detail": o.detail + (f"; oracle {unrun[o.probe.id]}" if o.probe.id in unrun else ""),
                     "oracle": {True: 1, False: 0}.get(answerable.get(o.probe.id), "")} for o in outcomes)
    return scores, rows


def _contexts(probes: list, targets: dict, last: Any, judge: Judge) -> list:
    """Each probe's context; a probe after the last request gets that request plus the events since."""
    out, rendered, timeline = [], judge.rendered, judge.timeline
    for p in probes:
        if p.id in targets:
            out.append(targets[p.id].messages)
        elif last is None:
            out.append(None)
        else:
            since = timeline.pos.get(last.record.get("event"), 0)
            out.append([*last.messages, *rendered[since:timeline.pos.get(p.at, since) + 1]])
            targets[p.id] = last
    return out


def _oracle_contexts(probes: list, scenario: Any, judge: Judge) -> list:
    """What `full` would have sent for each probe: the system prompt and every event before the
    first agent request after the probe's event (or every event up to it, at the end)."""
    rendered, system, timeline = judge.rendered, judge.system, judge.timeline
    asks = [i for i, e in enumerate(scenario.events) if e.role == "assistant"]
    out = []
    for p in probes:
        at = timeline.pos.get(p.at, 0)
        nxt = next((i for i in asks if i > at), None)
        out.append([system, *rendered[:nxt if nxt is not None else at + 1]])
    return out


async def _probes(cell: Any, sc: Scoring, probes: list, contexts: list, targets: dict, tok: Any, cell_dir: Path,
                  prev: Any, memo: Memo, blocked: set[str] = frozenset()):
    """The probes' outcomes, and per probe whether the same agent answers it with the oracle's context
    (True / False; None when that failed to run), and why each of those failed. The oracle's answers depend
    only on the scenario and the models, so this process asks them once per scenario."""

    agent, judge = build_model(cell.agent), build_model(cell.judge).teach((offline_judge,))
    asked = [(p, ctx) for p, ctx in zip(probes, contexts) if p.id not in blocked]
    answers = {o.probe.id: o for o in await ask_all(asked, agent, judge, tok, cell.scenario.user, sc.grade,
                                                      sc.pass_score)}
    outcomes = [answers.get(p.id) or Outcome(p, False, "not asked: its request was over the window") for p in probes]
    key = (cell.scenario.id, cell.scenario.path, cell.markers, repr(cell.agent), repr(cell.judge), sc.grade,
           sc.pass_score, tuple(p.id for p in probes))
    answerable = memo.oracle.get(key)
    if answerable is None:
        contexts = _oracle_contexts(probes, cell.scenario, memo.judge(cell.scenario, tok, cell.markers))
        oracle = await ask_all(list(zip(probes, contexts)), agent, judge, tok,
                               cell.scenario.user, sc.grade, sc.pass_score)
        answerable = {o.probe.id: o.passed for o in oracle}
        unrun = {o.probe.id: o.detail for o in oracle if o.passed is None}
        if not unrun:   # a model that failed may answer next time: ask again then
            memo.oracle[key] = answerable
    else:
        unrun = {}
    _log_probes(outcomes, targets, cell, tok, cell_dir, prev, memo.judge(cell.scenario, tok, cell.markers))
    return outcomes, answerable, unrun


def _log_probes(outcomes: list, targets: dict, cell: Any, tok: Any, cell_dir: Path, prev: Any, judge: Judge) -> None:
    """Probe requests go on the cell's log as kind `probe`, as deltas like every request."""
    verbatim = judge.verbatim
    with (cell_dir / "requests.jsonl").open("a", encoding="utf-8") as fh:
        log = RequestLog(fh, cell.name, verbatim)
        if prev is not None:
            log.follow(prev.i, prev.messages)
        for o in outcomes:
            if o.request:
                target = targets[o.probe.id]
                log.write(o.request, kind="probe", tokens=tok.size_of(o.request),
                          t=target.record.get("t"), probe=o.probe.id, passed=o.passed)


__all__ = ["score_cell", "warm", "judged", "oracle_reading", "settings", "Scoring", "CHECK_COLUMNS"]
