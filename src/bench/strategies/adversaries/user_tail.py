"""Adversary `user_tail`: keep every user message, verbatim, plus only the newest turns.

What it games: goal_retention (and constraint_fidelity). Mission keys and constraint quotes live
in the user's own messages, so keeping those messages (the original objects, never rewritten)
keeps every quote verbatim and every mission key in place, while everything the agent did —
which items are finished, what the tools showed, what was decided — is dropped except for a
small tail of the newest turns (`tail`, a fraction of the window, 0.1 by default). It keeps only
that, at every request: the tail slides (it compacts whenever the turns outgrow it), so what it
knows of the work is never more than the newest turns.

Why it must lose: remembering what the user asked is not knowing where the work stands. A
scenario set must show the gap on goal_retention (the queue position is stated by the agent,
not the user), and on facts and decisions from the dropped turns. Its constraint_fidelity is
legitimately high: it does keep the constraint text.

Whole turns are dropped (a call with its results, bench.strategy.drop_oldest), so calls stay
paired; if the user's messages alone do not fit, the oldest turns go whatever they hold
(recorded as the `drop-oldest` fallback).
"""
from __future__ import annotations

from bench.harness.messages import Message
from bench.harness.strategy import Compaction, Strategy, drop_oldest
from bench.tokens import PER_MESSAGE

from bench.strategies.summary import is_user


class UserTail(Strategy):
    def __init__(self, tail: float = 0.1):
        if not 0 < tail <= 1:
            raise ValueError(f"tail must be in (0, 1], got {tail}")
        self.tail = tail

    def budget(self) -> int:
        return int(self.session.window * self.tail)

    def should_compact(self) -> bool:
        turns = sum(m.tokens + PER_MESSAGE for m in self.messages if not is_user(m))
        return turns > self.budget() or self.size() > self.trigger()

    async def compact(self) -> Compaction:
        before = self.size()
        others = [m for m in self.messages if not is_user(m)]
        _, gone = drop_oldest(others, sum(m.tokens + PER_MESSAGE for m in others), self.budget())
        dropped = {id(m) for m in gone}
        self.messages = [m for m in self.messages if id(m) not in dropped]
        comp = Compaction(before=before, after=before, fields={"dropped": [m.id for m in gone]})
        self.forget(gone)
        if self.size() > self.trigger():   # the user's messages alone are too big: drop the oldest turns
            self.messages, more = drop_oldest(self.messages, self.size(), self.trigger())
            self.forget(more)
            comp.fallback = "drop-oldest"
            comp.fields["dropped"] += [m.id for m in more]
        comp.after = self.size()
        if comp.after > self.trigger():
            comp.problems.append(f"the newest turn alone needs {comp.after} tokens")
        return comp

    def forget(self, dropped: list[Message]) -> None:
        """Hook: messages this compaction took out of the context."""
