"""Writers: each writer against a reference writer, each metric per strategy with the writers as columns, and what the writer's
work cost — latency per compaction, output tokens, retries, failures, repairs, and its dollar cost
apart from the agent's.

The writer's cost is read from compactions.jsonl's calls: the cost a real model reported, else the run's
price rates on the call's tokens with no cache discount (an upper bound; the summary's `cost_usd`,
agent and writer together, applies the simulated cache to both).
"""
from __future__ import annotations

from typing import Any

from bench.report.data import _count, _text
from bench.results.stats import paired_interval, verdict
from bench.scoring.metrics import higher_is_better


def reference(writers: list[str]) -> str:
    """The writer the others are measured against: `offline` when the run had it among its given writers
    only by default (no list given), else the first writer given."""
    return writers[0] if writers else "offline"


def versus(cells, metrics: list[str], ref: str):
    """Per strategy, metric and writer other than `ref`: the mean of `ref`'s cells and the writer's on the
    cells both ran (same scenario, window and seed), the difference with its paired 95% interval (a bootstrap
    over scenarios: what a scenario and a seed make easy or hard cancels) and a verdict better / tied / worse.
    A writer is never compared on cells the reference did not run."""
    import pandas as pd

    rows = []
    for strategy, g in cells.groupby("strategy", sort=True):
        base = g[g["writer"].astype(str) == ref].to_dict("records")   # read once, not once per metric
        if not base:
            continue
        for writer in [w for w in dict.fromkeys(g["writer"].astype(str)) if w != ref]:
            other = g[g["writer"].astype(str) == writer].to_dict("records")
            for m in metrics:
                if m not in g.columns:
                    continue
                b = {(r["scenario"], str(r["window"]), str(r["seed"])): r[m] for r in base if r[m] == r[m]}
                pairs: dict[str, list[tuple[float, float]]] = {}
                for r in other:
                    k = (r["scenario"], str(r["window"]), str(r["seed"]))
                    if k in b and r[m] == r[m]:
                        pairs.setdefault(k[0], []).append((float(b[k]), float(r[m])))
                if not pairs:
                    continue
                flat = [p for v in pairs.values() for p in v]
                diff = paired_interval(pairs.values())
                rows.append({"strategy": strategy, "writer": writer, "metric": m, "cells": len(flat),
                             f"{ref} mean": sum(x for x, _ in flat) / len(flat), "writer mean": sum(y for _, y in flat) / len(flat),
                             "difference [95%]": diff.text() if diff else "",
                             "verdict": verdict(diff, higher_is_better(m))})
    return pd.DataFrame(rows)


def pivot(summary, metrics: list[str]):
    """Rows (strategy, metric, one column per writer): cell means; only strategies some writer changed."""
    import pandas as pd

    writers = sorted(set(summary["writer"].astype(str)))
    rows = []
    for strategy, g in summary.groupby("strategy", sort=True):
        if g["writer"].nunique() < 2:
            continue
        for m in metrics:
            if m not in g.columns or g[m].isna().all():
                continue
            means = g.groupby("writer")[m].mean()
            rows.append({"strategy": strategy, "metric": m, **{w: means.get(w, float("nan")) for w in writers}})
    return pd.DataFrame(rows)


def work(compactions: list[dict[str, Any]], price) -> Any:
    """Per strategy and writer: compactions tried, latency per compaction (s), output tokens per
    compaction, retries, failures, repairs, writer cost per cell ($). `price(input, output)` -> dollars."""
    import pandas as pd

    rows = []
    for c in compactions:
        calls = _calls(c)
        cell = _text(c.get("cell"))
        writer = next((str(x.get("model")) for x in calls if x.get("model")), "")
        spent = 0.0
        for x in calls:
            if "error" in x:
                continue
            reported = _number(x.get("cost_usd"))
            spent += reported if reported is not None else price(_count(x.get("input_tokens")),
                                                                 _count(x.get("output_tokens")))
        rows.append({"cell": cell, "strategy": _text(c.get("strategy")) or "?", "writer": _writer(cell, writer),
                     "latency": sum(_number(x.get("latency_s")) or 0.0 for x in calls),
                     "output": sum(_count(x.get("output_tokens")) for x in calls),
                     "retries": sum(_count(x.get("retries")) for x in calls),
                     "failed": c.get("ok") is not True, "repairs": _count(c.get("repairs")), "cost": spent,
                     "calls": len(calls)})
    df = pd.DataFrame(rows)
    if df.empty or not (df["calls"] > 0).any():
        return pd.DataFrame()
    df = df[df["calls"] > 0]
    g = df.groupby(["strategy", "writer"], sort=True)
    out = g.agg(compactions=("cell", "size"), cells=("cell", "nunique"), latency=("latency", "mean"),
                output=("output", "mean"), retries=("retries", "sum"), failed=("failed", "sum"),
                repairs=("repairs", "sum"), cost=("cost", "sum")).reset_index()
    out["cost"] = out["cost"] / out["cells"]
    return out.rename(columns={"latency": "latency_s per compaction", "output": "output tokens per compaction",
                               "cost": "writer $ per cell"})


def _calls(c: dict[str, Any]) -> list[dict[str, Any]]:
    """A compaction record's writer calls (none when the field holds something else)."""
    calls = c.get("calls")
    return [x for x in calls if isinstance(x, dict)] if isinstance(calls, list) else []


def _number(value: Any) -> float | None:
    """A log's number, or None when a damaged or hand-edited log holds something else there."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        f = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return f if f == f and abs(f) != float("inf") else None


def _writer(cell: str, fallback: str) -> str:
    """The writer column of a cell name scenario/strategy/writer.../window/seed (a writer may hold '/')."""
    parts = cell.split("/")
    return "/".join(parts[2:-2]) if len(parts) >= 5 else fallback


__all__ = ["pivot", "work", "versus", "reference"]
