"""The gate's result for people and for CI: text, JSON, JUnit XML, Markdown (a CI step summary).

Every format leads with what failed, the cell named first, so the first line a CI log or test tab
shows says which scenario regressed. Everything goes to one stream in order (no stderr to interleave).
"""
from __future__ import annotations

import datetime as dt
import json
import math
import socket
from xml.sax.saxutils import escape, quoteattr

from bench.gate.compare import Diff, Result, show
from bench.results.store import format_table

FORMATS = ("text", "json", "junit", "markdown")


def render(res: Result, fmt: str) -> str:
    return {"text": text, "json": as_json, "junit": junit, "markdown": markdown}[fmt](res)


def _limit(res: Result) -> str:
    g = res.gate
    extra = [f"{m} {t:g}" for m, t in g.metrics.items()] + [f"{tag}:{m} {t:g}" for tag, ts in g.tags.items()
                                                          for m, t in ts.items()]
    return (f"max drop {g.max_drop:g}" + (f"; {', '.join(extra)}" if extra else "")
            + ("; noise-aware" if g.noise_aware else ""))


def _headline(res: Result) -> str:
    p = res.problems
    if not p:
        return f"no regression beyond the gate ({_limit(res)})"
    cells = sum(bool(d.scenario) for d in p)
    return f"{len(p)} regression(s) beyond the gate ({cells} in cells, {len(p) - cells} in means; {_limit(res)})"


def _interval(d: Diff) -> str:
    i = d.interval
    if i is None:
        return ""
    return f"[{show(i.low, True)}, {show(i.high, True)}]"


def text(res: Result) -> str:
    lines = [f"regression: {d.line()}" for d in res.problems]
    lines += [f"within noise: {d.line()}" for d in res.cells if d.status == "within noise"]
    writers = {d.writer for d in res.means}
    cols = ["strategy", *(["writer"] if len(writers) > 1 else []), "metric", "cells", "base", "new", "delta",
            "delta 95%", "verdict", "status"]
    rows = [{"strategy": d.strategy, "writer": d.writer, "metric": d.metric, "cells": d.cells, "base": show(d.base),
             "new": show(d.new), "delta": show(d.delta, sign=True), "delta 95%": _interval(d),
             "verdict": d.verdict if d.threshold is not None else "", "status": d.status} for d in res.means]
    lines += ([""] if lines else []) + [format_table(rows, cols)] if rows else []
    lines += [f"note: {n}" for n in res.notes] + [f"compares {res.axis}", _headline(res)]
    return "\n".join(lines) + "\n"


def as_json(res: Result) -> str:
    data = {"passed": res.passed, "axis": res.axis, "gate": res.gate.as_dict(), "summary": _headline(res),
            "regressions": [{**d.as_dict(), "line": d.line()} for d in res.problems],
            "means": [d.as_dict() for d in res.means], "cells": [d.as_dict() for d in res.cells],
            "lost_cells": [d.as_dict() for d in res.lost], "notes": res.notes}
    return json.dumps(_finite(data), indent=1, allow_nan=False, default=str) + "\n"


def _finite(v):
    """JSON has no inf or NaN: a difference that overflowed (1e308 - -1e308) is null."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def _case(d: Diff) -> str:
    """One testcase: a cell's metric (classname strategy.writer, name scenario window metric) or a mean."""
    cls = f"{d.strategy}.{d.writer}"
    name = (f"{d.scenario} window={d.window} {d.metric}" if d.scenario else f"mean {d.metric}")
    head = f"<testcase classname={quoteattr(cls)} name={quoteattr(name)} time=\"0\""
    if not d.failed:
        return head + "/>"
    return (f"{head}><failure message={quoteattr(d.line())} type={quoteattr(d.status)}>{escape(d.line())}"
            f"</failure></testcase>")


def junit(res: Result) -> str:
    """JUnit XML (the Ant schema's required elements and attributes): one testcase per gated cell and
    metric, per cell lost, and per strategy's mean; failures first, so a test tab lists them on top."""
    gated = [d for d in res.cells if d.threshold is not None] + res.lost + \
        [d for d in res.means if d.threshold is not None]
    gated.sort(key=lambda d: not d.failed)
    stamp = dt.datetime.now(dt.timezone.utc).replace(microsecond=0, tzinfo=None).isoformat()
    failures = sum(d.failed for d in gated)
    props = "".join(f"<property name={quoteattr(k)} value={quoteattr(json.dumps(v))}/>"
                    for k, v in res.gate.as_dict().items())
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<testsuites name="compaction-bench compare" tests="{len(gated)}" failures="{failures}" errors="0">',
           f'<testsuite name="compaction-bench gate" package="compaction-bench" id="0" tests="{len(gated)}" '
           f'failures="{failures}" errors="0" skipped="0" time="0" timestamp="{stamp}" '
           f'hostname={quoteattr(socket.gethostname() or "localhost")}>',
           f"<properties>{props}</properties>", *(_case(d) for d in gated),
           f"<system-out>{escape(text(res))}</system-out>", "<system-err></system-err>", "</testsuite>",
           "</testsuites>"]
    return "\n".join(out) + "\n"


def markdown(res: Result) -> str:
    """For a CI step summary ($GITHUB_STEP_SUMMARY): the verdict, per strategy and metric the change with
    its 95% interval and verdict, then the regressed cells."""
    mark = "passed" if res.passed else "FAILED"
    out = [f"### compaction-bench gate: {mark}", "", f"Compares {res.axis}.", "", _headline(res), ""]
    groups = list(dict.fromkeys((d.strategy, d.writer) for d in res.means))
    metrics = list(dict.fromkeys(d.metric for d in res.means if d.threshold is not None))
    if groups and metrics:
        out += ["| strategy | writer | " + " | ".join(metrics) + " |", "|---|---|" + "---|" * len(metrics)]
        by = {(d.strategy, d.writer, d.metric): d for d in res.means}
        for s, w in groups:
            cells = []
            for m in metrics:
                d = by.get((s, w, m))
                cells.append("" if d is None else (f"**{d.verdict}** {show(d.delta, sign=True)} {_interval(d)}"
                                                   + (" ❌" if d.failed else "")).strip())
            out.append(f"| {s} | {w} | " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        out += ["", "Per strategy and metric: verdict (better / worse / tied: the 95% interval of the change, "
                    "bootstrap over scenarios and repeats, paired by scenario and seed, holds 0), the change of "
                    "the mean and its interval. Offline runs are deterministic: their intervals come from the "
                    "scenarios alone.", ""]
    bad = res.problems
    if bad:
        out += ["#### Regressions", "", "| cell | metric | base | new | delta | why |", "|---|---|---|---|---|---|"]
        out += [f"| {d.name} | {d.metric} | {show(d.base)} | {show(d.new)} | {show(d.delta, sign=True)} | "
                f"{d.why or d.status} |".replace("\n", " ") for d in bad]
        out.append("")
    out += [f"> note: {n}" for n in res.notes]
    return "\n".join(out) + "\n"


__all__ = ["render", "FORMATS"]
