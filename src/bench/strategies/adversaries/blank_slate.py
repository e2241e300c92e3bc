"""Reference adversary `blank_slate`: at every compaction, the history is replaced with nothing.

What it games: everything measured on what a context holds is lost, but it never overflows and it is the
cheapest strategy there is. A harness that installs an empty replacement history is a reported failure of
2026; structural_faults must name it (`missionless`: neither a mission in force nor any summary), and
`scenarios audit` holds every set to that.
"""
from __future__ import annotations

from bench.harness.strategy import Compaction, Strategy


class BlankSlate(Strategy):
    async def compact(self) -> Compaction:
        before = self.size()
        gone, self.messages = [m.id for m in self.messages], []
        return Compaction(before=before, after=self.size(), fields={"dropped": gone})
