"""Exploration adversary `naive_hedge`: `naive` whose every summary sentence is prefixed with a phrase
that puts it in doubt (not wired into the audit).

What it probes: whether stale_constraints and rejected_revived can be dodged while the summary keeps
the keys of constraints, decisions and facts. A withdrawn rule shown as 'withdrawn or not' is not
shown in force — but neither is a rule still in force, so constraint and decision credit must fall
with the stale count.
"""
from __future__ import annotations

from bench.harness.strategy import Compaction
from bench.units import SENTENCE

from bench.strategies.naive import Naive


def hedged(text: str, prefix: str) -> str:
    """Each sentence of each line of `text`, opened by `prefix`."""
    return "\n".join(" ".join(f"{prefix} {s.strip()}" for s in SENTENCE.split(raw) if s.strip())
                     for raw in text.splitlines())


class NaiveHedge(Naive):
    def __init__(self, prefix: str = "Withdrawn or not:", **kw):
        super().__init__(**kw)
        self.prefix = prefix

    async def compact(self) -> Compaction | None:
        comp = await super().compact()
        if self.messages and self.messages[0].tag == "summary":
            m = self.messages[0]
            text = hedged(m.text, self.prefix)
            self.messages[0] = self.session.message(id=m.id, role="user", text=text, tag="summary")
            if comp is not None:
                comp.text, comp.after = text, self.size()
        return comp
