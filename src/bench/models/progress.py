"""Counters of a model's calls, shown as a tqdm bar on long interactive runs.

Quiet when CI=true or stderr is not a terminal, so CI logs and piped output
stay clean; the counters are kept either way (tests and reports read them).
"""
from __future__ import annotations

import os
import sys
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


class Progress:
    def __init__(self, name: str):
        self.name = name
        self.stats = CallStats()
        self._bar: Any = None

    def update(self) -> None:
        """Called once per finished chat() call."""
        if quiet():
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
