"""Reference adversary `padded`: truncate behind a constant filler message.

What it games: cache_hit_rate and cost_usd. The filler (`pad`, a share of the window) is the same bytes in
every request, so it is always a cache hit: the hit rate rises, and since cached input is cheap and the
filler leaves less room for the session, each request costs less — while the agent knows less than
truncate's. Cost and cache are never read alone (docs/scoring.md, "Cost never alone"): `scenarios audit`
catches it when it is cheaper or more cached than truncate only by knowing less (its loss on goal,
constraints and facts against truncate reaches the gap).
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
