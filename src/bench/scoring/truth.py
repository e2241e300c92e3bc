"""Which truth items are in force at a request (DESIGN §2 active-at-time semantics).

A request made for the assistant event at position `pos` has seen every event
before it, so an item counts from its `from` event when that event is earlier
than `pos`; an `until`, a `done` or a replacing constraint ends it the same way.
"""
from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field, fields
from typing import Any

from bench.scenarios.loader import normalize
from bench.scenarios.model import Constraint, Decision, Fact, Injection, Item, Mission, Scenario, Workstream
from bench.text import first_sentence as real_first_sentence
from bench.text import substantive


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
    """A scenario's truth indexed by event position, built once per scenario. Every reference is turned
    into a position once, and `at` is memoised: the cells of a scenario ask for the same positions."""

    def __init__(self, scenario: Scenario):
        self.s = scenario
        self.pos = scenario.index()
        self.replacer = {c.replaces: c for c in scenario.truth.constraints if c.replaces}
        self.firsts = [(e.id, i, first_sentence(e.text)) for i, e in enumerate(scenario.events)
                       if e.role == "user" and scenario.imported]
        never = len(self.pos) + 1          # an absent reference is never seen
        at = lambda event: never if event is None else self.pos.get(event, never)   # noqa: E731
        t = scenario.truth
        self._missions = [(m, at(m.from_), at(m.until)) for m in t.mission]
        self._streams = [(w, at(w.from_), [(it, at(it.done)) for it in w.items]) for w in t.workstreams]
        self._constraints = [(c, at(c.from_), at(c.until), at(self.replacer[c.id].from_) if c.id in self.replacer
                              else never) for c in t.constraints]
        self._injections = [(i, at(i.event)) for i in t.injections]
        self._facts = [(f, at(f.from_)) for f in t.facts]
        self._decisions = [(d, at(d.from_)) for d in t.decisions]
        self._memo: dict[int, Active] = {}
        self._same: dict[tuple, Active] = {}    # one object per distinct truth in force
        # Every rule above reads a position only as `x < pos` for one of these x: positions with as many of them
        # before them hold the same truth, worked out once (a session's truth changes at few of its requests)
        self._cuts = sorted({x for _, start, end in self._missions for x in (start, end)}
                            | {x for _, start, items in self._streams for x in (start, *(d for _, d in items))}
                            | {x for _, start, end, replaced in self._constraints for x in (start, end, replaced)}
                            | {start for group in (self._injections, self._facts, self._decisions) for _, start in group}
                            | {i for _, i, _ in self.firsts})
        self._between: dict[int, Active] = {}   # how many cuts come before a position -> the truth in force there

    def seen(self, event: str | None, pos: int) -> bool:
        return event is not None and self.pos.get(event, len(self.pos)) < pos

    def at(self, pos: int) -> Active:
        """The truth in force at `pos`; positions where nothing changed share one object, so a scorer can
        tell by identity that the truth is the same as at its previous request."""
        a = self._memo.get(pos)
        if a is None:
            k = bisect_left(self._cuts, pos)
            a = self._between.get(k)
            if a is None:
                a = self._at(pos)
                a = self._between[k] = self._same.setdefault(_identity(a), a)
            self._memo[pos] = a
        return a

    def _at(self, pos: int) -> Active:
        a = Active()
        a.missions = [m for m, start, end in self._missions if start < pos <= end]
        for w, start, items in self._streams:
            if start < pos:
                done = [(it, d) for it, d in items if d < pos]
                nxt = next((it for it, d in items if d >= pos), None)
                if nxt is not None:
                    a.next_items.append((w, nxt))
                a.finished[w.id] = {it.id for it, _ in done}
                if done:
                    a.last_done[w.id] = max(done, key=lambda x: x[1])[0].id
        for c, start, end, replaced in self._constraints:
            if start >= pos:
                continue
            if replaced < pos:
                a.replaced.append((c, self.replacer[c.id]))
            elif pos <= end:
                a.constraints.append(c)
            else:
                a.expired.append(c)
        a.injections = [i for i, start in self._injections if start < pos]
        a.facts = [f for f, start in self._facts if start < pos]
        a.decisions = [d for d, start in self._decisions if start < pos]
        a.user_words = [(eid, s) for eid, i, s in self.firsts if i < pos and s]
        return a


def _identity(a: Active) -> tuple:
    """What tells two `Active`s apart, field by field: the truth items themselves (objects of the one
    scenario, by identity), strings by value, a set as a frozenset. A field of another shape fails
    loudly here (unhashable), never silently."""
    out = []
    for f in fields(a):
        v = getattr(a, f.name)
        if isinstance(v, dict):
            out.append(tuple((k, frozenset(x) if isinstance(x, set) else x) for k, x in v.items()))
        else:
            out.append(tuple(tuple(map(_atom, x)) if isinstance(x, tuple) else _atom(x) for x in v))
    return tuple(out)


def _atom(x: Any) -> Any:
    return x if isinstance(x, str) else id(x)


def first_sentence(text: str) -> str:
    """The normalised first real sentence of a substantive user message (the importers' rules,
    bench/text.py: greetings, acknowledgements and pasted output skipped), or '' when there is none."""
    if not substantive(text):
        return ""
    first = real_first_sentence(text)
    return normalize(first) if first else ""
