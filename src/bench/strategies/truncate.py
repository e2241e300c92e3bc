"""Baseline: forget the oldest turns, keep the system prompt. No model call."""
from __future__ import annotations

from bench.harness.strategy import Compaction, Strategy, drop_oldest


class Truncate(Strategy):
    def __init__(self, target: float = 0.8):
        if not 0 < target <= 1:
            raise ValueError(f"target must be in (0, 1], got {target}")
        self.target = target

    async def compact(self) -> Compaction:
        before = self.size()
        goal = int(self.trigger() * self.target)
        self.messages, dropped = drop_oldest(self.messages, before, goal)
        after = self.size()
        still = [] if after <= self.trigger() else [f"the newest turn alone needs {after} tokens"]
        return Compaction(before=before, after=after, problems=still, fields={"dropped": [m.id for m in dropped]})
