"""repeats=K with a "real" model over HTTP: the loopback server answers with seeded variation, so repeats
differ and each is reproducible; repeats.csv, the report's intervals and compare's verdicts follow.
Also the committable baseline's round trip."""
from __future__ import annotations

import json

import pytest

from bench.cli import main as cli
from bench.results.store import read_csv
from bench.testing import LoopbackServer

RUN = ["scenarios=[scenarios/hand/pr-queue-small.yaml]", "strategies=[naive]", "writer.model=openai/loopback", "writer.backoff=0.01",
       "responses.enabled=false", "probes.enabled=true", "stress=[]"]


@pytest.fixture(scope="module")
def varied(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("repeats")
    with LoopbackServer(lifetime=300, vary="realistic") as srv:
        for name, extra in (("a", ["repeats=3"]), ("again", ["seed=1"]), ("later", ["repeats=3", "seed=3"])):
            assert cli(["run", *RUN, f"writer.api_base={srv.url}", f"out={tmp / name}", *extra]) == 0
        seeds = sorted({b.get("seed", 0) for b in srv.bodies})
    return tmp, seeds


def test_repeats_differ_and_each_is_reproducible(varied):
    tmp, seeds = varied
    assert seeds == [0, 1, 2, 3, 4, 5]   # repeat k asked with sampling seed k (0 sent as none)
    rows = read_csv(tmp / "a" / "summary.csv")
    assert sorted({r["seed"] for r in rows}) == ["0", "1", "2"] and len(rows) == 3
    key = lambda r: (r["scenario"], r["seed"])  # noqa: E731
    scores = lambda d: {key(r): r["constraint_fidelity"] for r in read_csv(tmp / d / "summary.csv")}  # noqa: E731
    again = scores("again")    # seed 1 alone, run again: the same answers, the same scores
    assert again and again == {k: v for k, v in scores("a").items() if k[1] == "1"}
    by_seed = {}
    for (scenario, seed), v in scores("a").items():
        by_seed.setdefault(scenario, set()).add(v)
    assert any(len(v) > 1 for v in by_seed.values()), "seeded variation made no repeat differ"


def test_repeats_csv_has_mean_spread_and_pass_k(varied):
    tmp, _ = varied
    rep = read_csv(tmp / "a" / "repeats.csv")
    assert len(rep) == 1 and all(r["repeats"] == "3" for r in rep)
    assert any(float(r["constraint_fidelity_sd"] or 0) > 0 or float(r["goal_retention_sd"] or 0) > 0 for r in rep)
    for r in rep:
        if r["probe_pass_k"]:
            assert float(r["probe_pass_k"]) <= float(r["probe_pass_rate"]) + 1e-9


def test_report_and_markdown_show_intervals_and_verdicts(varied, capsys):
    tmp, _ = varied
    report = (tmp / "a" / "report.md").read_text()
    assert "| strategy | metric | cells | mean [95%] |" in report
    assert "bootstrap over scenarios and repeats (3 per cell" in report
    assert "probe_pass_k" in report
    assert cli(["compare", str(tmp / "a"), str(tmp / "later"), "--format", "markdown", "--noise-aware"]) in (0, 1)
    md = capsys.readouterr().out
    assert md.startswith("### compaction-bench gate:")
    verdicts = set(__import__("re").findall(r"\*\*(better|worse|tied)\*\*", md))
    assert "tied" in verdicts
    assert cli(["compare", str(tmp / "a"), str(tmp / "later"), "--format", "json"]) in (0, 1)
    data = json.loads(capsys.readouterr().out)
    means = [m for m in data["means"] if m["metric"] == "constraint_fidelity"]
    assert means and means[0]["interval"]["low"] <= means[0]["delta"] <= means[0]["interval"]["high"]


def test_baseline_round_trip(tmp_path, capsys):
    base = tmp_path / "ci-baseline"
    args = ["suite=smoke", "strategies=[naive]", "stress=[]", "probes.enabled=false"]
    assert cli(["baseline", *args, "--out", str(base)]) == 0
    assert sorted(p.name for p in base.iterdir()) == ["config.yaml", "scenarios.csv", "summary.csv"]
    assert all(r["wall_s"] == "" for r in read_csv(base / "summary.csv"))
    assert "/tmp" not in (base / "config.yaml").read_text().split("overrides")[0].split("out:")[1].split("\n")[0]
    new = tmp_path / "new"
    assert cli(["run", *args, f"out={new}"]) == 0
    assert cli(["compare", str(base), str(new)]) == 0
    worse = tmp_path / "worse"     # truncate put in naive's slot: a strategy change that loses constraints
    assert cli(["run", *args, "strategy@strategy.naive=truncate", f"out={worse}"]) == 0
    capsys.readouterr()
    assert cli(["compare", str(base), str(worse)]) == 1
    assert capsys.readouterr().out.splitlines()[0].startswith("regression: ")
    assert cli(["baseline", *args, "out=x", "--out", str(base)]) == 2
    assert "give the folder with --out DIR" in capsys.readouterr().err
