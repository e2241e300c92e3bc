"""`python tests/same_results.py REF NEW`: do two run folders hold the same results, timings aside?

A speed change must not move a score: summary.csv and checks.csv must match row for row except the
wall_s column, compactions.jsonl except each call's latency_s, and requests.jsonl byte for byte.
Prints one line per difference (the first few per file) and exits 1 if there is any.
"""
from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

TIMINGS = {"wall_s", "latency_s"}


def _csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as fh:
        return [{k: v for k, v in row.items() if k not in TIMINGS} for row in csv.DictReader(fh)]


def _untimed(value):
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _jsonl(path: Path) -> list:
    return [_untimed(json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def differences(ref: Path, new: Path, limit: int = 5) -> list[str]:
    out: list[str] = []
    for name, read in (("summary.csv", _csv), ("checks.csv", _csv), ("compactions.jsonl", _jsonl),
                       ("requests.jsonl", _jsonl)):
        a, b = ref / name, new / name
        if not a.exists() or not b.exists():
            if a.exists() != b.exists():
                out.append(f"{name}: only in {a if a.exists() else b}")
            continue
        ra, rb = read(a), read(b)
        if len(ra) != len(rb):
            out.append(f"{name}: {len(ra)} rows in {ref}, {len(rb)} in {new}")
        bad = [i for i, (x, y) in enumerate(zip(ra, rb)) if x != y]
        for i in bad[:limit]:
            x, y = ra[i], rb[i]
            keys = sorted(k for k in {*x, *y} if x.get(k) != y.get(k)) if isinstance(x, dict) else []
            out.append(f"{name}: row {i + 1} differs in {', '.join(keys) or 'value'}: "
                       f"{ {k: x.get(k) for k in keys[:4]} } vs { {k: y.get(k) for k in keys[:4]} }"[:400])
        if len(bad) > limit:
            out.append(f"{name}: ... {len(bad) - limit} more rows differ")
    return out


if __name__ == "__main__":
    found = differences(Path(sys.argv[1]), Path(sys.argv[2]))
    print("\n".join(found) or "same results (timings aside)")
    sys.exit(1 if found else 0)
