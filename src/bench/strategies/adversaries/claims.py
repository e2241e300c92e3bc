"""Exploration adversary `claims`: `glossary` that keeps only the sentences of dropped messages with a
done or next marker (done, merged, next, working on, ...) (not wired into the audit).

What it probes: goal_retention of workstreams. Every progress claim the session ever made survives,
old and new alike, without the strategy knowing which one is the current position; the verdict must
not credit a position the context does not establish.
"""
from __future__ import annotations

from bench.units import DONE, NEXT

from bench.strategies.adversaries.glossary import Glossary


class Claims(Glossary):
    def pick(self, sentence: str) -> bool:
        return bool(DONE.search(sentence.lower()) or NEXT.search(sentence.lower()))
