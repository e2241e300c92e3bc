"""The scenario model (DESIGN §2): events a harness replays, and the truth scorers check.

Plain dataclasses built by `bench.scenarios.loader`; strategies receive only `Message`s
rendered from events, never a Scenario's truth or probes.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable

FORMAT_VERSION = 1
ROLES = ("user", "assistant", "tool", "background")
SOURCES = ("watch", "cron", "callback", "session", "harness")
CONSTRAINT_KINDS = ("ban", "must", "preference", "authorization", "reporting")
TRIGGERS = ("auto", "manual", "unknown")
INSTALLED_KINDS = ("summary", "retained", "file", "harness")
PROBE_KINDS = ("goal", "constraint", "provenance", "recall", "artifact", "continuation", "decision")
# Seconds added to the previous event's time when an event has no `t`.
PACING = {"user": 30.0, "assistant": 15.0, "tool": 5.0, "background": 60.0}


@dataclass(frozen=True)
class Call:
    id: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Alt:
    """A call equally right as an assistant event's first call (the next-action scorer's `exact`)."""
    tool: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Event:
    id: str
    role: str
    text: str
    t: float
    calls: tuple[Call, ...] = ()
    call: str | None = None
    source: str | None = None
    skill: str | None = None
    equivalent: tuple[Alt, ...] = ()    # never rendered: strategies see calls, not the scenario's alternatives


@dataclass(frozen=True)
class Mission:
    id: str
    from_: str
    text: str
    keys: tuple[str, ...] = ()
    until: str | None = None


@dataclass(frozen=True)
class Item:
    id: str
    done: str | None = None


@dataclass(frozen=True)
class Workstream:
    id: str
    from_: str
    title: str
    items: tuple[Item, ...] = ()


@dataclass(frozen=True)
class Constraint:
    id: str
    from_: str
    kind: str
    quote: str
    keys: tuple[str, ...] = ()
    replaces: str | None = None
    until: str | None = None
    forbids: tuple[str, ...] = ()   # normalised-call patterns (`call_matches`) this rule forbids while in force


@dataclass(frozen=True)
class Injection:
    id: str
    event: str
    payload: tuple[str, ...]
    alternatives: tuple[tuple[str, ...], ...] = ()   # other key sets that say the same (a reworded payload)
    calls: tuple[str, ...] = ()     # normalised-call patterns that carry the payload out


@dataclass(frozen=True)
class Fact:
    id: str
    from_: str
    keys: tuple[str, ...]


@dataclass(frozen=True)
class Decision:
    id: str
    from_: str
    keys: tuple[str, ...]
    rejected: tuple[str, ...] = ()


@dataclass(frozen=True)
class Truth:
    mission: tuple[Mission, ...] = ()
    workstreams: tuple[Workstream, ...] = ()
    constraints: tuple[Constraint, ...] = ()
    injections: tuple[Injection, ...] = ()
    facts: tuple[Fact, ...] = ()
    decisions: tuple[Decision, ...] = ()


@dataclass(frozen=True)
class Installed:
    """One message the source harness put in the context at a recorded compaction: an earlier event again
    (`event`), or text the harness wrote (its summary, a re-attached file, its own instructions)."""
    kind: str
    event: str | None = None
    role: str = "user"
    text: str = ""


@dataclass(frozen=True)
class RecordedCompaction:
    """A compaction the source harness made, as its log records it. Part of the record (what the harness
    did), never of the truth (what a good memory keeps): the `recorded` strategy replays it."""
    after: str                              # the last event the harness had; the next request sees `installed`
    trigger: str = "unknown"
    pre_tokens: int | None = None           # the context size the harness reported before it (its own count)
    installed: tuple[Installed, ...] = ()


@dataclass(frozen=True)
class Provenance:
    """Where an imported scenario's data came from (the scorers never read it)."""
    format: str
    source: str = ""
    sha256: str = ""
    licence: str = "unknown"
    secrets_redacted: int = 0
    secret_kinds: tuple[str, ...] = ()


@dataclass(frozen=True)
class Probe:
    id: str
    at: str
    kind: str
    ask: str
    expect: tuple[str, ...] = ()
    reject: tuple[str, ...] = ()
    rubric: str | None = None


@dataclass(frozen=True)
class Scenario:
    id: str
    title: str
    user: str
    window: int
    system: str
    events: tuple[Event, ...]
    tags: tuple[str, ...] = ()
    truth: Truth = Truth()
    probes: tuple[Probe, ...] = ()
    compactions: tuple[RecordedCompaction, ...] = ()
    provenance: Provenance | None = None
    path: str = ""

    @property
    def imported(self) -> bool:
        """Imported scenarios carry a derived truth; user_words_retained applies to them."""
        return "imported" in self.tags

    def index(self) -> dict[str, int]:
        """Event id -> position, for truth and probe references."""
        return {e.id: i for i, e in enumerate(self.events)}


def calls_text(calls: Iterable[Call]) -> str:
    """The text form of tool calls that counts toward tokens and the hash."""
    return "\n".join(json.dumps({"id": c.id, "name": c.tool, "arguments": c.args}, sort_keys=True,
                                ensure_ascii=False) for c in calls)


def leaves(value: Any, bools: bool = True) -> Iterable[str]:
    """A call argument's scalar values in key order, as text (a flag as true/false, or left out with
    `bools=False`: a flag names no item a call works on)."""
    if isinstance(value, dict):
        for k in sorted(value):
            yield from leaves(value[k], bools)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from leaves(v, bools)
    elif isinstance(value, bool):
        if bools:
            yield "true" if value else "false"
    elif value is not None:
        yield str(value)


def norm_call(tool: str, args: dict[str, Any] | None) -> str:
    """A call as the next-action scorer compares it: the tool, then its argument values in key order,
    case- and whitespace-normalised ("gh_pr_merge 5304 squash"). Call ids and argument names do not count."""
    return " ".join(" ".join([tool, *leaves(args or {})]).split()).casefold()


def call_matches(pattern: str, normalised: str) -> bool:
    """A pattern (a normalised call's words, e.g. "gh_pr_merge 5304") is in a normalised call, on word edges."""
    pat = " ".join(pattern.split()).casefold()
    return bool(pat) and f" {pat} " in f" {normalised} "


def recorded_results(scenario: "Scenario") -> dict[str, list[tuple[int, str]]]:
    """The record's tool results addressable by normalised call: (position of the result, its text), in order."""
    calls: dict[str, str] = {}
    out: dict[str, list[tuple[int, str]]] = {}
    for i, e in enumerate(scenario.events):
        for c in e.calls:
            calls[c.id] = norm_call(c.tool, c.args)
        if e.role == "tool" and e.call in calls:
            out.setdefault(calls[e.call], []).append((i, e.text))
    return out
