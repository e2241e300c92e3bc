"""The run report: report.md (the summary table) for now."""
from __future__ import annotations

from pathlib import Path

from .results import SUMMARY_COLUMNS, format_table, read_csv


def write_report(run_dir: Path) -> Path:
    rows = read_csv(Path(run_dir) / "summary.csv")
    text = "# compaction-bench report\n\n```\n" + format_table(rows, SUMMARY_COLUMNS) + "\n```\n"
    path = Path(run_dir) / "report.md"
    path.write_text(text, encoding="utf-8")
    return path
