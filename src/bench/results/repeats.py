"""repeats.csv: with `repeats=K` (or a sweep over seed), each cell's mean and spread over its repeats,
and pass^k of its probes (a probe counts as kept only when it passed in every repeat).

Written from summary.csv and checks.csv at the end of a run (and by merge), so it always agrees with
them; a run whose cells each ran once has none.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from bench.scoring.metrics import GATED
from bench.results.store import append_csv, read_csv
from bench.results.stats import pass_hat_k

CELL = ["scenario", "strategy", "writer", "window"]
SPREAD = [*GATED]
COLUMNS = [*CELL, "repeats", *[c for m in SPREAD for c in (m, f"{m}_sd")], "probe_pass_k"]


def _num(v: Any) -> float | None:
    try:
        return float(v) if v not in (None, "") else None
    except ValueError:
        return None


def spread(summary: list[dict[str, str]], checks: list[dict[str, str]]) -> list[dict[str, Any]]:
    """One row per cell that ran more than once, in first-seen order."""
    groups: dict[tuple, list[dict[str, str]]] = {}
    for r in summary:
        groups.setdefault(tuple(r[c] for c in CELL), []).append(r)
    probes: dict[tuple, dict[str, list[bool]]] = {}
    for c in checks:
        if c.get("point") == "probe" and c.get("metric") == "probe" and str(c.get("oracle", "")) != "0":
            probes.setdefault(tuple(c[k] for k in CELL), {}).setdefault(c["item"], []).append(_num(c["score"]) == 1)
    rows = []
    for key, rs in groups.items():
        if len({r["seed"] for r in rs}) < 2:
            continue
        row: dict[str, Any] = {**dict(zip(CELL, key)), "repeats": len(rs)}
        for m in SPREAD:
            vals = [x for x in (_num(r.get(m)) for r in rs) if x is not None]
            if vals:
                mean = sum(vals) / len(vals)
                row[m] = round(mean, 6)
                row[f"{m}_sd"] = round(math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)), 6) \
                    if len(vals) > 1 else 0.0
        if key in probes:
            # as in probe_pass_rate, a repeat whose oracle could not answer the probe says nothing of it
            row["probe_pass_k"] = pass_hat_k(probes[key])
        rows.append(row)
    return rows


def write_spread(run_dir: Path) -> Path | None:
    rows = spread(read_csv(run_dir / "summary.csv"), read_csv(run_dir / "checks.csv"))
    path = run_dir / "repeats.csv"
    path.unlink(missing_ok=True)
    if not rows:
        return None
    append_csv(path, COLUMNS, rows)
    return path


__all__ = ["spread", "write_spread", "COLUMNS"]
