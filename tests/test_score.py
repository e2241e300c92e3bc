"""`compaction-bench score RUN_DIR`: re-scoring a run from its logs reproduces it, restores what the
scorer writes, and refuses a folder it cannot re-plan with one line."""
from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import pytest

from bench.cli import main as cli

sys.path.insert(0, str(Path(__file__).parent))
from same_results import differences  # noqa: E402

ARGS = ["scenarios=[scenarios/hand/injected-watch.yaml,scenarios/hand/debug-then-recall.yaml]",
        "strategies=[full,truncate,naive,vibey]"]


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("score") / "run"
    assert cli(["run", *ARGS, f"out={out}"]) == 0
    return out


def test_an_untouched_run_scores_the_same(run, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    capsys.readouterr()
    assert cli(["score", str(copy)]) == 0
    assert "0 summary values changed" in capsys.readouterr().out
    assert differences(run, copy) == []
    assert (copy / "report.html").exists()


def test_what_the_scorer_writes_comes_back_from_the_logs(run, tmp_path, capsys):
    copy = tmp_path / "copy"
    shutil.copytree(run, copy)
    (copy / "checks.csv").unlink()
    with (copy / "summary.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        r["goal_retention"] = ""
    with (copy / "summary.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    capsys.readouterr()
    assert cli(["score", str(copy)]) == 0
    out = capsys.readouterr().out
    assert "changed:" in out and "goal_retention" in out
    assert differences(run, copy) == []


def test_a_folder_that_is_not_a_run_is_one_line(tmp_path, capsys):
    assert cli(["score", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no summary.csv" in err[0]
