"""Exploration adversary `padded`: truncate behind a constant filler message (not wired into the audit).

What it probes: cache_hit_rate. The filler (`pad`, a share of the window) is the same bytes in every
request, so it is always a cache hit: the hit rate rises while the agent knows nothing more. The
filler still takes room and is billed (cached input is cheap, not free), so cost must not fall.
"""
from __future__ import annotations

from bench.harness.messages import Message

from bench.strategies.truncate import Truncate

FILLER = "This line is a constant filler that carries no information about the session. "


class Padded(Truncate):
    def __init__(self, target: float = 0.8, pad: float = 0.3):
        super().__init__(target)
        if not 0 < pad < 1:
            raise ValueError(f"pad must be in (0, 1), got {pad}")
        self.pad = pad

    def begin(self, session) -> None:
        super().begin(session)
        n = max(1, int(session.window * self.pad) // max(1, session.tok.count(FILLER)))
        self.filler: Message = session.message(id="filler", role="user", text=FILLER * n, tag="notes")

    def context(self) -> list[Message]:
        return [self.filler, *self.messages]
