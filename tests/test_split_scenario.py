"""Issue 26: a run over one scenario uses every worker. With fewer scenarios than workers the largest
scenario's cells are split across them, its scoring index worked out once in the parent (which the
workers fork from), and the results are those of a run on one core, file for file."""
from __future__ import annotations

from harden import HAND, cli
from same_results import differences

from bench.runner import cells as C
from bench.runner.plan import plan

RUN = [f"scenarios=[{HAND / 'pr-queue-small.yaml'}]", "strategies=[truncate,context_editing,naive]",
       "probes.enabled=false"]


def test_one_scenario_is_split_across_the_workers_with_its_index_made_once(monkeypatch):
    monkeypatch.setattr(C.os, "cpu_count", lambda: 2)
    cells, _, _ = plan(RUN, False)
    assert len({c.scenario.id for c in cells}) == 1 and len(cells) >= 3
    C.MEMO.judges.clear()
    C.MEMO.readings.clear()
    pools, groups = C._pools(cells, 2)
    try:
        assert len(pools) == 2 and len(groups) == 2 and all(groups)
        assert sorted(c.name for g in groups for c in g) == sorted(c.name for c in cells)
        assert len(C.MEMO.readings) == 1       # the shared index, made before the workers fork
    finally:
        for p in pools:
            p.shutdown()


def test_several_scenarios_are_not_split():
    cells, _, _ = plan([f"scenarios=[{HAND}]", "strategies=[truncate,context_editing]", "probes.enabled=false"], False)
    pools, groups = C._pools(cells, 2)
    try:
        assert all(len({c.scenario.id for c in g}) == 1 for g in groups)
        assert len(groups) == len({c.scenario.id for c in cells})
    finally:
        for p in pools:
            p.shutdown()


def test_a_split_scenario_gives_the_files_of_a_run_on_one_core(tmp_path):
    code, _, err = cli("run", *RUN, "concurrency=1", f"out={tmp_path / 'one'}")
    assert code == 0, err
    code, _, err = cli("run", *RUN, "concurrency=2", f"out={tmp_path / 'two'}")
    assert code == 0, err
    assert differences(tmp_path / "one", tmp_path / "two") == []
