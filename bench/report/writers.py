"""Writers side by side: each metric per strategy with the writers as columns, and what the writer's
work cost — latency per compaction, output tokens, retries, failures, repairs, and its dollar cost
apart from the agent's.

The writer's cost is read from compactions.jsonl's calls: the cost a real model reported, else the run's
price rates on the call's tokens with no cache discount (an upper bound; the summary's `cost_usd`,
agent and writer together, applies the simulated cache to both).
"""
from __future__ import annotations

from typing import Any


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
        calls = [x for x in c.get("calls") or [] if isinstance(x, dict)]
        cell = str(c.get("cell", ""))
        writer = next((str(x.get("model")) for x in calls if x.get("model")), "")
        spent = 0.0
        for x in calls:
            if "error" in x:
                continue
            reported = x.get("cost_usd")
            spent += float(reported) if reported is not None else price(int(x.get("input_tokens") or 0),
                                                                        int(x.get("output_tokens") or 0))
        rows.append({"cell": cell, "strategy": str(c.get("strategy", "?")), "writer": _writer(cell, writer),
                     "latency": sum(float(x.get("latency_s") or 0) for x in calls),
                     "output": sum(int(x.get("output_tokens") or 0) for x in calls),
                     "retries": sum(int(x.get("retries") or 0) for x in calls),
                     "failed": c.get("ok") is not True, "repairs": int(c.get("repairs") or 0), "cost": spent,
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


def _writer(cell: str, fallback: str) -> str:
    """The writer column of a cell name scenario/strategy/writer.../window/seed (a writer may hold '/')."""
    parts = cell.split("/")
    return "/".join(parts[2:-2]) if len(parts) >= 5 else fallback


__all__ = ["pivot", "work"]
