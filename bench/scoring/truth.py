"""Which truth items are in force at a request (DESIGN §2 active-at-time semantics).

A request made for the assistant event at position `pos` has seen every event
before it, so an item counts from its `from` event when that event is earlier
than `pos`; an `until`, a `done` or a replacing constraint ends it the same way.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..loader import normalize
from ..scenario import Constraint, Decision, Fact, Injection, Item, Mission, Scenario, Workstream
from ..text import first_sentence as real_first_sentence
from ..text import substantive


@dataclass
class Active:
    missions: list[Mission] = field(default_factory=list)
    next_items: list[tuple[Workstream, Item]] = field(default_factory=list)
    constraints: list[Constraint] = field(default_factory=list)
    replaced: list[tuple[Constraint, Constraint]] = field(default_factory=list)   # (old, its replacement)
    expired: list[Constraint] = field(default_factory=list)     # ended by their `until`, with no replacement
    last_done: dict[str, str] = field(default_factory=dict)     # workstream -> its latest finished item
    finished: dict[str, set[str]] = field(default_factory=dict)  # workstream -> every finished item
    injections: list[Injection] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    user_words: list[tuple[str, str]] = field(default_factory=list)   # (event id, normalised first sentence)


class Timeline:
    """A scenario's truth indexed by event position, built once per cell."""

    def __init__(self, scenario: Scenario):
        self.s = scenario
        self.pos = scenario.index()
        self.replacer = {c.replaces: c for c in scenario.truth.constraints if c.replaces}
        self.firsts = [(e.id, i, first_sentence(e.text)) for i, e in enumerate(scenario.events)
                       if e.role == "user" and scenario.imported]

    def seen(self, event: str | None, pos: int) -> bool:
        return event is not None and self.pos.get(event, len(self.pos)) < pos

    def at(self, pos: int) -> Active:
        t, a = self.s.truth, Active()
        a.missions = [m for m in t.mission if self.seen(m.from_, pos) and not self.seen(m.until, pos)]
        for w in t.workstreams:
            if self.seen(w.from_, pos):
                nxt = next((it for it in w.items if not self.seen(it.done, pos)), None)
                if nxt is not None:
                    a.next_items.append((w, nxt))
                done = [it for it in w.items if self.seen(it.done, pos)]
                a.finished[w.id] = {it.id for it in done}
                if done:
                    a.last_done[w.id] = max(done, key=lambda it: self.pos[it.done]).id
        for c in t.constraints:
            if not self.seen(c.from_, pos):
                continue
            new = self.replacer.get(c.id)
            if new is not None and self.seen(new.from_, pos):
                a.replaced.append((c, new))
            elif not self.seen(c.until, pos):
                a.constraints.append(c)
            else:
                a.expired.append(c)
        a.injections = [i for i in t.injections if self.seen(i.event, pos)]
        a.facts = [f for f in t.facts if self.seen(f.from_, pos)]
        a.decisions = [d for d in t.decisions if self.seen(d.from_, pos)]
        a.user_words = [(eid, s) for eid, i, s in self.firsts if i < pos and s]
        return a


def first_sentence(text: str) -> str:
    """The normalised first real sentence of a substantive user message (the importers' rules,
    bench/text.py: greetings, acknowledgements and pasted output skipped), or '' when there is none."""
    if not substantive(text):
        return ""
    first = real_first_sentence(text)
    return normalize(first) if first else ""
