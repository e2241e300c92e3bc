"""`compaction-bench compare BASE NEW [--max-drop X]`: the CI gate.

Compares two runs' summary.csv per strategy (and writer) and metric, on the cells
both runs have, so a fresh run of part of the suite is gated against the
committed full baseline. Exit 1 when a quality metric drops (or leakage / stale
constraints / revived rejected options rise) by more than X, when requests over
the window rise at all, when a metric the baseline had is gone, or when NEW
failed a cell the baseline has; exit 2 on unreadable input.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .errors import BadInput
from .results import KEY_COLUMNS, cell_key, format_table, read_csv

HIGHER = ["goal_retention", "constraint_fidelity", "fact_retention", "decision_retention", "user_words_retained",
          "probe_pass_rate"]
LOWER = ["provenance_leakage", "stale_constraints", "rejected_revived"]
COUNTS = ["overflow_requests"]   # summed over the cells: any rise fails, whatever --max-drop says
INFO = ["compactions", "input_tokens", "cost_usd", "cache_hit_rate"]   # shown, never gated
DEFAULT_MAX_DROP = 0.02


def summary_path(arg: str) -> Path:
    p = Path(arg)
    path = p / "summary.csv" if p.is_dir() else p
    if not path.exists():
        raise BadInput(f"{arg}: no summary.csv there (give a results directory or a summary.csv)")
    return path


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


def failed_cells(arg: str) -> set[str]:
    """Cells a run recorded as failed (errors.jsonl next to its summary.csv)."""
    path = summary_path(arg).parent / "errors.jsonl"
    if not path.exists():
        return set()
    out = set()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: unreadable: {exc}")
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("cell"), str):
            out.add(rec["cell"])
    return out


def _num(v: str | None) -> float | None:
    try:
        return float(v) if v not in (None, "") else None
    except ValueError:
        return None


def _show(x: float | None, sign: bool = False) -> str:
    """Readable numbers: float noise shows as 0, token counts in full."""
    if x is None:
        return ""
    if abs(x) < 1e-9:
        x = 0.0
    text = f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.4g}"
    return ("+" if sign and x >= 0 else "") + text


def _sum(rows: list[dict[str, str]], metric: str) -> float | None:
    vals = [x for x in (_num(r.get(metric)) for r in rows) if x is not None]
    return sum(vals) if vals else None


def _mean(rows: list[dict[str, str]], metric: str) -> float | None:
    vals = [x for x in (_num(r.get(metric)) for r in rows) if x is not None]
    return sum(vals) / len(vals) if vals else None


def compare(base: list[dict[str, str]], new: list[dict[str, str]], max_drop: float,
            failed: set[str] = frozenset()) -> tuple[list[dict], list[str]]:
    """Diff rows per group and metric, and one line per regression. errors.jsonl is only ever appended,
    so a cell counts as failed only when NEW has no summary row for it (a resume may have finished it)."""
    new_keys = {cell_key(r) for r in new}
    problems = [f"{'/'.join(cell_key(r))}: failed in NEW" for r in base
                if "/".join(cell_key(r)) in failed and cell_key(r) not in new_keys]
    base = [r for r in base if cell_key(r) in new_keys]
    groups = sorted({(r["strategy"], r.get("writer", "")) for r in base})
    rows: list[dict] = []
    for strategy, writer in groups:
        b = [r for r in base if (r["strategy"], r.get("writer", "")) == (strategy, writer)]
        keys = {cell_key(r) for r in b}
        n = [r for r in new if cell_key(r) in keys]
        for metric in [*COUNTS, *HIGHER, *LOWER, *INFO]:
            total = metric in COUNTS
            old, cur = (_sum if total else _mean)(b, metric), (_sum if total else _mean)(n, metric)
            if old is None and cur is None:
                continue
            status = ""
            if total:
                cur, old = cur or 0.0, old or 0.0
                status = "REGRESSION" if cur > old else ("better" if cur < old else "ok")
            elif metric in HIGHER or metric in LOWER:
                if cur is None:
                    status = "MISSING"
                elif old is not None:
                    change = (old - cur) if metric in HIGHER else (cur - old)
                    status = "REGRESSION" if change > max_drop + 1e-9 else ("better" if change < -1e-9 else "ok")
            row = {"strategy": strategy, "writer": writer, "metric": metric,
                   "cells": sum(_num(r.get(metric)) is not None for r in n),
                   "base": _show(old), "new": _show(cur),
                   "delta": "" if old is None or cur is None else _show(cur - old, sign=True), "status": status}
            rows.append(row)
            if status in ("REGRESSION", "MISSING"):
                why = ("; requests over the window, which no provider would serve" if total
                       else f" (more than {max_drop} worse)" if status == "REGRESSION" else "")
                problems.append(f"{strategy}/{writer}: {metric} {row['base']} -> {row['new'] or 'missing'}{why}")
    return rows, problems


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="compaction-bench compare",
                                 description="Exit 1 when NEW is worse than BASE by more than --max-drop.")
    ap.add_argument("base", help="baseline results directory or summary.csv")
    ap.add_argument("new", help="new results directory or summary.csv")
    ap.add_argument("--max-drop", type=float, default=DEFAULT_MAX_DROP,
                    help=f"largest allowed drop of a 0-1 quality metric (default {DEFAULT_MAX_DROP})")
    args = ap.parse_args(argv)
    if args.max_drop < 0:
        raise BadInput("--max-drop: must be >= 0")
    base, new = read_summary(args.base), read_summary(args.new)
    failed = failed_cells(args.new)
    base_keys = {cell_key(r) for r in base}
    if not any(cell_key(r) in base_keys for r in new) and not failed:
        raise BadInput(f"{args.new}: no cell in common with {args.base}")
    rows, problems = compare(base, new, args.max_drop, failed)
    writers = {r["writer"] for r in rows}
    cols = ["strategy", *(["writer"] if len(writers) > 1 else []), "metric", "cells", "base", "new", "delta",
            "status"]
    print(format_table(rows, cols))
    extra = sum(cell_key(r) not in base_keys for r in new)
    if extra:
        print(f"note: {extra} cell(s) of NEW are not in BASE and were not compared")
    for p in problems:
        print(f"regression: {p}", file=sys.stderr)
    print(f"{len(problems)} regression(s) beyond --max-drop {args.max_drop}" if problems
          else f"no regression beyond --max-drop {args.max_drop}")
    return 1 if problems else 0


__all__ = ["compare", "main", "HIGHER", "LOWER"]
