"""Which messages a checkpoint moves out, and which stay verbatim.

Messages travel in turn units (an assistant message with its tool results),
so a call is never separated from its result. After a checkpoint of the whole
conversation the newest units stay up to the recent budget; the user's latest
messages stay verbatim as the current request even when older than that tail.
"""
from __future__ import annotations

from dataclasses import dataclass

from bench.messages import Message
from bench.strategy import turn_units
from bench.tokens import PER_MESSAGE


@dataclass
class Split:
    moved: list[Message]      # leaves the context (the writer saw it)
    current: list[Message]    # the user's current request: stays verbatim right after the recollection
    tail: list[Message]       # stays verbatim, in order
    label: str                # "all", or the older part checkpointed ("older 1/2", ...)


def cost(messages: list[Message]) -> int:
    return sum(m.tokens + PER_MESSAGE for m in messages)


def recent(body: list[Message], budget: int, keep_current: int) -> Split:
    """Checkpoint the whole body: keep the newest units within `budget`, move the rest."""
    units = turn_units(body)
    i, used = len(units), 0
    while i > 1 and used + cost(units[i - 1]) <= budget:
        i -= 1
        used += cost(units[i])
    i = min(i, len(units) - 1) if units else 0
    moved = [m for u in units[:i] for m in u]
    tail = [m for u in units[i:] for m in u]
    current = [] if any(m.tag == "user" for m in tail) else latest_request(moved, keep_current)
    return Split([m for m in moved if m not in current], current, tail, "all")


def older(body: list[Message], share: float, keep_current: int) -> Split | None:
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
    current = [] if any(m.tag == "user" for m in tail) else latest_request(moved, keep_current)
    return Split([m for m in moved if m not in current], current, tail, f"older 1/{round(1 / share)}")


def latest_request(moved: list[Message], budget: int) -> list[Message]:
    """The user's latest messages (the last run of them, background aside), if they fit `budget`."""
    users = [i for i, m in enumerate(moved) if m.tag == "user"]
    if not users:
        return []
    run = [moved[users[-1]]]
    for i in reversed(range(users[-1])):
        m = moved[i]
        if m.tag == "user":
            run.insert(0, m)
        elif m.tag != "background":
            break
    return run if cost(run) <= budget else []
