"""The compare gate: exit 1 on a regression, 2 on unreadable input; a fresh run against the baseline."""
from __future__ import annotations

import json
from pathlib import Path


from bench.cli import main as cli
ROOT = Path(__file__).resolve().parent.parent
from bench.results.store import SUMMARY_COLUMNS, append_csv, read_csv
import pytest

pytestmark = pytest.mark.heavy   # whole runs: scheduled first (tests/conftest.py)

ROW = {"scenario": "s1", "strategy": "naive", "writer": "offline", "window": 1000, "seed": 0,
       "goal_retention": 0.8, "constraint_fidelity": 0.9, "provenance_leakage": 0.0, "fact_retention": 0.5}


def run_dir(tmp: Path, name: str, *rows: dict) -> Path:
    d = tmp / name
    d.mkdir()
    append_csv(d / "summary.csv", SUMMARY_COLUMNS, rows)
    return d


def test_same_scores_pass(tmp_path):
    assert cli(["compare", str(run_dir(tmp_path, "a", ROW)), str(run_dir(tmp_path, "b", ROW))]) == 0


def test_a_drop_beyond_max_drop_fails(tmp_path, capsys):
    base = run_dir(tmp_path, "a", ROW)
    new = run_dir(tmp_path, "b", {**ROW, "goal_retention": 0.7})
    assert cli(["compare", str(base), str(new), "--max-drop", "0.05"]) == 1
    assert "goal_retention" in capsys.readouterr().out
    assert cli(["compare", str(base), str(new), "--max-drop", "0.2"]) == 0


def test_leakage_rise_and_missing_metric_fail(tmp_path):
    base = run_dir(tmp_path, "a", ROW)
    assert cli(["compare", str(base), str(run_dir(tmp_path, "b", {**ROW, "provenance_leakage": 0.5}))]) == 1
    assert cli(["compare", str(base), str(run_dir(tmp_path, "c", {**ROW, "fact_retention": ""}))]) == 1
    assert cli(["compare", str(base), str(run_dir(tmp_path, "d", {**ROW, "goal_retention": 0.95}))]) == 0


def test_a_cell_that_failed_in_new_fails(tmp_path):
    other = {**ROW, "scenario": "s2"}
    base = run_dir(tmp_path, "a", ROW, other)
    new = run_dir(tmp_path, "b", ROW)
    assert cli(["compare", str(base), str(new)]) == 0          # s2 simply not run: compared on common cells
    (new / "errors.jsonl").write_text(json.dumps({"cell": "s2/naive/offline/1000/0", "error": "boom"}) + "\n")
    assert cli(["compare", str(base), str(new)]) == 1


def test_a_cell_that_failed_then_finished_on_resume_passes(tmp_path, capsys):
    base = run_dir(tmp_path, "a", ROW)
    new = run_dir(tmp_path, "b", ROW)          # the resumed run wrote its row; errors.jsonl keeps the old failure
    (new / "errors.jsonl").write_text(json.dumps({"cell": "s1/naive/offline/1000/0", "error": "boom"}) + "\n")
    assert cli(["compare", str(base), str(new)]) == 0
    assert "failed in NEW" not in capsys.readouterr().out


def test_a_summary_without_key_columns_is_bad_input(tmp_path, capsys):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "summary.csv").write_text("scenario,strategy,window,seed,goal_retention\ns1,naive,1000,0,0.5\n")
    assert cli(["compare", str(bad), str(run_dir(tmp_path, "ok", ROW))]) == 2
    err = capsys.readouterr().err
    assert "no writer column" in err and "Traceback" not in err
    (bad / "summary.csv").write_text("scenario,strategy,writer,window,seed\ns1,naive\n")
    assert cli(["compare", str(bad), str(bad)]) == 2
    assert "line 2" in capsys.readouterr().err


def test_unreadable_input_exits_2(tmp_path, capsys):
    assert cli(["compare", str(tmp_path / "missing"), str(tmp_path)]) == 2
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "summary.csv").write_text("a,b\n1,2\n")
    assert cli(["compare", str(bad), str(bad)]) == 2
    assert "not a compaction-bench summary" in capsys.readouterr().err
    assert cli(["compare", str(run_dir(tmp_path, "x", ROW)), str(run_dir(tmp_path, "y", {**ROW, "scenario": "z"}))]) == 2


BASELINE = ROOT / "results" / "baseline" / "summary.csv"


def test_fresh_run_matches_the_committed_baseline(tmp_path):
    """CI gate: the hand-written scenarios and the quick suite (where vibey really checkpoints) with the
    default strategies, offline, against the baseline (regenerate it with `python -m bench.cli.baseline`
    when a change is meant to move scores)."""
    assert BASELINE.exists(), "results/baseline/summary.csv is missing: run python -m bench.cli.baseline"
    out = tmp_path / "fresh"
    quick = ",".join(["scenarios/hand", "scenarios/library/pr-queue-16k.json", "scenarios/library/forged-marker-24k.json",
                      "scenarios/library/withdrawal-32k.json", "scenarios/library/migration-32k.json"])
    assert cli(["run", f"scenarios=[{quick}]", f"out={out}"]) == 0
    fresh = {(r["scenario"], r["strategy"]) for r in read_csv(out / "summary.csv")}
    base = {(r["scenario"], r["strategy"]) for r in read_csv(BASELINE)}
    assert fresh <= base, f"cells missing from the baseline (regenerate it): {sorted(fresh - base)}"
    assert cli(["compare", str(BASELINE), str(out)]) == 0


def test_a_strategy_that_stops_compacting_fails_the_gate_on_overflow(tmp_path, capsys):
    """The reference adversary `stop_compacting`, put in naive's slot (Hydra's group override), as if
    naive had regressed into it: its requests overflow, and compare against the committed baseline
    fails naming the overflow."""
    out = tmp_path / "stopped"
    assert cli(["run", "suite=smoke", "strategies=[naive]", "strategy@strategy.naive=stop_compacting",
                "probes.enabled=false", f"out={out}"]) == 0
    capsys.readouterr()
    assert cli(["compare", str(BASELINE), str(out)]) == 1
    out = capsys.readouterr().out
    assert "naive/offline: overflow_requests 0 -> " in out and "no provider would serve" in out


def test_an_overflow_rise_fails_whatever_the_threshold(tmp_path):
    base = run_dir(tmp_path, "a", {**ROW, "overflow_requests": 0})
    new = run_dir(tmp_path, "b", {**ROW, "overflow_requests": 1})
    assert cli(["compare", str(base), str(new), "--max-drop", "1"]) == 1
