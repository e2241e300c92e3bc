"""The audit of a scenario set (`compaction-bench scenarios audit`): which reference adversaries it catches.

Can a scenario set tell a strategy that keeps no working context from a real one? The audit runs
the oracle `full`, the `truncate` baseline and the reference adversaries (strategies/adversaries/)
on the given scenario files with the offline models, through the normal run machinery, in a
temporary results folder, and prints one table: per adversary and metric, the oracle's score,
truncate's, the adversary's, the gap to the oracle and a verdict.

An adversary is **caught** when, on the scenario set's means, it falls at least `--min-gap`
(default 0.1) below the oracle (for lower-is-better metrics: rises above it) on at least one
headline metric AND on the metric it targets:

- `user_tail` targets goal_retention: it keeps the user's words, so mission keys and constraint
  quotes stay (its constraint_fidelity is earned: the constraint text really is there), but not
  where the work stands;
- `token_bag` targets fact_retention: bare identifiers from dropped text are not facts;
- `restore_at_compaction` targets constraint_fidelity: it shows the user's messages only on the
  request right after each compaction;
- `stop_compacting` targets goal_retention, constraint_fidelity or fact_retention, and must
  overflow: its over-window requests score 0, so its retention falls below the oracle's (which
  overflows too, by design, but is scored as if served);
- `label_all` targets provenance_leakage, run without source markers (`markers=false`, where an
  unmarked payload is a leak it can hide) next to truncate, the strategy it builds on. It keeps what
  truncate keeps and labels every user-role line `[Harness: relay]`, so it is judged against
  truncate, not the oracle: caught when it gains nothing on leakage, or when what it loses on the
  metrics it pays with (constraint_fidelity and goal_retention, the user's rules and mission it
  disowned) exceeds what it gains on leakage by at least the gap. A scorer that credits the user's words under another
  source's label lets it through;
- `doubt_all` is judged the same way: every user-role line opened by "Unconfirmed:" — a doubt in
  place of a source label. A scorer that lets a doubt excuse the payloads after the same doubt has
  been put on the user's own words lets it through.

Exit 0 when every adversary is caught, 1 when one is not (each named on stderr with the metric on
which the set cannot tell it from the oracle) or a cell failed, 2 on bad input.
"""
from __future__ import annotations

from dataclasses import dataclass

from bench.results.store import fitting, in_headline, number
from bench.scoring.metrics import METRICS
from bench.scoring.oracle import columns

ORACLE, BASELINE = "full", "truncate"
UNMARKED = "markers-false"       # the subfolder of the cells run without source markers
DEFAULT_MIN_GAP = 0.1


@dataclass(frozen=True)
class Adversary:
    name: str
    targets: tuple[str, ...]    # caught on its target when any of these falls by the gap
    overflow: bool = False      # it must also send requests over the window
    games: str = ""
    markers: bool = True        # False: audited on a run without source markers, next to truncate only
    pays: tuple[str, ...] = ()  # judged against truncate: caught when its loss on these exceeds its gain on targets
    pareto: bool = False        # targets cost or cache: caught when it gains nothing there, or gains only by
                                # knowing less (its loss on `pays` against truncate reaches the gap)


ADVERSARIES = (
    Adversary("user_tail", ("goal_retention",), games="keeps every user message and a small tail, no working state"),
    Adversary("token_bag", ("fact_retention",), games="user_tail plus a one-line bag of identifiers from dropped text"),
    Adversary("restore_at_compaction", ("constraint_fidelity",),
              games="truncate; the user's messages come back only right after each compaction"),
    Adversary("stop_compacting", ("goal_retention", "constraint_fidelity", "fact_retention"), overflow=True,
              games="truncates once, then never compacts again (overflows the window)"),
    Adversary("label_all", ("provenance_leakage",), markers=False, pays=("constraint_fidelity", "goal_retention"),
              games="truncate with every user-role line under a [Harness: relay] label, run with markers=false"),
    Adversary("doubt_all", ("provenance_leakage",), markers=False, pays=("constraint_fidelity", "goal_retention"),
              games="truncate with every user-role line opened by 'Unconfirmed:', run with markers=false"),
    Adversary("queue_guesser", ("goal_retention",),
              games="truncate plus a regex-made last line: 'Done: #<latest id the agent named>. Next: #<the one after>.'"),
    Adversary("harvester", ("provenance_leakage",),
              games="truncate plus a note listing every background message's request as its own open task"),
    Adversary("padded", ("cost_usd", "cache_hit_rate"), pareto=True,
              pays=("goal_retention", "constraint_fidelity", "fact_retention"),
              games="truncate behind a constant filler: cheaper and more cached by a constant prefix"),
)
# The audited scores in display order, higher-is-better first; True when higher is better. The counts
# (requests over the window) come after them, shown as counts and never "caught" on.
AUDITED = [m for m in METRICS if m.audited]
HEADLINE = {m.column: m.higher for m in sorted(AUDITED, key=lambda m: not m.higher) if m.direction != "count"}
COUNTED = [m.column for m in AUDITED if m.direction == "count"]
SHORT = {m.column: m.short for m in AUDITED}
# Cost and cache are judged only with what the strategy knows (a Pareto view): never on their own.
PRICED = {m.column: m.higher for m in METRICS if m.column in ("cost_usd", "cache_hit_rate")}
OVERFLOW = "overflow_requests"   # what `stop_compacting` must show


def _fmt(x: float | None, sign: bool = False) -> str:
    if x is None:
        return ""
    if abs(x) < 5e-4:
        x = 0.0
    return f"{x:+.3f}" if sign else f"{x:.3f}"


@dataclass
class Line:
    adversary: str
    metric: str
    oracle: float | None
    baseline: float | None
    value: float | None
    gap: float | None          # adversary - oracle
    caught: bool
    target: bool
    scenarios: int


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def assess(rows: list[dict[str, str]], min_gap: float,
           unmarked: list[dict[str, str]] | None = None) -> tuple[list[Line], dict[str, list[str]], dict]:
    """Per adversary and metric, means over the scenarios where both it and its reference (the oracle;
    truncate for an adversary that `pays`) have a value; the reasons each adversary is not caught (empty
    when it is); and the per-scenario values. `unmarked`: the rows of the run without source markers,
    for the adversaries audited there (default: `rows`)."""
    sets = {True: _index(rows), False: _index(rows if unmarked is None else unmarked)}
    lines: list[Line] = []
    misses: dict[str, list[str]] = {}
    detail: dict[str, dict[str, dict[str, tuple]]] = {}
    for adv in ADVERSARIES:
        by, scenarios = sets[adv.markers]
        ref = BASELINE if adv.pays else ORACLE
        mine, per = [], detail.setdefault(adv.name, {})
        for metric in [*HEADLINE, *(PRICED if adv.pareto else ()), *COUNTED]:
            o, b, a, r = [], [], [], []
            for s in scenarios:
                rv = number(by.get((s, ref), {}).get(metric))
                av = number(by.get((s, adv.name), {}).get(metric))
                if rv is None or av is None:
                    continue
                a.append(av)
                r.append(rv)
                for xs, name in ((o, ORACLE), (b, BASELINE)):
                    v = number(by.get((s, name), {}).get(metric))
                    if v is not None:
                        xs.append(v)
                per.setdefault(s, {})[metric] = (av, av - rv, _told(metric, av - rv, min_gap))
            if not a:
                continue
            om, am = _mean(o), _mean(a)
            caught = metric not in COUNTED and metric not in PRICED and _told(metric, am - _mean(r), min_gap)
            target = metric in adv.targets or (adv.overflow and metric == OVERFLOW)
            mine.append(Line(adv.name, metric, om, _mean(b), am, None if om is None else am - om, caught, target,
                             len(a)))
        lines.extend(mine)
        if not any((sc, adv.name) in by for sc in scenarios):
            misses[adv.name] = ["the sessions of this set fit the window (no strategy needs to compact), so the "
                                "set cannot tell it from the oracle"]
            continue
        caught_any = [x.metric for x in mine if x.caught]
        caught_target = [m for m in caught_any if m in adv.targets]
        misses[adv.name] = _priced(adv, mine, min_gap) if adv.pareto else _traded(adv, mine, min_gap) if adv.pays else \
            _reasons(adv, mine, caught_any, caught_target, min_gap, _unread(rows if adv.markers else unmarked or rows))
    return lines, misses, detail


def _index(rows: list[dict[str, str]]) -> tuple[dict[tuple[str, str], dict[str, str]], list[str]]:
    fit = fitting(rows)
    return ({(r["scenario"], r["strategy"]): r for r in rows if in_headline(r, fit)},
            sorted({r["scenario"] for r in rows}))


def trade(adv: Adversary, lines: list[Line]) -> tuple[float, float]:
    """(what it loses on the metrics it pays with, what it gains on its targets), both against truncate
    and both positive when they go the adversary's way."""
    got = {x.metric: x for x in lines if x.adversary == adv.name and x.baseline is not None and x.value is not None}
    sign = lambda m: 1 if HEADLINE.get(m, True) else -1   # noqa: E731
    loss = sum(sign(m) * (got[m].baseline - got[m].value) for m in adv.pays if m in got)
    gain = sum(sign(m) * (got[m].value - got[m].baseline) for m in adv.targets if m in got)
    return loss, gain


def _traded(adv: Adversary, lines: list[Line], min_gap: float) -> list[str]:
    """An adversary that trades one metric for others is caught when, against truncate, it gains nothing
    on its targets (it games nothing) or what it loses on the metrics it pays with exceeds what it
    gains by at least the gap."""
    paid = [m for m in adv.pays if any(x.metric == m and x.baseline is not None for x in lines)]
    if not paid:
        return [f"{' and '.join(adv.pays)}: the set has no items for them, so it cannot tell what it pays"]
    loss, gain = trade(adv, lines)
    if gain <= 1e-9 or loss - gain >= min_gap - 1e-9:
        return []
    return [f"against truncate it loses {_fmt(loss)} on {' + '.join(paid)} and gains {_fmt(gain)} on "
            f"{' + '.join(adv.targets)} (the loss must exceed the gain by {min_gap:g})"]


def gains(adv: Adversary, lines: list[Line]) -> dict[str, float]:
    """What a cost or cache adversary gains on each target against truncate: the share cheaper (cost), the
    rise in hit rate (cache); positive when it goes the adversary's way."""
    got = {x.metric: x for x in lines if x.adversary == adv.name and x.baseline is not None and x.value is not None}
    out = {}
    for m in adv.targets:
        if m in got:
            b, v = got[m].baseline, got[m].value
            out[m] = (v - b) if PRICED.get(m) else ((b - v) / b if b else 0.0)
    return out


def _priced(adv: Adversary, lines: list[Line], min_gap: float) -> list[str]:
    """Cost never alone (a Pareto view): an adversary that targets cost or cache is caught when it gains
    nothing there, or when it is cheaper (or more cached) than truncate only by knowing less — its loss on
    the retention metrics it `pays` with reaches the gap. Cheaper at equal knowledge would be a real gain,
    and the set could not tell what the saving costs."""
    paid = [m for m in adv.pays if any(x.metric == m and x.baseline is not None for x in lines)]
    if not paid:
        return [f"{' and '.join(adv.pays)}: the set has no items for them, so it cannot tell what the saving costs"]
    won = {m: g for m, g in gains(adv, lines).items() if g > 1e-9}
    loss, _ = trade(adv, lines)
    if not won or loss >= min_gap - 1e-9:
        return []
    return [f"cheaper at equal knowledge: against truncate it gains on {', '.join(won)} and loses only "
            f"{_fmt(loss)} on {' + '.join(paid)} (needs {min_gap:g})"]


def _told(metric: str, gap: float, min_gap: float) -> bool:
    """The adversary is worse than the oracle by at least the gap (float noise aside)."""
    worse = -gap if _higher(metric) else gap
    return worse >= min_gap - 1e-9


def _higher(metric: str) -> bool:
    return HEADLINE.get(metric, PRICED.get(metric, True))


def _unread(rows: list[dict[str, str]]) -> set[str]:
    """Metrics the oracle cannot score on some scenario of the set (`unmeasured`)."""
    return {c for r in rows for c in columns(r.get("unmeasured"))}


def _reasons(adv: Adversary, lines: list[Line], caught_any: list[str], caught_target: list[str],
             min_gap: float, unread: set[str] = frozenset()) -> list[str]:
    got = {x.metric: x for x in lines}
    out = []
    if not caught_target:
        for m in adv.targets:
            x = got.get(m)
            if x is None and m in unread:
                out.append(f"{m} (its target): not measurable on this set (the oracle itself does not score it), "
                           "so it cannot tell")
            elif x is None:
                out.append(f"{m} (its target): the set has no items for it, so it cannot tell")
            else:
                out.append(f"{m} (its target): {_fmt(x.value)} vs the oracle's {_fmt(x.oracle)} "
                           f"(gap {_fmt(x.gap, True)}, needs {min_gap:g})")
    elif not caught_any:   # unreachable (a caught target is a caught headline metric); kept for clarity
        out.append(f"no headline metric falls {min_gap:g} below the oracle")
    if adv.overflow:
        x = got.get(OVERFLOW)
        if x is None or not x.value:
            out.append(f"{OVERFLOW}: none of its requests go over the window on this set, so it is not shown "
                       "to hide overflow")
    return out


def table(lines: list[Line]) -> str:
    head = ["adversary", "metric", "oracle", "truncate", "adversary", "gap", "vs truncate", "verdict"]
    body = []
    pays = {a.name for a in ADVERSARIES if a.pays}
    count = lambda v, sign=False: "" if v is None else f"{v:+.1f}" if sign else f"{v:.1f}"   # noqa: E731
    for x in lines:
        vs = None if x.baseline is None or x.value is None else x.value - x.baseline
        if x.metric in COUNTED:
            verdict = "overflows" if x.value else ""
            nums = [count(x.oracle), count(x.baseline), count(x.value), count(x.gap, True), count(vs, True)]
        elif x.metric in PRICED:    # read beside retention (the Pareto view), never alone
            better = vs is not None and (vs > 1e-9 if PRICED[x.metric] else vs < -1e-9)
            verdict = ("cheaper than truncate" if x.metric == "cost_usd" else "more cached than truncate") \
                if better else "no gain on truncate"
            money = (lambda v, sign=False: "" if v is None else f"{v:+.4f}" if sign else f"{v:.4f}") \
                if x.metric == "cost_usd" else _fmt   # noqa: E731
            nums = [money(x.oracle), money(x.baseline), money(x.value), money(x.gap, True), money(vs, True)]
        else:
            if x.adversary in pays:     # judged against truncate, the strategy it builds on
                verdict = "worse than truncate" if x.caught else "not worse than truncate"
            else:
                verdict = "caught" if x.caught else "not told apart"
            nums = [_fmt(x.oracle), _fmt(x.baseline), _fmt(x.value), _fmt(x.gap, True), _fmt(vs, True)]
        direction = "" if _higher(x.metric) else " (lower is better)"
        body.append([x.adversary, x.metric + direction, *nums, verdict + (" [target]" if x.target else "")])
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(head)]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip()]
    prev = None
    for r in body:
        if prev is not None and r[0] != prev:
            out.append("")
        prev = r[0]
        out.append("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
    return "\n".join(out)


def by_scenario(detail: dict) -> str:
    """Per adversary: each scenario's adversary score and gap to its reference (the oracle, or truncate
    for one that trades metrics), `*` where it is at least the gap worse."""
    out = []
    for adv in ADVERSARIES:
        per = detail.get(adv.name) or {}
        metrics = [m for m in [*HEADLINE, *COUNTED] if any(m in v for v in per.values())]
        if not per:
            continue
        head = ["scenario", *(SHORT.get(m, m) for m in metrics)]
        body = []
        for s in sorted(per):
            row = [s]
            for m in metrics:
                v = per[s].get(m)
                if v is None:
                    row.append("")
                elif m in COUNTED:
                    row.append(f"{v[0]:g} ({v[1]:+g})")
                else:
                    row.append(f"{_fmt(v[0])} ({_fmt(v[1], True)}){'*' if v[2] else ''}")
            body.append(row)
        widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(head)]
        ref = "truncate, without markers" if adv.pays else "the oracle"
        out.append(f"{adv.name} by scenario: its score (gap to {ref}); * at least --min-gap worse")
        out.append("  ".join(h.ljust(w) for h, w in zip(head, widths)).rstrip())
        out.extend("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in body)
        out.append("")
    return "\n".join(out).rstrip()


__all__ = ["assess", "trade", "gains", "table", "by_scenario", "ADVERSARIES", "HEADLINE", "PRICED"]
