"""score_cell end to end on a replayed cell: every request scored, check-point rows, overflow, empty
columns, probes against the oracle, probes that fail to run."""
from __future__ import annotations

import asyncio
import json

from bench.errors import ModelError
from bench.harness.model import Model
from bench.runner.cells import run_cell
from bench.runner.plan import plan
from bench.models import build


SCEN = "scenarios/hand/injected-watch.yaml"


def cell(strategy: str = "truncate", extra: list[str] = ()):
    cells, _, _ = plan([f"scenarios=[{SCEN}]", f"strategies=[{strategy}]", *extra], False)
    return cells[0]


def run_one(c, tmp_path):
    return asyncio.run(run_cell(c, build(c.writer), tmp_path))


def test_check_points_follow_compactions_and_the_end(tmp_path):
    row = run_one(cell(), tmp_path)
    comps = [json.loads(x) for x in (tmp_path / "compactions.jsonl").read_text().splitlines()]
    reqs = [json.loads(x) for x in (tmp_path / "requests.jsonl").read_text().splitlines()]
    agent = [r["i"] for r in reqs if r["kind"] == "agent"]
    expected = {min(i for i in agent if i >= c["request"]) for c in comps if c["ok"]} | {agent[-1]}
    rows = csv_rows(tmp_path / "checks.csv")
    checks = [r for r in rows if r["point"] in ("compaction", "final")]
    assert {int(r["request"]) for r in checks} == expected
    every = [r for r in rows if r["point"] == "all"]
    assert every and all(r["request"] == "" for r in every)
    goal = next(r for r in every if r["metric"] == "goal" and r["item"] == "m1")
    assert f"of {len(agent) - 1} requests" in goal["detail"] or f"of {len(agent)} requests" in goal["detail"]
    assert row["user_words_retained"] is None and row["stale_constraints"] is not None
    assert 0 <= row["goal_retention"] <= 1 and row["cache_hit_rate"] is not None and row["cost_usd"] > 0
    probes = [r for r in reqs if r["kind"] == "probe"]
    assert len(probes) == 2 and all(r["cell"] == reqs[0]["cell"] for r in probes)


def test_full_keeps_everything_verbatim(tmp_path):
    row = run_one(cell("full"), tmp_path)
    assert row["goal_retention"] == 1.0 and row["fact_retention"] == 1.0 and row["provenance_leakage"] == 0.0
    assert row["constraint_fidelity"] == 1.0 and row["oracle"] == 1 and row["overflow_requests"] > 0


def test_a_strategy_that_never_compacts_keeps_nothing_over_the_window(tmp_path):
    """The base Strategy never compacts and is no oracle: its over-window requests score 0, so it
    cannot look like `full`, and the overflow is counted and priced apart."""
    row = run_one(cell("bench.strategy.Strategy"), tmp_path / "idle")
    full = run_one(cell("full"), tmp_path / "full")
    assert row["overflow_requests"] == full["overflow_requests"] > 0 and row["oracle"] == 0
    share = 1 - row["overflow_requests"] / row["requests"]
    assert row["fact_retention"] <= share + 1e-9 < full["fact_retention"]
    assert row["goal_retention"] <= share + 1e-9 and row["overflow_cost_usd"] > 0
    probes = [r for r in csv_rows(tmp_path / "idle" / "checks.csv") if r["metric"] == "probe"]
    assert probes and all(float(r["score"]) == 0 and "over the window" in r["detail"] for r in probes), probes


def test_markers_false_leaks_through_route_a(tmp_path):
    row = run_one(cell("full", ["markers=false"]), tmp_path)
    assert row["provenance_leakage"] == 1.0


class Broken(Model):
    name = "broken"

    async def chat(self, messages, *, tools=None, max_tokens=None, purpose=""):
        raise ModelError("agent down")


def test_a_failing_agent_makes_probes_failed_to_run(tmp_path, monkeypatch):
    import bench.models

    import bench.scoring

    real = bench.models.build
    monkeypatch.setattr(bench.scoring, "build_model", lambda cfg: Broken() if cfg is c.agent else real(cfg))
    import bench.runner.cells
    from bench.scoring.memo import Memo

    monkeypatch.setattr(bench.runner.cells, "MEMO", Memo())   # the oracle's answers cached from the working agent
    c = cell()
    row = run_one(c, tmp_path)
    probes = [r for r in csv_rows(tmp_path / "checks.csv") if r["metric"] == "probe"]
    assert len(probes) == 2 and all(r["score"] == "" and "failed to run" in r["detail"] for r in probes)
    # the oracle could not run either: nothing says the agent could answer them, so none counts, and each says why
    assert row["probe_pass_rate"] is None and row["probes_answerable"] == 0 and row["_oracle_unrun"] == 2
    assert all("; oracle failed to run: agent: agent down" in r["detail"] for r in probes)


def test_probes_the_oracle_fails_are_left_out(tmp_path):
    row = run_one(cell("full"), tmp_path)
    probes = [r for r in csv_rows(tmp_path / "checks.csv") if r["metric"] == "probe"]
    answerable = [r for r in probes if r["oracle"] == "1"]
    assert row["probes_answerable"] == len(answerable)
    assert all(float(r["score"]) == 1.0 for r in answerable)      # full's context is the oracle's
    if answerable:
        assert row["probe_pass_rate"] == 1.0


def test_probes_disabled_leave_the_column_empty(tmp_path):
    assert run_one(cell(extra=["probes.enabled=false"]), tmp_path)["probe_pass_rate"] is None


def csv_rows(path):
    import csv

    with path.open() as fh:
        return list(csv.DictReader(fh))


def test_a_worker_shares_one_judge_among_copies_of_a_scenario():
    """Each cell reaches a worker process as its own unpickled copy: an equal scenario gets the same
    Judge (and its findings per message), a changed one its own."""
    import pickle
    from dataclasses import replace

    from bench.scoring.memo import Memo
    from bench.tokens import tokenizer

    judge_for = Memo().judge
    s, tok = cell().scenario, tokenizer()
    copy = pickle.loads(pickle.dumps(s))
    assert copy is not s and judge_for(copy, tok, True) is judge_for(s, tok, True)
    changed = replace(s, system=s.system + " Be brief.")
    assert judge_for(changed, tok, True) is not judge_for(s, tok, True)
    assert judge_for(s, tok, False) is not judge_for(s, tok, True)
