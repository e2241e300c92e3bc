"""Reference adversary `drop_results`: truncate that also drops every tool result, keeping the calls.

What it games: tool output is most of a coding session's tokens, so dropping it fits a window with more turns
kept (goal, constraints and decisions live in the user's and the agent's messages). The calls left without
their results are what a provider rejects outright; structural_faults must name it (`orphan_call`), and
`scenarios audit` holds every set to that.
"""
from __future__ import annotations

from bench.harness.strategy import Compaction

from bench.strategies.truncate import Truncate


class DropResults(Truncate):
    async def compact(self) -> Compaction:
        before = self.size()
        gone = [m.id for m in self.messages if m.role == "tool"]
        self.messages = [m for m in self.messages if m.role != "tool"]
        comp = await super().compact()
        comp.before = before
        comp.fields["dropped"] = gone + list(comp.fields.get("dropped", []))
        return comp
