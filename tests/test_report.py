"""The report: markdown + self-contained HTML + figures, re-rendered from a run's files."""
from __future__ import annotations

import csv
import re

import pytest

from bench.cli import main as cli
from bench.results import SUMMARY_COLUMNS, append_csv, read_csv, to_dataset


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "run"
    assert cli(["run", "scenarios=[scenarios/hand/injected-watch.yaml,scenarios/hand/pr-queue-small.yaml]",
                "strategies=[naive,truncate]", f"out={out}"]) == 0   # naive also under offline:realistic
    return out


def test_report_files_are_complete_and_self_contained(run):
    md = (run / "report.md").read_text()
    html = (run / "report.html").read_text()
    for section in ("Strategies", "Drift under repeated compaction", "Cost against retention",
                    "Prompt-cache hit rate by provider", "Per scenario", "Probes by kind", "Robustness to writer errors"):
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
    assert ds["summary"].num_rows == 6 and "goal_retention" in ds["summary"].column_names   # 2 x (naive x2, truncate)
    assert ds["checks"].num_rows == len(read_csv(run / "checks.csv"))


ROW = {"scenario": "s1", "strategy": "naive", "writer": "offline", "window": 1000, "seed": 0, "goal_retention": 0.5}


def tiny_run(tmp_path, name="run"):
    d = tmp_path / name
    d.mkdir()
    append_csv(d / "summary.csv", SUMMARY_COLUMNS, [ROW])
    return d


@pytest.mark.parametrize("file,content,says", [
    ("summary.csv", 'garbage,,"\n', "summary.csv: not a readable CSV"),
    ("summary.csv", "scenario,strategy\nx,y\n", "summary.csv: missing column 'writer'"),
    ("summary.csv", "scenario,strategy,writer,window,seed,goal_retention\nx,y,z,1,0,abc\n",
     "summary.csv line 2: column 'goal_retention' is not a number: 'abc'"),
    ("summary.csv", b"\xff\xfescenario\n", "summary.csv: not UTF-8 text"),
    ("checks.csv", "a,b\n1,2\n", "checks.csv: missing column 'metric'"),
    ("config.yaml", "not yaml: [\n", "config.yaml line 2: not valid YAML"),
    ("config.yaml", '["x"]\n', "config.yaml: expected a mapping"),
    ("requests.jsonl", '{"cell": \n{"cell": "x", "seq": []}\n', "requests.jsonl line 1: not JSON"),
])
def test_malformed_run_files_are_one_line_of_bad_input(tmp_path, capsys, file, content, says):
    d = tiny_run(tmp_path)
    (d / file).write_bytes(content if isinstance(content, bytes) else content.encode())
    assert cli(["report", str(d)]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_a_truncated_last_log_line_is_skipped(run, tmp_path):
    copy = tmp_path / "run"
    copy.mkdir()
    for name in ("summary.csv", "checks.csv", "config.yaml"):
        (copy / name).write_bytes((run / name).read_bytes())
    log = (run / "requests.jsonl").read_text()
    (copy / "requests.jsonl").write_text(log + log.splitlines()[-1][:40])       # interrupted mid-line
    assert cli(["report", str(copy)]) == 0
    assert "## Prompt-cache hit rate by provider" in (copy / "report.md").read_text()


def test_compaction_outcomes_count_failures_fallbacks_and_repairs():
    from bench.report.data import compaction_outcomes

    recs = [{"strategy": "vibey", "ok": True, "fallback": "mechanical: turn too big", "repairs": 1},
            {"strategy": "vibey", "ok": False, "fallback": "unchanged: model failed", "repairs": 0},
            {"strategy": "vibey", "ok": True, "fallback": None, "repairs": 0},
            {"strategy": "naive", "ok": True, "fallback": None, "repairs": 0}]
    out = compaction_outcomes(recs).set_index("strategy")
    assert out.loc["vibey", ["attempts", "failed", "fell_back", "repaired"]].tolist() == [3, 1, 2, 1]
    assert out.loc["vibey", "fallbacks"] in ("mechanical 1, unchanged 1", "unchanged 1, mechanical 1")
    assert out.loc["naive", "fell_back"] == 0 and out.loc["naive", "fallbacks"] == ""
