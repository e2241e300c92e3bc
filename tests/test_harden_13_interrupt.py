"""Issue 26, stopping a run: SIGTERM (what `kill`, `timeout` and CI runners send) and Ctrl-C in every
phase — a cell's replay and scoring (in the bench or in a worker), storing a cell, sorting the files, the
report — end the run with one line and exit 143 (130 for Ctrl-C), without a traceback; every cell the
console called finished is on disk, and a resume ends with the very files of a run never interrupted.
A run started in the background with SIGINT ignored stops on SIGTERM (docs/reference.md)."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harden import HAND, ROOT, cli
from same_results import differences

pytestmark = pytest.mark.heavy   # whole runs: scheduled first (tests/conftest.py)

DRIVER = Path(__file__).resolve().parent / "data" / "interrupt_run.py"
CELLS = 4
RUN = [f"scenarios=[{HAND / 'debug-then-recall.yaml'},{HAND / 'pr-queue-small.yaml'}]",
       "strategies=[truncate,context_editing]", "probes.enabled=false"]
ENV = {**os.environ, "CI": "true", "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """A run never interrupted: what every stopped-and-resumed folder must end up as."""
    out = tmp_path_factory.mktemp("clean") / "run"
    code, _, err = cli("run", *RUN, "concurrency=2", f"out={out}")
    assert code == 0, err
    return out


def finished(err: str) -> int:
    """How many cells the console reported finished: its progress lines `[k/N] P%  elapsed …` (the highest k)."""
    return max((int(m.group(1)) for m in re.finditer(r"^\[(\d+)/\d+\] ", err, re.M)), default=0)


def stored(out: Path) -> set[str]:
    path = out / "summary.csv"
    if not path.exists():
        return set()
    rows = path.read_text().splitlines()[1:]
    return {"/".join(r.split(",")[:5]) for r in rows}


def stop(tmp_path, phase: str, sig: str, n: int, concurrency: int) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, str(DRIVER), phase, sig, str(n), str(tmp_path / "count"), *RUN,
                           f"concurrency={concurrency}", f"out={out}"],
                          cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300)
    return proc, out


CASES = {   # case -> (phase, signal, at its Nth beginning, concurrency)
    "replay-first-cell": ("replay", "TERM", 1, 1),
    "replay-third-cell": ("replay", "TERM", 3, 1),
    "replay-in-a-worker": ("replay", "TERM", 3, 2),
    "score-in-the-bench": ("score", "TERM", 2, 1),
    "score-in-a-worker": ("score", "TERM", 3, 2),
    "store": ("store", "TERM", 2, 2),
    "order": ("order", "TERM", 1, 2),
    "report": ("report", "TERM", 1, 2),
    "ctrl-c-replay": ("replay", "INT", 3, 1),
    "ctrl-c-score-in-a-worker": ("score", "INT", 3, 2),
    "ctrl-c-report": ("report", "INT", 1, 1),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_stopped_run_keeps_every_finished_cell_and_resumes_to_the_same_files(clean, tmp_path, case):
    phase, sig, n, concurrency = CASES[case]
    proc, out = stop(tmp_path, phase, sig, n, concurrency)
    assert proc.returncode == (143 if sig == "TERM" else 130), proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("stopped (SIGTERM)" if sig == "TERM" else "interrupted") and "cells are kept" in last
    said = finished(proc.stderr)
    assert said <= len(stored(out)), (said, stored(out))   # nothing the console called finished is lost
    if phase in ("order", "report"):
        assert len(stored(out)) == CELLS
    code, _, err = cli("run", *RUN, "concurrency=2", f"out={out}")
    assert code == 0, err
    assert differences(clean, out) == []


def test_sigterm_mid_run_keeps_the_cells_stored_so_far(clean, tmp_path):
    """A real `kill PID` at an unplanned moment: whatever the console reported finished is on disk."""
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "bench", "run", *RUN, "concurrency=2", f"out={out}"],
                            cwd=tmp_path, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None and not stored(out):
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    err = proc.communicate(timeout=120)[1]
    if proc.returncode == 0:        # it had finished by the time the signal came: nothing to stop
        return
    assert proc.returncode == 143 and "Traceback" not in err, err
    assert finished(err) <= len(stored(out))


def test_a_background_run_with_sigint_ignored_stops_on_sigterm(tmp_path):
    """`compaction-bench run ... &` from a script: the shell starts it with SIGINT ignored, so kill -INT
    does nothing; `kill PID` (SIGTERM) stops it as Ctrl-C would."""
    out = tmp_path / "run"
    script = (f"{sys.executable} {DRIVER} replay TERM 0 {tmp_path / 'count'} {' '.join(RUN)} concurrency=1 "
              f"out={out} 2>{tmp_path / 'err'} & echo $!; wait")
    shell = subprocess.Popen(["sh", "-c", script], cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, text=True)
    pid = int(shell.stdout.readline())
    count = tmp_path / "count"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (count.exists() and count.stat().st_size >= 2):
        time.sleep(0.02)
    ignored = int(re.search(r"SigIgn:\s*([0-9a-f]+)", Path(f"/proc/{pid}/status").read_text()).group(1), 16)
    assert ignored & (1 << (signal.SIGINT - 1))               # the shell did start it with SIGINT ignored
    os.kill(pid, signal.SIGTERM)
    shell.wait(timeout=120)
    err = (tmp_path / "err").read_text()
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("stopped (SIGTERM)"), err
    assert finished(err) <= len(stored(out))
