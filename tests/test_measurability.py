"""The oracle is the proof of measurability, and headline membership is the session's (issue 23).

A metric the oracle `full` does not score perfectly at every request of a scenario is reported as "not
measurable on <scenario>" — empty in every cell, out of the means, the gate and the audit — never as a low
score; and whether a cell counts in the headline is decided by its session, never by what the strategy
reports about its own compactions.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from bench.harness.strategy import Compaction
from bench.results.store import read_csv
from bench.strategies.truncate import Truncate
from harden import cli

ROOT = Path(__file__).resolve().parent.parent
HAND = ROOT / "src" / "bench" / "scenarios" / "hand"


class NoopCompaction(Truncate):
    """The adversary of headline membership: truncate, plus one compaction reported on the first request
    that changes nothing. Under a rule that left out only strategies reporting no compaction, it put the
    sessions that fit the window (scored on the oracle's context) into its own headline means."""

    def begin(self, session) -> None:
        super().begin(session)
        self.reported = False

    async def prepare(self):
        if not self.reported:
            self.reported = True
            return Compaction(before=self.size(), after=self.size(), text="")
        return await super().prepare()


def reworded(tmp_path: Path) -> Path:
    """pr-queue-small with its done-words reworded ("reviewed", "leaving a comment") and its "Next:" lines
    gone: the finishing actions and the scenario's own finishing events still say where the queue stands
    (issue 23: read by the grammar of a finished action), so the oracle keeps goal_retention."""
    text = (HAND / "pr-queue-small.yaml").read_text(encoding="utf-8")
    for old, new in (("id: pr-queue-small", "id: pr-queue-reworded"), (" Next: #102.", ""), (" Next: #103.", ""),
                     (" I will go on with #104 meanwhile.", ""), ("Next in the queue: #105.", "Opening #105 now."),
                     (" Next: #106.", ""), ("I am merging it myself.", "I reviewed it and am leaving a comment.")):
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "pr-queue-reworded.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def unread(tmp_path: Path) -> Path:
    """pr-queue-small where the agent says what is next by reference: "Next in the queue: the PR after #104."
    A reader knows that is #105; the scorer ties "next" to the id it names, so not even the oracle keeps
    goal_retention until the next claim: the scenario is not measurable on goal, and says so."""
    text = (HAND / "pr-queue-small.yaml").read_text(encoding="utf-8")
    for old, new in (("id: pr-queue-small", "id: pr-queue-unread"),
                     ("Next in the queue: #105.", "Next in the queue: the PR after #104.")):
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "pr-queue-unread.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def fitting(tmp_path: Path) -> Path:
    """pr-queue-small on a window it fits: no strategy needs to compact."""
    text = (HAND / "pr-queue-small.yaml").read_text(encoding="utf-8")
    path = tmp_path / "pr-queue-roomy.yaml"
    path.write_text(text.replace("id: pr-queue-small", "id: pr-queue-roomy").replace("window: 4500", "window: 64000"),
                    encoding="utf-8")
    return path


def test_truncate_plus_a_reported_noop_compaction_scores_exactly_as_truncate(tmp_path):
    from bench.report import data, headline
    from bench.results.store import load

    out = tmp_path / "run"
    code, stdout, err = cli("run", f"scenarios=[{fitting(tmp_path)},{HAND / 'pr-queue-small.yaml'},"
                                   f"{HAND / 'injected-watch.yaml'}]",
                            "strategies=[full,truncate,test_measurability.NoopCompaction]", "probes.enabled=false",
                            "stress=[]", f"out={out}", cwd=tmp_path)
    assert code == 0, err
    rows = read_csv(out / "summary.csv")
    noop = [r for r in rows if r["strategy"] != "truncate" and r["oracle"] == "0"]
    assert [r["compactions"] for r in noop if r["scenario"] == "pr-queue-roomy"] == ["1"]   # it did report one
    assert {r["scenario"]: r["needs_compaction"] for r in rows} == {"pr-queue-roomy": "0", "pr-queue-small": "1",
                                                                    "injected-watch": "1"}
    summary = load(out)
    scored, apart = data.headline(summary)
    assert set(apart["scenario"]) == {"pr-queue-roomy"} and len(apart) == 3   # every strategy alike, the oracle too
    t = headline.table(scored).set_index("strategy")
    name = next(s for s in t.index if s not in ("truncate", "full"))
    for col, _, _ in headline.METRICS:
        if col in t.columns:
            assert t.loc[name, col] == t.loc["truncate", col] or t.loc[name, col] != t.loc[name, col], col
    assert t.loc[name, "cells"] == t.loc["truncate", "cells"] == 2
    assert "session fits the window" in err and "sessions that need compaction" in stdout


def test_finished_actions_keep_a_reworded_queue_measurable(tmp_path):
    code, out, err = cli("scenarios", "validate", "--strict", str(reworded(tmp_path)))
    assert code == 0 and "not measurable" not in err, err


def test_a_scenario_the_oracle_cannot_read_is_reported_not_scored(tmp_path):
    path = unread(tmp_path)
    code, out, err = cli("scenarios", "validate", str(path))
    assert code == 0 and "goal_retention: warning: not measurable: the oracle scores 0.889, below 1 at 6 of 27 " \
                         "requests; first at request 19 (event a6a)" in err
    code, _, err = cli("scenarios", "validate", "--strict", str(path))
    assert code == 2 and "does not show where it stands" in err

    run = tmp_path / "run"
    code, stdout, err = cli("run", f"scenarios=[{path},{HAND / 'pr-queue-small.yaml'}]", "strategies=[full,truncate]",
                            "probes.enabled=false", "stress=[]", f"out={run}", cwd=tmp_path)
    assert code == 0, err
    sentence = ("not measurable on pr-queue-unread: goal_retention (the oracle scores 0.889: below 1 at 6 of 27 "
                "requests)")
    assert sentence in stdout and "not measurable here: goal_retention" in err
    assert sentence in (run / "report.md").read_text(encoding="utf-8")
    rows = read_csv(run / "summary.csv")
    mine = [r for r in rows if r["scenario"] == "pr-queue-unread"]
    assert len(mine) == 2 and all(r["goal_retention"] == "" and r["unmeasured"] == "goal_retention=0.8889:6/27"
                                  for r in mine)
    assert all(r["goal_retention"] != "" and r["unmeasured"] == "" for r in rows if r["scenario"] == "pr-queue-small")
    checks = read_csv(run / "checks.csv")
    goal = [c for c in checks if c["scenario"] == "pr-queue-unread" and c["metric"] == "goal"]
    assert goal and all(c["point"] == "unmeasured" for c in goal)

    # the gate skips it there, and says so
    code, stdout, _ = cli("compare", str(run), str(run))
    assert code == 0 and f"note: {sentence}; not gated there" in stdout


def test_the_gate_does_not_fail_or_pass_a_metric_the_oracle_cannot_read():
    from bench.gate.compare import compare

    key = {"strategy": "s", "writer": "offline", "window": "100", "seed": "0"}
    base = [{**key, "scenario": "a", "goal_retention": "0.9", "unmeasured": ""},
            {**key, "scenario": "b", "goal_retention": "0.9", "unmeasured": ""}]
    new = [{**key, "scenario": "a", "goal_retention": "", "unmeasured": "goal_retention=0.5:3/4"},
           {**key, "scenario": "b", "goal_retention": "0.9", "unmeasured": ""}]
    res = compare(base, new)
    assert res.passed, [d.line() for d in res.problems]
    assert [d.scenario for d in res.cells if d.metric == "goal_retention"] == ["b"]
    mean = next(d for d in res.means if d.metric == "goal_retention")
    assert mean.cells == 1 and mean.base == mean.new == 0.9
    assert res.notes[0].startswith("not measurable on a: goal_retention (the oracle scores 0.500: below 1 at 3 of 4")


@pytest.mark.parametrize("markers", [True, False])
def test_leakage_without_markers_is_the_harness_not_a_misreading(markers):
    """Without source markers the harness hands background to the model as the user's words: the oracle's
    leakage there is the exposure every strategy starts from, not a misreading, so it stays measurable."""
    from bench.scenarios import loader
    from bench.scoring import oracle_reading
    from bench.scoring.checks import Judge
    from bench.tokens import tokenizer

    s = loader.load(HAND / "injected-watch.yaml")
    assert oracle_reading(Judge(s, tokenizer(), markers), markers) == {}


def test_cost_and_cache_are_gated_only_together_with_retention_not_falling():
    """A gate that names cost or the cache hit rate fails a change that is cheaper (or more cached) by knowing
    less, even when the retention metrics' own thresholds are loose: the cost is never read alone."""
    from bench.gate.compare import build_gate, compare

    key = {"strategy": "s", "writer": "offline", "window": "100", "seed": "0"}
    base = [{**key, "scenario": x, "goal_retention": "0.5", "constraint_fidelity": "0.4", "fact_retention": "0.3",
             "cost_usd": "1.0", "cache_hit_rate": "0.8"} for x in "ab"]
    padded = [{**r, "goal_retention": "0.4", "cost_usd": "0.9", "cache_hit_rate": "0.9"} for r in base]
    gate = build_gate(max_drop=1.0, thresholds=["cost_usd=0.1", "cache_hit_rate=0.05"])
    res = compare(base, padded, gate)
    bad = {(d.scenario, d.metric) for d in res.problems}
    assert not res.passed and {("a", "cost_usd"), ("b", "cache_hit_rate"), ("", "cost_usd")} <= bad
    line = next(d.line() for d in res.problems if d.metric == "cost_usd")
    assert "cheaper by knowing less: retention (goal, constraints, facts) 0.4 -> 0.3667" in line
    # cheaper at equal knowledge passes
    cheaper = [{**r, "cost_usd": "0.9", "cache_hit_rate": "0.9"} for r in base]
    assert compare(base, cheaper, gate).passed
    # and without a gate on cost, the retention gate alone decides, as before
    assert compare(base, padded, build_gate(max_drop=1.0)).passed


def test_the_findings_read_cost_and_cache_beside_retention():
    """No "best cost" on its own: the findings name the Pareto front of cost (and of cache) against retention,
    and say when the cheapest is cheaper by knowing less."""
    import pandas as pd

    from bench.report import headline

    def cell(strategy, scenario, goal, cost, cache):
        return {"scenario": scenario, "strategy": strategy, "writer": "offline", "window": 100, "seed": 0,
                "oracle": int(strategy == "full"), "needs_compaction": 1, "goal_retention": goal,
                "constraint_fidelity": goal, "fact_retention": goal, "cost_usd": cost, "cache_hit_rate": cache,
                "compactions": 0 if strategy == "full" else 3}

    rows = [cell(s, x, g, c, h) for x in ("a", "b") for s, g, c, h in
            (("full", 1.0, 1.0, 0.9), ("truncate", 0.4, 0.6, 0.7), ("good", 0.8, 0.5, 0.8), ("padded", 0.3, 0.45, 0.95))]
    summary = headline.with_cost_vs_full(pd.DataFrame(rows))
    summary = summary.assign(strategy=[f"{s} (oracle)" if o else s for s, o in zip(summary["strategy"], summary["oracle"])])
    t = headline.table(summary)
    text = " ".join(headline.findings(t, None, summary))
    assert "cost ×full: padded is best" not in text and "cost ×full read with retention" in text
    assert "The cheapest, padded, is cheaper by knowing less: retention 0.300 against good's 0.800." in text
    assert "The most cached, padded, is more cached by knowing less" in text
    assert "truncate (0.600, 0.400: good is cheaper and knows as much or more)" in text
