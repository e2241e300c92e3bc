"""The results folder (DESIGN §7): summary.csv written one finished cell at a time.

A column that does not apply to a cell, or that nothing computed, stays empty,
never zero. Finished cells are known by their summary row, which is what lets
an interrupted run be resumed.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Iterable

SUMMARY_COLUMNS = [
    "scenario", "strategy", "writer", "window", "seed", "events", "requests", "compactions",
    "compaction_failures", "goal_retention", "constraint_fidelity", "provenance_leakage",
    "stale_constraints", "fact_retention", "user_words_retained", "input_tokens", "cached_input_tokens",
    "output_tokens", "compaction_input_tokens", "compaction_output_tokens", "cost_usd", "cache_hit_rate",
    "probe_pass_rate", "wall_s",
]
KEY_COLUMNS = ["scenario", "strategy", "writer", "window", "seed"]


def cell_key(row: dict[str, Any]) -> tuple[str, ...]:
    return tuple(str(row[c]) for c in KEY_COLUMNS)


def append_csv(path: Path, columns: list[str], rows: Iterable[dict[str, Any]]) -> None:
    """Append rows, writing the header when the file is new; missing values stay empty."""
    new = not path.exists() or path.stat().st_size == 0
    with path.open("a", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=columns, extrasaction="ignore", restval="")
        if new:
            w.writeheader()
        for row in rows:
            w.writerow({k: _fmt(v) for k, v in row.items()})


def read_csv(path: Path) -> list[dict[str, str]]:
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def done_cells(out: Path) -> set[tuple[str, ...]]:
    return {cell_key(r) for r in read_csv(out / "summary.csv")}


def _fmt(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return v


def load(run_dir: str | Path):
    """summary.csv of a run as a pandas DataFrame (empty cells are NaN)."""
    import pandas as pd

    return pd.read_csv(Path(run_dir) / "summary.csv")


TABLE_COLUMNS = ["scenario", "strategy", "writer", "compactions", "goal_retention", "constraint_fidelity",
                 "provenance_leakage", "fact_retention", "input_tokens", "cache_hit_rate"]


def format_table(rows: list[dict[str, Any]], columns: list[str] = TABLE_COLUMNS) -> str:
    """A fixed-width text table of the columns that have any value."""
    cols = [c for c in columns if any(str(r.get(c, "")) != "" for r in rows)]
    if not rows:
        return "(no finished cells)"
    cells = [[_short(r.get(c, "")) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(lines)


def _short(v: Any) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    return str(int(f)) if f.is_integer() and "." not in str(v) else f"{f:.3f}"
