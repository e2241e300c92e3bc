"""Exploration adversary `glossary`: truncate plus one line per dropped message holding only the
sentences that carry a digit, an identifier or a capitalised word (not wired into the audit).

What it probes: fact_retention and decision_retention. A real summary keeps such sentences too;
the question is whether sentences picked by surface shape alone, with no understanding of which
matter, score near a model's summary at fewer tokens. The lines are one strategy-written message
(tag `notes`) at the front of the context, newest lines first within `budget` of the window.
"""
from __future__ import annotations

import re

from bench.harness.messages import Message, calls_text
from bench.harness.strategy import Compaction, drop_oldest
from bench.units import SENTENCE, identifier, tokens

from bench.strategies.truncate import Truncate

CAPITAL = re.compile(r"(?<!^)(?<![.!?]\s)\b[A-Z][a-z]+")


def picked(sentence: str) -> bool:
    """A sentence with a digit, an identifier-like token or a capitalised word past its start."""
    return bool(re.search(r"\d", sentence) or any(identifier(t) for t in tokens(sentence))
                or CAPITAL.search(sentence.strip()))


class Glossary(Truncate):
    def __init__(self, target: float = 0.8, budget: float = 0.1, join: str = "\n"):
        super().__init__(target)
        self.join = join
        if not 0 < budget <= 1:
            raise ValueError(f"budget must be in (0, 1], got {budget}")
        self.budget = budget

    def begin(self, session) -> None:
        super().begin(session)
        self.lines: list[str] = []
        self.notes: Message | None = None

    def pick(self, sentence: str) -> bool:
        return picked(sentence)

    def line(self, m: Message) -> str:
        text = m.text + ("\n" + calls_text(m.calls) if m.calls else "")
        kept = [s.strip() for raw in text.splitlines() for s in SENTENCE.split(raw) if s.strip() and self.pick(s)]
        return " ".join(kept)

    def context(self) -> list[Message]:
        return [self.notes, *self.messages] if self.notes is not None else self.messages

    async def compact(self) -> Compaction:
        before, tok = self.size(), self.session.tok
        cap = int(self.session.window * self.budget)
        goal = int(self.trigger() * self.target) - cap
        self.messages, dropped = drop_oldest(self.messages, self.size(self.messages), goal)
        self.lines += [x for x in map(self.line, dropped) if x]
        keep: list[str] = []
        for x in reversed(self.lines):
            if tok.count(self.join.join([x, *keep])) > cap:
                break
            keep.insert(0, x)
        self.lines = keep
        self.notes = self.session.message(id="notes", role="user", text=self.join.join(keep), tag="notes") if keep else None
        after = self.size()
        still = [] if after <= self.trigger() else [f"the newest turn alone needs {after} tokens"]
        return Compaction(before=before, after=after, problems=still,
                          fields={"dropped": [m.id for m in dropped], "lines": len(keep)})
