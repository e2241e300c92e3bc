"""`python -m bench.baseline`: regenerate results/baseline/summary.csv from the default offline run.

The committed baseline is what `compaction-bench compare` (and tests/test_compare.py)
gates against. Regenerate it whenever a strategy lands or changes on purpose, and
commit the new file with the change that explains it. Extra arguments are Hydra
overrides passed to the run (the baseline is meant to use none).
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from .config import ROOT
from .results import SUMMARY_COLUMNS, append_csv, read_csv

BASELINE = ROOT / "results" / "baseline"
VOLATILE = ("wall_s",)   # timing differs between machines; left empty so the file only changes with scores


def regenerate(overrides: list[str] | None = None, dest: Path = BASELINE) -> Path:
    from .run import run

    with tempfile.TemporaryDirectory(prefix="baseline-") as tmp:
        code = run([*(overrides or []), f"out={tmp}/run"])
        if code != 0:
            raise SystemExit(f"baseline: the run failed (exit {code}); nothing written")
        rows = read_csv(Path(tmp) / "run" / "summary.csv")
    rows.sort(key=lambda r: (r["scenario"], r["strategy"], r["writer"], r["window"], r["seed"]))
    for r in rows:
        r.update({k: "" for k in VOLATILE})
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / "summary.csv"
    tmp_path = path.with_suffix(".tmp")
    tmp_path.unlink(missing_ok=True)
    append_csv(tmp_path, SUMMARY_COLUMNS, rows)
    shutil.move(tmp_path, path)
    return path


def main(argv: list[str] | None = None) -> int:
    path = regenerate(list(sys.argv[1:] if argv is None else argv))
    print(f"baseline: {path} ({len(read_csv(path))} cells)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
