"""Shared fixtures. `loopback`: a started LoopbackServer (bench/testing/server.py) on 127.0.0.1,
answering OpenAI chat completions with the offline model; queue faults with `loopback.fail(kind, n)`."""
from __future__ import annotations

import os

import matplotlib
import pytest

from bench.testing import LoopbackServer

# Every run a test makes writes a report, whose figures are drawn in a process forked from this one
# (bench.report.figures.Painter): with pyplot imported once per pytest worker, none of those forks
# imports it again (about 2 s of CPU each).
matplotlib.use("Agg")
import matplotlib.pyplot  # noqa: E402,F401

# The reports the tests' runs write leave out their figures (`report.figures`, whose default this variable sets,
# in this process and the runs it starts): drawing them is most of a small run's CPU. The files that check
# figures, or what a figure's reading or caption carries, say `pytestmark = pytest.mark.figures` (see `_figures`);
# a run of the suite with COMPACTION_BENCH_FIGURES=true draws every one.
os.environ.setdefault("COMPACTION_BENCH_FIGURES", "false")


@pytest.fixture(autouse=True, scope="module")
def _figures(request):
    """Figures drawn for a module marked `figures`, before any of its module fixtures makes a run."""
    if request.node.get_closest_marker("figures") is None:
        yield
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COMPACTION_BENCH_FIGURES", "true")
        yield


def pytest_xdist_auto_num_workers(config):
    """`-n auto` is one worker more than the cores: the heavy files spend much of their time waiting on real
    time (a loopback server's latency, a Retry-After, the local model's server, child processes), and a
    third worker fills those waits on 2 cores (idle: 6:13 with two workers, 4:51 with three)."""
    return (os.cpu_count() or 1) + 1


def pytest_collection_modifyitems(items):
    """The files marked `heavy` first, each kept whole and otherwise in collection order: with one file per
    xdist worker handed out in this order, the long files start at once and the many short ones fill the
    cores at the end, instead of one long file starting last and running alone (every worker collects
    the same order)."""
    items.sort(key=lambda item: item.get_closest_marker("heavy") is None)


@pytest.fixture
def loopback():
    with LoopbackServer(lifetime=120) as server:
        yield server


@pytest.fixture
def api_key(monkeypatch):
    """A recognisable fake key in the environment, to prove it never lands on disk."""
    key = "sk-compbench-test-7f3a9c2e1d"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    return key


@pytest.fixture(scope="module")
def local_model():
    """The small real model (SmolLM2-135M-Instruct on CPU behind bench/testing/local/server.mjs), started for
    the module; skipped, saying what is missing, where `python -m bench.testing.local install` has not run."""
    from bench.testing.local import LocalModelServer, missing

    why = missing()
    if why:
        pytest.skip(f"local model not installed: {why}")
    with LocalModelServer() as server:
        yield server
