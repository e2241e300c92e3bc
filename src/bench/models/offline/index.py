"""One message as the offline model searches it, worked out once per distinct content.

A probe reads every sentence of its context, and a long session's contexts share nearly all their
messages: across the probes of a cell, and across the cells of a scenario (one worker process runs
them all). So what `extract.answer` needs of a message — its sentences and their de-duplication
keys, which sentences hold which word, which state what comes next, their lower-cased text — is
computed once per (text, label, role) and looked up (extract.py keeps the cache), never recomputed
per request. The parts a question may not need (the word index, the lower-cased text) are built on
first use.
"""
from __future__ import annotations

from bisect import bisect_right

from bench.scenarios.loader import normalize

SEP = "\0"      # joins a message's lower-cased sentences; a name holding it is looked up sentence by sentence


class Read:
    """A message's sentences (label, text, key) in order, with lazily built lookups."""

    __slots__ = ("labels", "texts", "keys", "system", "_where", "_nexts", "_low", "_starts")

    def __init__(self, rows: tuple[tuple[str, str, str], ...]):
        self.labels = tuple(r[0] for r in rows)
        self.texts = tuple(r[1] for r in rows)
        self.keys = tuple(r[2] or normalize(r[1]) for r in rows)
        self.system = tuple(i for i, label in enumerate(self.labels) if label == "System")
        self._where: dict[str, tuple[int, ...]] | None = None
        self._nexts: tuple[int, ...] | None = None
        self._low: str | None = None
        self._starts: list[int] = []

    def where(self, term_of) -> dict[str, tuple[int, ...]]:
        """term -> the sentences holding it, in order (`term_of(text)` gives a sentence's terms)."""
        if self._where is None:
            where: dict[str, list[int]] = {}
            for i, text in enumerate(self.texts):
                for w in term_of(text):
                    where.setdefault(w, []).append(i)
            self._where = {w: tuple(rows) for w, rows in where.items()}
        return self._where

    def nexts(self, states) -> tuple[int, ...]:
        """The sentences for which `states(text)` holds (that state what comes next), in order."""
        if self._nexts is None:
            self._nexts = tuple(i for i, text in enumerate(self.texts) if states(text))
        return self._nexts

    def naming(self, asked: set[str]) -> list[int]:
        """The sentences whose lower-cased text holds one of `asked`, in order."""
        if self._low is None:
            lows = [t.lower() for t in self.texts]
            starts, at = [], 0
            for low in lows:
                starts.append(at)
                at += len(low) + 1
            self._low, self._starts = SEP.join(lows), starts
        low, starts = self._low, self._starts
        if any(not a or SEP in a for a in asked):    # cannot be found in the joined text: one by one
            return [i for i, text in enumerate(self.texts) if any(a in text.lower() for a in asked)]
        hit: set[int] = set()
        for a in asked:
            at = low.find(a)
            while at >= 0:
                i = bisect_right(starts, at) - 1
                hit.add(i)
                at = low.find(a, starts[i + 1]) if i + 1 < len(starts) else -1
        return sorted(hit)
