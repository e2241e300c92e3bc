"""The report: markdown + self-contained HTML + figures, re-rendered from a run's files."""
from __future__ import annotations

import csv
import re

import pytest

from bench.cli import main as cli
from bench.results.store import SUMMARY_COLUMNS, append_csv, load, read_csv, to_dataset

pytestmark = [pytest.mark.heavy, pytest.mark.figures]   # whole runs, scheduled first; their reports draw figures (tests/conftest.py)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "run"
    assert cli(["run", "scenarios=[scenarios/hand/injected-watch.yaml,scenarios/hand/pr-queue-small.yaml]",
                "strategies=[full,naive,truncate]", f"out={out}"]) == 0   # naive also under offline:realistic
    return out


def test_report_files_are_complete_and_self_contained(run):
    md = (run / "report.md").read_text()
    html = (run / "report.html").read_text()
    for section in ("The sawtooth", "Strategies", "What was lost", "Robustness to writer errors", "Writers",
                    "Drift under repeated compaction", "Cost against retention", "Prompt-cache hit rate by provider",
                    "Per scenario", "Probes by kind"):
        assert f"## {section}" in md and f"<h2>{section}</h2>" in html
    assert "not an LLM" in md
    pngs = sorted(p.name for p in (run / "figures").glob("*.png"))
    assert {"sawtooth.png", "quality.png", "drift.png", "cost.png", "cache.png", "scenarios.png"} <= set(pngs)
    assert html.count("data:image/png;base64,") == len(re.findall(r"!\[", md))
    assert not re.search(r"""(src|href)=['"](?!data:|#|view\.html['"])""", html)   # no external assets but the viewer
    assert "| truncate (reference) |" in md and "| naive |" in md and "| full (oracle) |" in md
    kinds = md.split("## Constraints by kind")[1].split("## ")[0]
    assert "| full | 1.000 |" in kinds and "| naive |" in kinds        # the oracle's check rows are found too


def test_writer_comparison_appears_with_several_writers(run, tmp_path):
    rows = read_csv(run / "summary.csv")
    copy = tmp_path / "run"
    copy.mkdir()
    with (copy / "summary.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows + [{**r, "writer": "openai/gpt-x"} for r in rows])
    assert cli(["report", str(copy)]) == 0
    md = (copy / "report.md").read_text()
    section = md.split("## Writers\n")[1].split("\n## ")[0]
    assert "| strategy | metric | offline | offline:realistic | openai/gpt-x |" in section.splitlines()
    # no config.yaml here says which writers were given: every writer but the stress profile is compared
    assert "| naive · openai/gpt-x |" in md and "| naive · offline |" in md


def test_report_of_a_missing_run_is_bad_input(tmp_path):
    assert cli(["report", str(tmp_path)]) == 2


def test_run_exports_as_a_dataset(run):
    ds = to_dataset(run)
    assert ds["summary"].num_rows == 8 and "goal_retention" in ds["summary"].column_names   # 2 x (full, naive x2, truncate)
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


def test_the_first_screen_names_the_run_and_ranks_strategies(run):
    """Identity lines, then the headline: reference rows first, cell means, cost relative to `full`,
    overflow beside; then sentences computed from it."""
    md = (run / "report.md").read_text()
    head = md.split("## ")[0]
    assert "Writers: `offline`, `offline:realistic`; agent (probes): `offline`; judge: `offline`." in head
    assert "Cache profile `openai`; prices of `gpt-5-mini`" in head and "2 scenarios, 8 cells" in head
    assert re.search(r"compaction-bench \d+\.\d+\.\d+", head)
    head = md.split("## Headline")[1].split("\n## ")[0]
    table = [line for line in head.splitlines() if line.startswith("|")]
    assert table[0].startswith("| strategy | cells | goal | constraints |") and "| cost ×full | overflow |" in table[0]
    names = [line.split("|")[1].strip() for line in table[2:]]
    assert names == ["full (oracle)", "truncate (reference)", "naive"]
    full = table[2].split("|")
    assert full[table[0].split("|").index(" cost ×full ")].strip() == "1.000"   # the oracle against itself
    summary = load(run)
    naive = summary[(summary["strategy"] == "naive") & (summary["writer"] == "offline")]
    col = table[0].split("|").index(" constraints ")
    shown = table[4].split("|")[col].split()
    assert float(shown[0]) == pytest.approx(naive["constraint_fidelity"].mean(), abs=1e-3)
    if len(shown) > 1:    # with its bootstrap interval over the cells around it
        low, high = (float(x.strip("[],")) for x in shown[1:])
        assert low <= float(shown[0]) <= high
    assert "constraints: naive is best at" in head              # the only contender
    assert "intervals" in head and "view" in head        # each lead says whether its 95% intervals overlap
    assert re.search(r"\d\.\d{3} \[\d\.\d{2}, \d\.\d{2}\]", "\n".join(table))


def test_the_console_prints_the_summary_and_the_report_path(tmp_path, capsys):
    out = tmp_path / "r"
    args = ["run", "scenarios=[scenarios/hand/pr-queue-small.yaml]", "strategies=[naive]", "stress=[]",
            "probes.enabled=false", f"out={out}"]
    assert cli(args) == 0
    printed = capsys.readouterr().out
    assert f"report: {out / 'report.html'}" in printed and printed.splitlines()[0].split()[:2] == ["strategy", "cells"]
    assert "pr-queue-small" not in printed                     # no per-cell rows unless asked
    assert cli([*args, "verbose=true"]) == 0                   # resumes: nothing to run, the same folder
    assert "pr-queue-small" in capsys.readouterr().out


def test_one_colour_per_strategy_by_sorted_name():
    from bench.report.figures import PALETTE, Colours

    c = Colours(["vibey", "naive", "full (oracle)", "naive"])
    assert [c("full"), c("naive"), c("vibey")] == PALETTE[:3] and c("full (oracle)") == c("full")
    assert Colours(["naive", "vibey", "full"])("vibey") == c("vibey")


def test_every_table_weighs_cells_alike():
    """Kinds and drift are means over cells: a cell with many items or check points counts once."""
    import pandas as pd

    from bench.report.data import constraint_kinds, drift

    key = {"strategy": "s", "writer": "offline", "window": "1000", "seed": "0"}
    rows = [{**key, "scenario": "big", "metric": "constraint", "point": "all", "kind": "ban", "item": f"c{i}",
             "score": 1.0} for i in range(9)]
    rows.append({**key, "scenario": "small", "metric": "constraint", "point": "all", "kind": "ban", "item": "c1",
                 "score": 0.0})
    assert constraint_kinds(pd.DataFrame(rows)).set_index("strategy").loc["s", "ban"] == pytest.approx(0.5)
    points = [{**key, "scenario": "a", "metric": "goal", "point": "compaction", "check_point": k, "score": v, "item": "m"}
              for k, v in ((1, 1.0), (2, 0.5))]
    points += [{**key, "scenario": "b", "metric": "goal", "point": "compaction", "check_point": k, "score": .2,
                "item": "m"} for k in (1, 2)]
    d = drift(pd.DataFrame(points)).set_index("check_point")["score"]
    assert d.loc[1] == 0 and d.loc[2] == pytest.approx(-0.25)   # each cell against its own first point


def test_cost_is_relative_to_the_oracle_on_the_same_scenario():
    import pandas as pd

    from bench.report.headline import with_cost_vs_full

    df = pd.DataFrame([{"scenario": s, "strategy": n, "window": 1, "seed": 0, "oracle": int(n == "full"), "cost_usd": c}
                       for s, n, c in (("a", "full", 2.0), ("a", "x", 1.0), ("b", "full", 10.0), ("b", "x", 15.0),
                                       ("c", "x", 3.0))])
    assert with_cost_vs_full(df)["cost_vs_full"].tolist()[:4] == [1.0, 0.5, 1.0, 1.5]
    assert with_cost_vs_full(df)["cost_vs_full"].isna().tolist()[4]


def test_what_was_lost_names_the_item_the_compaction_and_its_text(run):
    md = (run / "report.md").read_text()
    part = md.split("## What was lost")[1].split("## ")[0]
    rows = [line.split("|")[1:-1] for line in part.splitlines() if line.startswith("| naive")]
    assert rows, part
    lost = [r for r in rows if r[2].strip().startswith("constraint:")]
    assert lost and all(r[6].strip().startswith("#") or r[6].strip() == "none yet" for r in lost)
    assert any("“" in r[3] for r in lost)                  # the constraint's quote, from the scenario
    assert any(r[7].strip() for r in lost if r[6].strip() != "none yet")   # the compaction's text begins


def test_a_leak_is_shown_with_the_sentence_that_carried_it(tmp_path):
    out = tmp_path / "leaky"
    assert cli(["run", "scenarios=[scenarios/hand/injected-watch.yaml]", "strategies=[naive]", "stress=[]",
                "markers=false", "probes.enabled=false", f"out={out}"]) == 0
    checks = load(out, "checks")
    leaks = checks[(checks["metric"] == "leakage") & (checks["point"] == "all") & (checks["score"] > 0)]
    assert not leaks.empty, "the offline writer without markers leaks injected-watch's payload"
    md = (out / "report.md").read_text()
    part = md.split("## What was lost")[1].split("## ")[0]
    row = next(line for line in part.splitlines() if line.startswith("| naive | offline | injected-watch"))
    cells = [c.strip() for c in row.split("|")[1:-1]]
    assert cells[3] == leaks.iloc[0]["item"] and cells[5].startswith("request ") and len(cells[7]) > 20


def test_figures_drawn_in_a_second_process_are_the_ones_drawn_here(run, tmp_path, monkeypatch):
    """The Painter moves drawing to another process for speed only: the files must not change."""
    import shutil

    from bench.report import figures, write_report

    outs, init = {}, figures.Painter.__init__
    for parallel in (True, False):
        copy = tmp_path / f"p{parallel}"
        shutil.copytree(run, copy, ignore=shutil.ignore_patterns("figures", "report.*", ".report-cache"))
        monkeypatch.setattr(figures.Painter, "__init__", _forced(init, parallel))
        write_report(copy)
        outs[parallel] = ({p.name: p.read_bytes() for p in (copy / "figures").glob("*.png")},
                          (copy / "report.html").read_text().replace(copy.name, "RUN"))
    assert outs[True][0] and outs[True] == outs[False]


def _forced(init, parallel):
    def forced(self, _=None):
        init(self, parallel)
        assert (self.pool is not None) == parallel
    return forced


def test_a_script_without_a_main_guard_can_write_a_report(run, tmp_path):
    """The figure worker must not re-run the caller's script (as a spawned process would)."""
    import shutil
    import subprocess
    import sys

    copy = tmp_path / "run"
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns("figures", "report.*", ".report-cache"))
    script = tmp_path / "make_report.py"
    script.write_text(f"from bench.report import write_report\nprint(write_report({str(copy)!r}))\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("report.md") == 1 and (copy / "figures" / "sawtooth.png").exists()


def test_headline_membership_is_the_sessions_not_the_strategys():
    """Whether a cell counts is decided by its session — the oracle's largest request against the window
    (`needs_compaction`) — for every strategy alike: a strategy that reports a compaction on a session that
    fits cannot put itself in the headline, and one that never compacts a session too big for the window
    (its requests overflow and keep nothing) cannot take itself out."""
    import pandas as pd

    from bench.results.store import fitting, in_headline
    from bench.report import data

    df = pd.DataFrame([
        {"scenario": "fit", "window": 100, "strategy": "s", "oracle": 0, "needs_compaction": 0, "compactions": 0,
         "overflow_requests": 0, "goal_retention": 1.0},
        {"scenario": "fit", "window": 100, "strategy": "noop", "oracle": 0, "needs_compaction": 0, "compactions": 1,
         "overflow_requests": 0, "goal_retention": 1.0},
        {"scenario": "fit", "window": 100, "strategy": "full", "oracle": 1, "needs_compaction": 0, "compactions": 0,
         "overflow_requests": 0, "goal_retention": 1.0},
        {"scenario": "big", "window": 100, "strategy": "s", "oracle": 0, "needs_compaction": 1, "compactions": 0,
         "overflow_requests": 40, "goal_retention": 0.1},
        {"scenario": "big", "window": 100, "strategy": "t", "oracle": 0, "needs_compaction": 1, "compactions": 3,
         "overflow_requests": 0, "goal_retention": 0.5},
        {"scenario": "big", "window": 100, "strategy": "full", "oracle": 1, "needs_compaction": 1, "compactions": 0,
         "overflow_requests": 40, "goal_retention": 1.0}])
    kept, apart = data.headline(df)
    assert set(apart["scenario"]) == {"fit"} and len(apart) == 3 and set(kept["scenario"]) == {"big"} and len(kept) == 3
    rows = df.astype(str).to_dict("records")
    fit = fitting(rows)
    assert fit == {("fit", "100")} and [in_headline(r, fit) for r in rows] == [False] * 3 + [True] * 3
    # a summary from before the column: the oracle's own cells say whether the session fit
    old = df.drop(columns=["needs_compaction"])
    kept, apart = data.headline(old)
    assert set(apart["scenario"]) == {"fit"} and len(kept) == 3

def test_the_methodology_states_the_scorers_agreement_computed_with_this_code(run, tmp_path, monkeypatch):
    """κ per metric on the shipped test split, the corpus size and the commit: what `calibrate` measures now,
    never a number written into the text (a cache keyed by corpus and code keeps it cheap)."""
    import json

    from bench.report import headline
    from bench.scoring.agreement import CORPUS, fingerprint, summary

    md = (run / "report.md").read_text()
    section = md.split("## Methodology")[1]
    commit = headline.git_commit()
    if commit:
        assert f"at commit `{commit}`" in section
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))      # a fresh cache: computed, then read back
    fresh = summary()
    assert (tmp_path / "compaction-bench" / "calibration" / f"{fingerprint(CORPUS)}.json").is_file()
    assert json.loads((tmp_path / "compaction-bench" / "calibration" / f"{fingerprint(CORPUS)}.json").read_text()) == fresh
    assert f"{fresh['n']} labels" in section
    for m, v in fresh["metrics"].items():
        assert f"| {m} | {v['n']} | {v['kappa']:.3f} |" in section, m
    # and, beside it, the split never tuned on: the honest figure for wordings the corpus did not hold
    from bench.scoring.agreement import UNSEEN
    unseen = summary(UNSEEN)
    assert f"`{unseen['labels']}`, {unseen['n']} labels" in section
    unseen_part = section.split(unseen["labels"])[1]
    for m, v in unseen["metrics"].items():
        assert f"| {m} | {v['n']} | {v['kappa']:.3f} |" in unseen_part, m


def test_a_report_without_figures_says_so_and_keeps_every_table(run, tmp_path):
    """`report.figures=false` in the run's config.yaml (or `report --no-figures`): no figures/*.png and no
    figure in report.md, one line saying so, the same tables; `report --figures` draws them again."""
    import shutil

    import yaml

    from bench.report import write_report

    copy = tmp_path / "run"
    shutil.copytree(run, copy, ignore=shutil.ignore_patterns("figures", "report.*", ".report-cache"))
    cfg = yaml.safe_load((copy / "config.yaml").read_text())
    assert cfg["report"] == {"figures": True}            # the module's runs draw (tests/conftest.py)
    (copy / "config.yaml").write_text(yaml.safe_dump({**cfg, "report": {"figures": False}}))
    write_report(copy)
    md = (copy / "report.md").read_text()
    tables = lambda text: [x for x in text.splitlines() if x.startswith("|")]   # noqa: E731
    assert "Figures not drawn (`report.figures=false`)" in md and "](figures/" not in md and "**Reading:**" not in md
    assert not (copy / "figures").exists() and "<img" not in (copy / "report.html").read_text()
    assert tables(md) == tables((run / "report.md").read_text())
    assert cli(["report", "--figures", str(copy)]) == 0
    assert (copy / "figures" / "sawtooth.png").exists() and "](figures/sawtooth.png)" in (copy / "report.md").read_text()
