"""Adversary `restore_at_compaction`: truncate, and show the user's messages only right after compacting.

What it games: constraint_fidelity (and goal_retention), through the check-point schedule. It
drops the oldest turns exactly like `truncate`; on the request right after each of its
compactions it puts every user message that truncation dropped back at the front (the original
message objects), as many as fit the window, newest first; on the next request they are gone
again, and no compaction is reported for that. Scored only at "the first request after each
compaction" (the old schedule), it looks like a strategy that never loses a constraint.

Why it must lose: the scores cover every agent request, a schedule the strategy cannot choose,
so the restored messages count for one request per compaction and the rest look like truncate.
"""
from __future__ import annotations

from bench.harness.messages import Message
from bench.harness.strategy import Compaction
from bench.tokens import PER_MESSAGE

from bench.strategies.truncate import Truncate

from bench.strategies.adversaries.user_tail import is_user


class RestoreAtCompaction(Truncate):
    def begin(self, session) -> None:
        super().begin(session)
        self.restored: list[Message] = []

    async def prepare(self) -> Compaction | None:
        self.restored = []                 # the previous request's restored messages leave, unreported
        comp = await super().prepare()
        if comp is not None and comp.ok:
            self.restored = self.restore()
            comp.fields["restored"] = [m.id for m in self.restored]
        return comp

    def restore(self) -> list[Message]:
        """The user's messages that are not in the context, newest first while the request fits the window."""
        here = {id(m) for m in self.messages}
        missing = [m for m in self.session.record if is_user(m) and id(m) not in here]
        total, back = self.size(), []
        for m in reversed(missing):
            if total + m.tokens + PER_MESSAGE > self.session.window:
                break
            total += m.tokens + PER_MESSAGE
            back.append(m)
        return back[::-1]

    def context(self) -> list[Message]:
        return [*self.restored, *self.messages] if self.restored else self.messages
