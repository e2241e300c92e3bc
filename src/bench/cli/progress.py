"""The run's console while it goes (bench.runner.run.Watch): the results folder first, then one progress line
(done/total, elapsed, ETA), then what the run is doing after its cells.

On a terminal the progress line is rewritten in place; where stderr is not a terminal (CI logs, a pipe) a
carriage return would pile up as garbage, so plain lines are written, at most one every `EVERY` seconds and
the last one always. `verbose=true` keeps one line per cell, with what the cell must not hide.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable, TextIO

from bench.models.progress import EVERY, quiet


def clock(seconds: float) -> str:
    s = int(round(max(0.0, seconds)))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Console:
    def __init__(self, verbose: bool = False, line: Callable[[int, int, Any, dict], str] | None = None,
                 stream: TextIO | None = None, tty: bool | None = None, now: Callable[[], float] = time.monotonic,
                 alert: Callable[[dict], str] = lambda row: ""):
        self.verbose = verbose
        self.alert = alert         # what a cell must say even without verbose (a writer that never answered)
        self.line = line or (lambda n, total, cell, row: f"[{n}/{total}] {cell.name}  {row.get('wall_s')}s")
        self.stream = stream or sys.stderr
        self.tty = (not quiet()) if tty is None else tty
        self.now = now
        self.start = now()
        self.said = float("-inf")
        self.open = False          # a progress line waits on the terminal for its newline

    def _print(self, text: str) -> None:
        if self.open:
            self.stream.write("\n")
            self.open = False
        print(text, file=self.stream, flush=True)

    def started(self, out: Path, todo: int, total: int) -> None:
        self.start = self.now()
        done = total - todo
        self._print(f"run folder: {out}  ({todo} cell{'s' if todo != 1 else ''} to run"
                    + (f"; resuming: {done} of {total} cells already done" if done else "") + ")")

    def progress(self, n: int, total: int) -> str:
        elapsed = self.now() - self.start
        eta = elapsed / n * (total - n) if n else 0.0
        return f"[{n}/{total}] {100 * n // max(total, 1)}%  elapsed {clock(elapsed)}  ETA {clock(eta)}"

    def cell(self, n: int, total: int, cell: Any, row: dict[str, Any]) -> None:
        if self.verbose:
            self._print(self.line(n, total, cell, row))
            return
        text = self.progress(n, total)
        if self.alert(row):
            self._print(f"{cell.name}: {self.alert(row)}")
        if self.tty:
            self.stream.write(f"\r{text}  {cell.name}"[:140].ljust(100) if n < total else f"\r{text}".ljust(100))
            self.stream.flush()
            self.open = True
            return
        if n == total or self.now() - self.said >= EVERY:
            self._print(text)
            self.said = self.now()

    def phase(self, what: str) -> None:
        self._print(f"{what}… ({clock(self.now() - self.start)} so far)")

    def close(self) -> None:
        if self.open:
            self.stream.write("\n")
            self.stream.flush()
            self.open = False


__all__ = ["Console", "clock"]
