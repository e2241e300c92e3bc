"""Scorers read a finished cell's logs (never strategy internals) and return summary columns.

`score_cell` is the one entry point the run calls; each check adds its columns
and its rows for checks.csv.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

CHECK_COLUMNS = ["scenario", "strategy", "writer", "window", "seed", "check_point", "request", "event",
                 "metric", "item", "score", "detail"]


async def score_cell(cell: Any, cell_dir: Path, tok: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Summary columns and checks.csv rows for one cell."""
    return {}, []
