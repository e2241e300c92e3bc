"""Counters of a model's calls, shown as a tqdm bar on long interactive runs, and as plain lines where
stderr is not a terminal (CI logs, piped output).

Without a terminal (or with CI=true) a line is written after a call that took `SLOW` seconds or more, and
otherwise at most every `EVERY` seconds, so a run against a slow local model says what it is doing and a
fast one does not flood the log; while one call is under way longer than `HEARTBEAT` seconds, a heartbeat
line says so (LitellmModel). The counters are kept either way (tests and reports read them).
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any


def quiet() -> bool:
    ci = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")
    return ci or not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty())


@dataclass
class CallStats:
    calls: int = 0          # chat() calls answered or failed
    http: int = 0           # requests actually sent (retries included)
    retries: int = 0
    cache_hits: int = 0
    failures: int = 0       # calls that raised ModelError after their retries


EVERY = 10.0        # seconds between two plain lines at most (fast models)
SLOW = 10.0         # a call at least this long gets its own line
HEARTBEAT = 30.0    # a call under way this long says so, and again every as long


class Progress:
    def __init__(self, name: str):
        self.name = name
        self.stats = CallStats()
        self._bar: Any = None
        self._said = 0.0                   # when the last plain line was written

    def line(self, text: str) -> None:
        print(f"{self.name}: {text}", file=sys.stderr, flush=True)
        self._said = time.monotonic()

    def counts(self) -> str:
        s = self.stats
        return (f"{s.calls} calls, {s.failures} failed, {s.retries} retries, {s.cache_hits} cache hits")

    def heartbeat(self, waited: float) -> None:
        """A call has been under way `waited` seconds (plain lines only; the bar shows activity itself)."""
        if quiet():
            self.line(f"call {self.stats.calls + 1} under way for {waited:.0f} s ({self.counts()} so far)")

    def update(self, seconds: float | None = None) -> None:
        """Called once per finished chat() call (`seconds`: how long it took, when known)."""
        if quiet():
            slow = seconds is not None and seconds >= SLOW
            if slow or time.monotonic() - self._said >= EVERY:
                self.line(self.counts() + (f"; the last took {seconds:.1f} s" if seconds is not None else ""))
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(desc=f"{self.name} calls", unit="call", file=sys.stderr, dynamic_ncols=True)
        s = asdict(self.stats)
        self._bar.set_postfix({k: v for k, v in s.items() if k in ("retries", "cache_hits", "failures")},
                              refresh=False)
        self._bar.update(self.stats.calls - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
