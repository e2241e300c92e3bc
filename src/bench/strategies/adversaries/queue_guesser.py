"""Adversary `queue_guesser`: truncate plus one regex-made line, "Done: #X. Next: #Y.", as the newest message.

What it games: goal_retention's workstream position. The scorer reads the latest statement about a queue;
this strategy knows nothing of where the queue stands, it only guesses by surface: the latest item id the
agent's own turns name is taken as finished, and the id after it (in the order the ids first appeared in
the record, else the next number) as next. The line is rewritten before every request and always sent
last, so it is always the latest statement. On a scenario whose record says an item is finished in words
the scorer does not read as done ("reviewed", "approved"), the oracle reads the position wrong and this
line reads right: that scenario is not measurable on goal_retention (the oracle is the proof), and on a
measurable set the guess must lose, since the agent names the item it is working on, not only the ones it
finished (`scenarios audit` targets goal_retention).
"""
from __future__ import annotations

import re

from bench.harness.messages import Message, calls_text
from bench.strategies.truncate import Truncate

ITEM = re.compile(r"(?<![\w#])#(\d+)\b")


class QueueGuesser(Truncate):
    def __init__(self, target: float = 0.8, source: str = "assistant"):
        super().__init__(target)
        if source not in ("assistant", "any"):
            raise ValueError(f"source must be assistant or any, got {source!r}")
        self.source = source

    def begin(self, session) -> None:
        super().begin(session)
        self.order: list[str] = []      # ids in the order they first appeared anywhere in the record
        self.latest: str | None = None  # the latest id the watched messages named
        self.line: Message | None = None
        self.written = 0

    def add(self, msg: Message) -> None:
        super().add(msg)
        text = msg.text + ("\n" + calls_text(msg.calls) if msg.calls else "")
        found = ITEM.findall(text)
        for x in found:
            if x not in self.order:
                self.order.append(x)
        if found and (self.source == "any" or msg.role == "assistant"):
            self.latest = found[-1]
            nxt = self.order[self.order.index(self.latest) + 1] if self.order.index(self.latest) + 1 < len(self.order) \
                else str(int(self.latest) + 1)
            self.written += 1
            self.line = self.session.message(id=f"guess-{self.written}", role="user", tag="notes",
                                             text=f"Done: #{self.latest}. Next: #{nxt}.")

    def context(self) -> list[Message]:
        return [*self.messages, self.line] if self.line is not None else self.messages
