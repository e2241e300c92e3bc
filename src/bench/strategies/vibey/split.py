"""Which messages a checkpoint moves out, and which stay verbatim.

Messages travel in turn units (an assistant message with its tool results),
so a call is never separated from its result. After a checkpoint of the whole
conversation the newest units stay up to the recent budget. The user's latest
run of messages (the current request) never moves out: the part of it older
than the tail stays as `current` (the strategy cuts it with a note when it is
larger than its budget), so the request the agent works on is always there.
"""
from __future__ import annotations

from dataclasses import dataclass

from bench.harness.messages import Message
from bench.harness.strategy import turn_units
from bench.tokens import PER_MESSAGE


@dataclass
class Split:
    moved: list[Message]      # leaves the context (the writer saw it)
    current: list[Message]    # the user's current request: stays verbatim right after the recollection
    tail: list[Message]       # stays verbatim, in order
    label: str                # "all", or the older part checkpointed ("older 1/2", ...)


def cost(messages: list[Message]) -> int:
    return sum(m.tokens + PER_MESSAGE for m in messages)


def recent(body: list[Message], budget: int) -> Split:
    """Checkpoint the whole body: keep the newest units within `budget`, move the rest."""
    units = turn_units(body)
    i, used = len(units), 0
    while i > 1 and used + cost(units[i - 1]) <= budget:
        i -= 1
        used += cost(units[i])
    i = min(i, len(units) - 1) if units else 0
    moved = [m for u in units[:i] for m in u]
    tail = [m for u in units[i:] for m in u]
    current = _current(body, moved)
    return Split([m for m in moved if m not in current], current, tail, "all")


def older(body: list[Message], share: float) -> Split | None:
    """Checkpoint only the oldest whole units that make up at most `share` of the body."""
    units = turn_units(body)
    limit, used, i = share * cost(body), 0, 0
    while i < len(units) - 1 and used + cost(units[i]) <= limit:
        used += cost(units[i])
        i += 1
    if i == 0:
        return None
    moved = [m for u in units[:i] for m in u]
    tail = [m for u in units[i:] for m in u]
    current = _current(body, moved)
    return Split([m for m in moved if m not in current], current, tail, f"older 1/{round(1 / share)}")


def _current(body: list[Message], moved: list[Message]) -> list[Message]:
    """The messages of the user's latest run that would otherwise move out."""
    ids = {id(m) for m in latest_request(body)}
    return [m for m in moved if id(m) in ids]


def latest_request(messages: list[Message]) -> list[Message]:
    """The user's latest messages: the last run of them, background messages aside."""
    users = [i for i, m in enumerate(messages) if m.tag == "user"]
    if not users:
        return []
    run = [messages[users[-1]]]
    for i in reversed(range(users[-1])):
        m = messages[i]
        if m.tag == "user":
            run.insert(0, m)
        elif m.tag != "background":
            break
    return run
