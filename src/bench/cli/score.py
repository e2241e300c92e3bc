"""`compaction-bench score RUN_DIR`: re-score a finished run from its logs, without replaying it."""
from __future__ import annotations

import sys
from pathlib import Path

from bench.cli.parser import Parser
from bench.errors import BadInput
from bench.runner.rescore import rescore

SHOWN = 20   # changed values printed; the rest are counted


def main(argv: list[str]) -> int:
    p = Parser(prog="compaction-bench score",
               description="Re-score a finished run from its logs (no replay): fresh summary.csv, checks.csv, "
                           "repeats.csv and report, to review a scorer change on a big run.")
    p.add_argument("run_dir", help="a results folder a run wrote (config.yaml, summary.csv, the logs)")
    run_dir = Path(p.parse_args(argv).run_dir)
    if not (run_dir / "summary.csv").exists():
        raise BadInput(f"{run_dir}: no summary.csv (is it a results directory?)")
    done = rescore(run_dir, progress=lambda n, total, name: print(f"[{n}/{total}] {name}", file=sys.stderr))
    for line in done.changed[:SHOWN]:
        print(f"changed: {line}")
    if len(done.changed) > SHOWN:
        print(f"changed: ... {len(done.changed) - SHOWN} more")
    print(f"re-scored {len(done.rows)} cells: {len(done.changed)} summary values changed; "
          f"report: {run_dir / 'report.html'}")
    return 0
