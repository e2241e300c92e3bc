"""`compaction-bench compare BASE NEW [--gate FILE] [...]`: the CI gate.

Compares two runs' summary.csv cell by cell and per strategy (and writer). A cell is a scenario,
strategy, writer and window; its repeats (seeds) are averaged. It fails (exit 1) when any cell or
any strategy's mean gets worse than the gate allows (bench/gate/thresholds.py: per metric, per scenario tag),
when requests over the window rise at all, when a metric BASE had is gone, when NEW failed a cell
BASE has, or when a cell of BASE is missing from NEW (one of the scenarios and strategies NEW ran;
with `all_cells`, any). Bad input exits 2.

Every difference also gets a 95% interval (bench/results/stats.py: bootstrap over scenarios and repeats,
paired by scenario and seed) and a verdict: better, worse or tied. With `noise_aware` a drop beyond
the threshold fails only when its interval lies wholly on the worse side of 0. Offline runs are
deterministic, so there a cell's interval is its single difference and a mean's comes from the
scenarios alone.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bench.errors import BadInput
from bench.gate.thresholds import Gate, load as load_gate, parse_flag
from bench.scoring.metric import COMPARE
from bench.scoring.metrics import COUNTS, RELATIVE, RETENTION, higher_is_better, shown
from bench.scoring.oracle import COLUMN as UNMEASURED, columns, decode
from bench.results.store import KEY_COLUMNS, cell_key, failed_cells, read_csv, scenario_tags, summary_path
from bench.results.stats import EPS, Interval, paired_interval, unpaired_interval, verdict

CELL = ("scenario", "strategy", "writer", "window")   # a cell; its repeats differ in seed
# Cost never alone: a gated cost or cache hit rate passes only where what the strategy knows did not fall.
PRICED = ("cost_usd", "cache_hit_rate")
INFO = ["compactions", *(m.column for m in shown(COMPARE))]   # in the table of means, never gated


def read_summary(arg: str) -> list[dict[str, str]]:
    path = summary_path(arg)
    try:
        rows = read_csv(path)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BadInput(f"{path}: unreadable: {exc}")
    gone = [c for c in KEY_COLUMNS if rows and c not in rows[0]]
    if gone:
        raise BadInput(f"{path}: not a compaction-bench summary (no {', '.join(gone)} column)")
    short = [f"{path} line {i + 2}: too few or too many fields" for i, r in enumerate(rows)
             if None in r or any(r[c] is None for c in KEY_COLUMNS)]
    if short:
        raise BadInput(short)
    return rows


def _num(v: str | None) -> float | None:
    try:
        x = float(v) if v not in (None, "") else None
    except ValueError:
        return None
    return x if x is None or x == x else None


def show(x: float | None, sign: bool = False) -> str:
    """Readable numbers: float noise shows as 0, token counts in full."""
    if x is None:
        return ""
    if abs(x) < 1e-9:
        x = 0.0
    text = f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"
    return ("+" if sign and x >= 0 else "") + text


@dataclass
class Diff:
    """One metric of one cell (scenario set) or of one strategy's mean (scenario empty)."""
    metric: str
    strategy: str
    writer: str
    scenario: str = ""
    window: str = ""
    base: float | None = None
    new: float | None = None
    cells: int = 0                   # cells behind a mean; repeats behind a cell
    threshold: float | None = None   # None: shown, not gated
    interval: Interval | None = None  # of new - base
    verdict: str = "tied"
    status: str = ""                 # ok | better | worse (ungated) | within noise | REGRESSION | MISSING | FAILED
    why: str = ""
    knows: tuple[float, float, bool] | None = None   # cost / cache: retention (base, new, its fall is beyond noise)

    @property
    def name(self) -> str:
        return "/".join([self.scenario, self.strategy, self.writer, self.window] if self.scenario
                        else [self.strategy, self.writer])

    @property
    def delta(self) -> float | None:
        return None if self.base is None or self.new is None else self.new - self.base

    @property
    def failed(self) -> bool:
        return self.status in ("REGRESSION", "MISSING", "FAILED")

    def line(self) -> str:
        """The regression line: the cell first, then what got worse, base -> new (delta)."""
        if self.metric == "cell":
            return f"{self.name}: {self.why}"
        parts = ([show(self.delta, sign=True)] if self.delta is not None else []) + ([self.why] if self.why else [])
        more = f" ({'; '.join(parts)})" if parts else ""
        return f"{self.name}: {self.metric} {show(self.base)} -> {show(self.new) or 'missing'}{more}"

    def as_dict(self) -> dict:
        return {"level": "cell" if self.scenario else "mean", "strategy": self.strategy, "writer": self.writer,
                "scenario": self.scenario or None, "window": self.window or None, "metric": self.metric,
                "base": self.base, "new": self.new, "delta": self.delta, "cells": self.cells,
                "threshold": self.threshold, "interval": self.interval.as_dict() if self.interval else None,
                "verdict": self.verdict, "status": self.status, "failed": self.failed, "why": self.why}


@dataclass
class Result:
    gate: Gate
    cells: list[Diff] = field(default_factory=list)    # every gated metric of every common cell
    means: list[Diff] = field(default_factory=list)    # every metric of every strategy (and writer)
    lost: list[Diff] = field(default_factory=list)     # cells failed in or missing from NEW
    notes: list[str] = field(default_factory=list)

    @property
    def problems(self) -> list[Diff]:
        """Regressed cells first (in BASE's order), then lost cells, then regressed means."""
        return [d for d in self.cells if d.failed] + self.lost + [d for d in self.means if d.failed]

    @property
    def passed(self) -> bool:
        return not self.problems


def _cells(rows: list[dict[str, str]]) -> dict[tuple, dict[str, dict[str, str]]]:
    out: dict[tuple, dict[str, dict[str, str]]] = {}
    for r in rows:
        out.setdefault(tuple(str(r[c]) for c in CELL), {})[str(r["seed"])] = r
    return out


def _unmeasured(rows: dict[str, dict[str, str]]) -> set[str]:
    """The metrics a cell's rows say the oracle cannot score on its scenario (`unmeasured`)."""
    return {c for r in rows.values() for c in columns(r.get(UNMEASURED))}


def _mean(rows: dict[str, dict[str, str]], metric: str) -> float | None:
    vals = [x for x in (_num(r.get(metric)) for r in rows.values()) if x is not None]
    return sum(vals) / len(vals) if vals else None


def _diff_interval(cells: list[tuple[str, dict, dict]], metric: str) -> Interval | None:
    """The 95% interval of new - base over (scenario, base repeats, new repeats): paired by scenario and
    seed when every cell's runs share a seed, else each scenario's repeats of either run drawn apart (a
    deterministic baseline against repeats, or repeats with other seeds)."""
    def values(rows: dict, seeds) -> list[float | None]:
        return [_num(rows[s].get(metric)) for s in seeds]

    if all(set(b) & set(n) for _, b, n in cells):
        pairs: dict[str, list[tuple[float, float]]] = {}
        for scen, b, n in cells:
            common = [s for s in b if s in n]
            pairs.setdefault(scen, []).extend((x, y) for x, y in zip(values(b, common), values(n, common))
                                              if x is not None and y is not None)
        return paired_interval([p for p in pairs.values() if p])
    sides: dict[str, tuple[list[float], list[float]]] = {}
    for scen, b, n in cells:
        got = sides.setdefault(scen, ([], []))
        got[0].extend(x for x in values(b, b) if x is not None)
        got[1].extend(y for y in values(n, n) if y is not None)
    return unpaired_interval(sides.values())


def _knows(cells: list[tuple[str, dict, dict]], skip: set[str], noise_aware: bool) -> tuple[float, float, bool] | None:
    """Retention (the mean of goal, constraints and facts both runs have) of BASE and NEW over the cells, and
    whether a fall counts: always on deterministic runs, and with `noise_aware` only when one of them got
    worse beyond its 95% interval."""
    base, new, beyond = [], [], not noise_aware
    for m in RETENTION:
        if m in skip:
            continue
        bs = [x for x in (_mean(b, m) for _, b, _ in cells) if x is not None]
        ns = [x for x in (_mean(n, m) for _, _, n in cells) if x is not None]
        if not bs or not ns:
            continue
        base.append(sum(bs) / len(bs))
        new.append(sum(ns) / len(ns))
        if noise_aware and verdict(_diff_interval(cells, m), True) == "worse":
            beyond = True
    if not base:
        return None
    return sum(base) / len(base), sum(new) / len(new), beyond


def _judge(d: Diff, gate: Gate) -> Diff:
    """Status and verdict of one difference under its threshold."""
    up = higher_is_better(d.metric)
    d.verdict = verdict(d.interval, up)
    if d.base is None or d.new is None:
        if d.base is not None and d.threshold is not None:
            d.status, d.why = "MISSING", "the metric is gone from NEW"
        return d
    worse = (d.base - d.new) if up else (d.new - d.base)
    if d.metric in RELATIVE and d.base > 0:
        worse /= d.base
    fell = d.knows is not None and d.knows[1] < d.knows[0] - EPS and d.knows[2]
    if d.threshold is None:
        d.status = "better" if worse < -EPS else "worse" if worse > EPS else "ok"
    elif fell and worse <= d.threshold + EPS:
        d.status = "REGRESSION"
        d.why = (f"{'cheaper' if d.metric == 'cost_usd' else 'more cached'} by knowing less" if worse < -EPS else
                 "no dearer, but knowing less") + \
            f": retention (goal, constraints, facts) {show(d.knows[0])} -> {show(d.knows[1])}; cost and cache are " \
            "gated only together with retention not falling"
    elif worse > d.threshold + EPS:
        if gate.noise_aware and d.verdict != "worse" and d.metric not in COUNTS:   # overflow: any rise fails
            d.status, d.why = "within noise", f"beyond {d.threshold:g} but within its 95% interval {_iv(d.interval)}"
        else:
            d.status = "REGRESSION"
            d.why = ("requests over the window, which no provider would serve" if d.metric in COUNTS else
                     f"more than {d.threshold:g}{' relative' if d.metric in RELATIVE else ''} worse"
                     + (f"; 95% interval {_iv(d.interval)}" if d.interval and d.interval.high > d.interval.low else ""))
    else:
        d.status = "better" if worse < -EPS else "ok"
    return d


def _iv(i: Interval | None) -> str:
    return "" if i is None else f"[{show(i.low, True)}, {show(i.high, True)}]"


def compare(base: list[dict[str, str]], new: list[dict[str, str]], gate: Gate | None = None,
            failed: set[str] = frozenset(), tags: dict[str, set[str]] | None = None) -> Result:
    """Every cell and every strategy's mean of NEW against BASE under `gate`. errors.jsonl is only ever
    appended, so a cell counts as failed only when NEW has no summary row for it (a resume may have
    finished it)."""
    gate, tags = gate or Gate(), tags or {}
    res = Result(gate)
    b_cells, n_cells = _cells(base), _cells(new)
    new_keys = {cell_key(r) for r in new}
    ran_scen, ran_strat = {c[0] for c in n_cells}, {c[1] for c in n_cells}
    for key, seeds in b_cells.items():
        if key in n_cells:
            continue
        names = {"/".join([*key[:3], key[3], s]) for s in seeds}
        if names & failed and not any(tuple([*key, s]) in new_keys for s in seeds):
            res.lost.append(Diff("cell", key[1], key[2], key[0], key[3], status="FAILED", why="failed in NEW"))
        elif gate.all_cells or (key[0] in ran_scen and key[1] in ran_strat):
            res.lost.append(Diff("cell", key[1], key[2], key[0], key[3], status="MISSING",
                                 why="missing from NEW (in BASE, and NEW ran its scenario and strategy)"))
    common = [k for k in b_cells if k in n_cells]
    metrics = gate.gated()
    # A metric the oracle cannot score on a scenario (in either run) is not gated there, nor in the means.
    skip = {k: _unmeasured(b_cells[k]) | _unmeasured(n_cells[k]) for k in common}
    said: dict[tuple[str, str], str] = {}
    for key in common:
        for r in [*n_cells[key].values(), *b_cells[key].values()]:
            for x in decode(r.get(UNMEASURED)):
                said.setdefault((key[0], x.column), x.text(key[0]) if x.requests else
                                f"not measurable on {key[0]}: {x.column}")
    res.notes.extend(f"{text}; not gated there" for text in said.values())
    for key in common:
        b, n = b_cells[key], n_cells[key]
        for m in metrics:
            if m in skip[key]:
                continue
            d = Diff(m, key[1], key[2], key[0], key[3], _mean(b, m), _mean(n, m), len(n),
                     gate.threshold(m, tags.get(key[0], set())))
            if d.base is None and d.new is None:
                continue
            d.interval = _diff_interval([(key[0], b, n)], m)
            if m in PRICED:
                d.knows = _knows([(key[0], b, n)], skip[key], gate.noise_aware)
            res.cells.append(_judge(d, gate))
    for strategy, writer in dict.fromkeys((k[1], k[2]) for k in common):
        cells = [k for k in common if (k[1], k[2]) == (strategy, writer)]
        for m in [*metrics, *[x for x in INFO if x not in metrics]]:
            group = [k for k in cells if m not in skip[k]]
            bs = [x for x in (_mean(b_cells[k], m) for k in group) if x is not None]
            ns = [x for x in (_mean(n_cells[k], m) for k in group) if x is not None]
            if not bs and not ns:
                continue
            agg = sum if m in COUNTS else (lambda v: sum(v) / len(v))
            d = Diff(m, strategy, writer, base=agg(bs) if bs else None, new=agg(ns) if ns else None, cells=len(ns),
                     threshold=gate.threshold(m) if m in metrics else None)
            d.interval = _diff_interval([(k[0], b_cells[k], n_cells[k]) for k in group], m)
            if m in PRICED and m in metrics:
                d.knows = _knows([(k[0], b_cells[k], n_cells[k]) for k in group], set().union(*(skip[k] for k in group)),
                                 gate.noise_aware)
            if m in COUNTS and d.interval is not None:   # a count's mean is a sum over the cells
                scale = len(group)
                d.interval = Interval(d.interval.mean * scale, d.interval.low * scale, d.interval.high * scale,
                                      d.interval.groups, d.interval.values)
            res.means.append(_judge(d, gate))
    return res


def build_gate(file: str | None = None, max_drop: float | None = None, thresholds: list[str] = (),
               noise_aware: bool = False, all_cells: bool = False) -> Gate:
    """The gate: a gate file's, then the flags on top (`--max-drop`, `--threshold [TAG:]METRIC=X`, ...)."""
    gate = load_gate(Path(file)) if file else Gate()
    if max_drop is not None:
        if max_drop < 0:
            raise BadInput("--max-drop: must be >= 0")
        gate.max_drop = max_drop
    for text in thresholds or ():
        tag, metric, x = parse_flag(text, "--threshold")
        if tag:
            gate.tags.setdefault(tag, {})[metric] = x
        else:
            gate.metrics[metric] = x
    gate.noise_aware = gate.noise_aware or noise_aware
    gate.all_cells = gate.all_cells or all_cells
    return gate


def run_tags(*args: str) -> dict[str, set[str]]:
    """Scenario tags from the runs' scenarios.csv (NEW's first)."""
    found: dict[str, set[str]] = {}
    for a in reversed(args):
        found.update(scenario_tags(summary_path(a).parent))
    return found


def compare_runs(base_arg: str, new_arg: str, gate: Gate) -> Result:
    """BASE against NEW (results folders or summary.csv files) under `gate`, with notes on what was not compared."""
    base, new = read_summary(base_arg), read_summary(new_arg)
    failed = failed_cells(new_arg)
    b_cells, n_cells = ({tuple(r[c] for c in CELL) for r in rows} for rows in (base, new))
    if not b_cells & n_cells and not failed:
        raise BadInput(f"{new_arg}: no cell in common with {base_arg}")
    tags = run_tags(base_arg, new_arg)
    res = compare(base, new, gate, failed, tags)
    if gate.tags and not tags:
        res.notes.append("the gate names scenario tags, but neither run has a scenarios.csv saying which scenario "
                         "has which; tag thresholds were not applied")
    extra = len(n_cells - b_cells)
    if extra:
        res.notes.append(f"{extra} cell(s) of NEW are not in BASE and were not compared")
    return res


__all__ = ["compare", "compare_runs", "build_gate", "Diff", "Result", "read_summary"]
