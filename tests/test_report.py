"""The report: markdown + self-contained HTML + figures, re-rendered from a run's files."""
from __future__ import annotations

import csv
import re

import pytest

from bench.cli import main as cli
from bench.results import read_csv, to_dataset


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "run"
    assert cli(["run", "scenarios=[scenarios/hand/injected-watch.yaml,scenarios/hand/pr-queue-small.yaml]",
                "strategies=[naive,truncate]", f"out={out}"]) == 0
    return out


def test_report_files_are_complete_and_self_contained(run):
    md = (run / "report.md").read_text()
    html = (run / "report.html").read_text()
    for section in ("Strategies", "Drift under repeated compaction", "Cost against retention",
                    "Prompt-cache hit rate by provider", "Per scenario", "Probes by kind"):
        assert f"## {section}" in md and f"<h2>{section}</h2>" in html
    assert "not an LLM" in md
    pngs = sorted(p.name for p in (run / "figures").glob("*.png"))
    assert {"quality.png", "drift.png", "cost.png", "cache.png", "scenarios.png"} <= set(pngs)
    assert html.count("data:image/png;base64,") == len(re.findall(r"!\[", md))
    assert not re.search(r"""(src|href)=['"](?!data:)""", html)          # no external assets
    assert "| truncate |" in md and "| naive |" in md


def test_writer_comparison_appears_with_several_writers(run, tmp_path):
    rows = read_csv(run / "summary.csv")
    copy = tmp_path / "run"
    copy.mkdir()
    with (copy / "summary.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows + [{**r, "writer": "openai/gpt-x"} for r in rows])
    assert cli(["report", str(copy)]) == 0
    assert "## Writer models" in (copy / "report.md").read_text()


def test_report_of_a_missing_run_is_bad_input(tmp_path):
    assert cli(["report", str(tmp_path)]) == 2


def test_run_exports_as_a_dataset(run):
    ds = to_dataset(run)
    assert ds["summary"].num_rows == 4 and "goal_retention" in ds["summary"].column_names
    assert ds["checks"].num_rows == len(read_csv(run / "checks.csv"))
