"""The run's console: the folder first, one progress line with elapsed time and ETA, the report phase said,
plain lines (never carriage returns) where stderr is not a terminal, one line per cell with verbose=true."""
from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

import harden
from bench.cli.progress import Console, clock


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def cells(console: Console, clock_: Clock, total: int, step: float) -> None:
    console.started(Path("/tmp/x"), total, total)
    for n in range(1, total + 1):
        clock_.t += step
        console.cell(n, total, SimpleNamespace(name=f"s/naive/offline/1000/{n}"), {"wall_s": step})
    console.phase("writing report")
    console.close()


def test_plain_lines_without_a_terminal_at_most_every_ten_seconds_and_the_last_always():
    out, t = io.StringIO(), Clock()
    cells(Console(stream=out, tty=False, now=t), t, total=30, step=1.0)
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    assert lines[0] == "run folder: /tmp/x  (30 cells to run)"
    progress = [x for x in lines if x.startswith("[")]
    assert progress[0] == "[1/30] 3%  elapsed 0:01  ETA 0:29" and progress[-1].startswith("[30/30] 100%")
    assert 3 <= len(progress) <= 5                                       # throttled, not one per cell
    assert lines[-1] == "writing report… (0:30 so far)"


def test_a_terminal_gets_one_line_rewritten_in_place_then_the_phase_on_its_own_line():
    out, t = io.StringIO(), Clock()
    cells(Console(stream=out, tty=True, now=t), t, total=4, step=30.0)
    text = out.getvalue()
    assert text.count("\r") == 4 and text.count("\n") == 3              # folder, the progress line, the phase
    assert "ETA 1:30" in text and "[4/4] 100%  elapsed 2:00  ETA 0:00" in text
    assert text.endswith("writing report… (2:00 so far)\n")


def test_a_cell_whose_writer_never_answered_says_so_on_its_own_line():
    out, t = io.StringIO(), Clock()
    console = Console(stream=out, tty=False, now=t, alert=lambda row: row.get("flag", ""))
    console.cell(1, 2, SimpleNamespace(name="a"), {"flag": "NON-ANSWERS: ..."})
    console.cell(2, 2, SimpleNamespace(name="b"), {})
    assert out.getvalue().splitlines()[0] == "a: NON-ANSWERS: ..." and "b:" not in out.getvalue()


def test_verbose_keeps_a_line_per_cell():
    out, t = io.StringIO(), Clock()
    cells(Console(verbose=True, stream=out, tty=True, now=t), t, total=3, step=1.0)
    assert [x for x in out.getvalue().splitlines() if x.startswith("[")] == [
        f"[{n}/3] s/naive/offline/1000/{n}  1.0s" for n in (1, 2, 3)]
    assert clock(3725) == "1:02:05"


def test_a_run_says_its_folder_before_anything_else(tmp_path):
    code, out, err = harden.cli("run", "scenarios=[scenarios/hand/pr-queue-small.yaml]", "strategies=[truncate]",
                                "stress=[]", f"out={tmp_path / 'run'}", cwd=tmp_path)
    assert code == 0, err
    lines = err.splitlines()
    assert lines[0] == f"run folder: {tmp_path / 'run'}  (1 cell to run)"
    assert lines[1].startswith("[1/1] 100%  elapsed ") and "writing report…" in lines[2] and "\r" not in err
