"""shard=auto: the index from a Kubernetes Indexed Job, a SLURM array, GitLab's parallel jobs or a CI matrix's
BENCH_SHARD_INDEX; shards of one key spend no more than the account's limit together; merge stays the one
way back."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bench.cli import main as cli
from bench.errors import BadInput
from bench.results.shards import auto_spec
from bench.results.store import read_csv
from bench.testing import LoopbackServer
from test_shard import timeless

pytestmark = pytest.mark.heavy   # whole runs: scheduled first (tests/conftest.py)

RUN = ["suite=smoke", "strategies=[naive,truncate]", "stress=[]", "window=4000", "probes.enabled=false"]
ENV = ("BENCH_SHARD_INDEX", "BENCH_SHARD_COUNT", "JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN",
       "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_COUNT", "CI_NODE_INDEX", "CI_NODE_TOTAL")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def test_kubernetes_index_runs_the_cells_of_that_shard_and_merge_gives_the_whole_run(tmp_path, monkeypatch, capsys):
    assert cli(["run", *RUN, f"out={tmp_path / 'whole'}"]) == 0
    assert cli(["run", *RUN, "shard=3/4", f"out={tmp_path / 'explicit'}"]) == 0
    for index in range(4):
        monkeypatch.setenv("JOB_COMPLETION_INDEX", str(index))
        assert cli(["run", *RUN, "shard=auto/4", f"out={tmp_path / f'k{index}'}"]) == 0
    assert "shard 3/4 (from JOB_COMPLETION_INDEX=2)" in capsys.readouterr().err
    assert timeless(tmp_path / "k2" / "summary.csv") == timeless(tmp_path / "explicit" / "summary.csv")
    assert cli(["merge", *(str(tmp_path / f"k{i}") for i in range(4)), "--out", str(tmp_path / "merged")]) == 0
    for name in ("summary.csv", "checks.csv", "requests.jsonl", "compactions.jsonl"):
        assert timeless(tmp_path / "merged" / name) == timeless(tmp_path / "whole" / name), name


@pytest.mark.parametrize("env, spec", [
    ({"JOB_COMPLETION_INDEX": "2", "BENCH_SHARD_COUNT": "4"}, (3, 4)),
    ({"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_MIN": "4", "SLURM_ARRAY_TASK_COUNT": "4"}, (2, 4)),   # --array=4-7
    ({"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_COUNT": "3"}, (1, 3)),
    ({"SLURM_ARRAY_TASK_ID": "20", "SLURM_ARRAY_TASK_MIN": "10", "SLURM_ARRAY_TASK_STEP": "5",
      "SLURM_ARRAY_TASK_COUNT": "4"}, (3, 4)),                                                         # --array=10-25:5
    ({"CI_NODE_INDEX": "4", "CI_NODE_TOTAL": "4"}, (4, 4)),
    ({"BENCH_SHARD_INDEX": "1", "BENCH_SHARD_COUNT": "2", "JOB_COMPLETION_INDEX": "1"}, (1, 2)),     # explicit first
])
def test_where_auto_reads_the_index(env, spec):
    assert auto_spec("auto", env)[0] == spec


@pytest.mark.parametrize("shard, env, said", [
    ("auto", {}, "no shard index in the environment"),
    ("auto/4", {"JOB_COMPLETION_INDEX": "two"}, "JOB_COMPLETION_INDEX='two' is not a whole number"),
    ("auto", {"JOB_COMPLETION_INDEX": "2"}, "BENCH_SHARD_COUNT is not set"),
    ("auto/4", {"JOB_COMPLETION_INDEX": "4"}, "JOB_COMPLETION_INDEX=4 is outside 4 shards"),
    ("auto", {"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_STEP": "2",
              "SLURM_ARRAY_TASK_COUNT": "4"}, "is not a step of the array"),
    ("auto/3", {"BENCH_SHARD_INDEX": "1", "BENCH_SHARD_COUNT": "4"}, "says 4 shards, shard=auto/3 says 3"),
    ("auto/x", {}, "shard: must be I/N"),
])
def test_an_unreadable_index_is_one_line_and_exit_2(shard, env, said, tmp_path, monkeypatch, capsys):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert cli(["run", *RUN, f"shard={shard}", f"out={tmp_path / 'r'}"]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err


def test_shards_on_one_key_stay_within_the_limit_together(tmp_path):
    """Two shard processes at once against one server (one key), three cells each: each takes its share (2) of
    limits.in_flight=4, so together they never have more in flight than it, while each alone would take all of it
    (3 cells each, one call in flight per cell: 6 at once without the shares). The shares of other counts:
    tests/test_limiter.py."""
    env = {**os.environ, "OPENAI_API_KEY": "sk-compbench-test-7f3a9c2e1d", "CI": "true"}
    with LoopbackServer(latency=0.1, lifetime=600) as srv:
        procs = [subprocess.Popen(
            [sys.executable, "-m", "bench", "run", "suite=smoke", "scenarios=[scenarios/hand/debug-then-recall.yaml]",
             "strategies=[naive]", "stress=[]", "window=800", "probes.enabled=false", "responses.enabled=false",
             "repeats=6", "writer.model=openai/test", f"writer.api_base={srv.url}", "limits.in_flight=4",
             f"shard={i}/2", f"out={tmp_path / f's{i}'}"], env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True) for i in range(1, 3)]
        errs = [p.communicate(timeout=600)[1] for p in procs]
    assert all(p.returncode == 0 for p in procs), errs
    assert sum(len(read_csv(tmp_path / f"s{i}" / "summary.csv")) for i in range(1, 3)) == 6
    assert srv.max_in_flight <= 4 and all("at most 2 in flight" in e for e in errs), errs


def test_a_bad_limits_value_is_one_line(tmp_path, capsys):
    assert cli(["run", *RUN, "limits.in_flight=0", f"out={tmp_path / 'r'}"]) == 2
    assert "limits.in_flight: must be a positive integer" in capsys.readouterr().err
    with pytest.raises(BadInput):
        auto_spec("auto", {})
