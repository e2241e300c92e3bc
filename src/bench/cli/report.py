"""`compaction-bench report RUN_DIR`: re-render a run's report.md, report.html and figures."""
from __future__ import annotations

import argparse
from pathlib import Path

from bench.cli.parser import Parser
from bench.errors import BadInput
from bench.report import write_report

def main(argv: list[str]) -> int:
    p = Parser(prog="compaction-bench report", description="Re-render report.md and report.html of a run.")
    p.add_argument("run_dir", help="a results folder (with summary.csv)")
    p.add_argument("--figures", action=argparse.BooleanOptionalAction, default=None,
                   help="draw figures/*.png (default: the run's report.figures, true unless it said false)")
    a = p.parse_args(argv)
    run_dir = Path(a.run_dir)
    if not (run_dir / "summary.csv").exists():
        raise BadInput(f"{run_dir}: no summary.csv (is it a results directory?)")
    try:
        path = write_report(run_dir, figures=a.figures)
    except OSError as exc:   # figures/ is a file, report.html a directory, the folder read-only
        raise BadInput(f"{exc.filename or run_dir}: cannot write the report: {exc.strerror or exc}") from None
    print(f"report: {path} and {path.with_suffix('.html')}")
    return 0
