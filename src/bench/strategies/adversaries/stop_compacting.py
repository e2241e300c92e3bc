"""Adversary `stop_compacting`: truncate for the first compaction(s), then silently never again.

What it games: every retention metric, by hiding overflow. After its first `compactions`
compactions (1 by default) it keeps every message, like the oracle, and reports nothing, so
its requests grow past the window. If over-window requests were scored as if a provider had
served them, it would look as good as `full`; and with check points chosen by compactions it
would be scored once more only, at the end.

Why it must lose: no provider serves a request over the window, so each such request keeps
nothing (it scores 0 on every higher-is-better metric) and `overflow_requests` counts it. The
audit calls it caught when its retention falls well below the oracle's and it overflows.
"""
from __future__ import annotations

from bench.harness.strategy import Compaction

from bench.strategies.truncate import Truncate


class StopCompacting(Truncate):
    def __init__(self, target: float = 0.8, compactions: int = 1):
        super().__init__(target)
        if isinstance(compactions, bool) or not isinstance(compactions, int) or compactions < 0:
            raise ValueError(f"compactions must be a whole number >= 0, got {compactions!r}")
        self.compactions = compactions

    def begin(self, session) -> None:
        super().begin(session)
        self.done = 0

    def should_compact(self) -> bool:
        return self.done < self.compactions and super().should_compact()

    async def compact(self) -> Compaction:
        self.done += 1
        return await super().compact()
