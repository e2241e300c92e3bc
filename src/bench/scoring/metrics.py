"""The metric registry: every scorer family's declarations (`metric.Metric`, made next to each scorer's
code), in summary.csv's column order, and the lists the gate, repeats, report, audit and viewer share.

A new scorer is one module declaring its `FAMILY` plus its entry in FAMILIES; everything that lists
metrics reads them from here, and tests/test_docs.py holds the docs' tables to it.
"""
from __future__ import annotations

from bench.scoring import checks, continuation, faults, ledger, probes, rollout, usage
from bench.scoring.metric import Metric

FAMILIES = (checks.FAMILY, continuation.FAMILY, rollout.FAMILY, faults.FAMILY, usage.FAMILY, ledger.FAMILY, probes.FAMILY)   # summary.csv's order: families, then their metrics
METRICS: tuple[Metric, ...] = tuple(m for f in FAMILIES for m in f.metrics)
BY_COLUMN = {m.column: m for m in METRICS}
BY_NAME = {m.name: m for m in METRICS if m.name}           # by the metric's name in checks.csv
COLUMNS = [m.column for m in METRICS]

# The gate's defaults: every score is gated by its direction; OPTIONAL only when a gate names it.
HIGHER = [m.column for m in METRICS if m.gated == "always" and m.direction == "higher"]
LOWER = [m.column for m in METRICS if m.gated == "always" and m.direction == "lower"]
COUNTS = [m.column for m in METRICS if m.direction == "count"]   # any rise fails; a mean over cells is a sum
OPTIONAL = {m.column: m.higher for m in METRICS if m.gated == "named"}   # True: higher is better
GATED = [*COUNTS, *HIGHER, *LOWER, *OPTIONAL]
RELATIVE = {m.column for m in METRICS if m.relative}       # thresholds that are a share of the base value
SCORES = [m.column for m in METRICS if m.gated == "always"]   # the report's score tables, in column order
# What a strategy knows, in one number per cell: the mean of these (the report's retention composite, and what
# cost and the cache hit rate are read beside: the Pareto view, compare's gate on them).
RETENTION = ["goal_retention", "constraint_fidelity", "fact_retention"]


def higher_is_better(column: str) -> bool:
    m = BY_COLUMN.get(column)
    return m is not None and m.higher


def shown(view: str) -> list[Metric]:
    """The metrics a view (`metric.VIEWS`) shows, in column order."""
    return [m for m in METRICS if view in m.views]


def docs_table() -> str:
    """The README's table of summary columns, one row per metric (tests/test_docs.py keeps it there)."""
    rows = ["| column | meaning |", "|---|---|"]
    for m in METRICS:
        text = (m.meaning + (" (lower is better)" if m.direction == "lower" else "")).replace("|", "\\|")
        rows.append(f"| `{m.column}` | {text} |")
    return "\n".join(rows)


__all__ = ["METRICS", "FAMILIES", "BY_COLUMN", "BY_NAME", "COLUMNS", "HIGHER", "LOWER", "COUNTS", "OPTIONAL",
           "GATED", "RELATIVE", "SCORES", "RETENTION", "higher_is_better", "shown", "docs_table"]
