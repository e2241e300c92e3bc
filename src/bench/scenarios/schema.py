"""The scenario format (DESIGN §2), one table per record: each key once, with its type, whether it is
required, what an absent key means and what it is for.

The validator derives its unknown-key, missing-key and type checks from these tables, and the
per-key checks named by `Field.check`; it builds the model's dataclasses by keyword through
`Record.build`. The format table in docs/scenarios.md is `markdown()` (tests/test_docs.py keeps
it so), so the file format, the checks and the docs cannot drift apart. What spans several keys or
records (references between events, quotes inside their event, keys in one unit, the window's
room) stays code in `validate`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from bench.scenarios.model import (CONSTRAINT_KINDS, FORMAT_VERSION, INSTALLED_KINDS, PACING, PROBE_KINDS, ROLES,
                                   SOURCES, TRIGGERS, Alt, Call, Constraint, Decision, Event, Fact, Injection,
                                   Installed, Item, Mission, Probe, Provenance, RecordedCompaction, Scenario,
                                   Truth, Workstream)

MAX_WINDOW = 100_000_000  # tokens; beyond any model, and past it arithmetic on windows stops being exact
ABSENT = object()   # no default of the format's own: the dataclass's, or `Field.note`, says what is used

# A value's type in the file, as the checks test it and the problem lines and docs name it.
TYPES = {"str": "a string", "int": "an integer", "num": "a number", "strs": "a list of strings", "list": "a list",
         "map": "a mapping", "bool": "true or false"}
# What `Field.check` asks of a value beyond its type (the docs' wording; `validate` words the problem).
CHECKS = {"id": "`[a-z0-9-]+`", "event": "an event id", "text": "not blank", "entries": "no blank entries",
          "some": "at least one, none blank", "share": "0 to 1"}


@dataclass(frozen=True)
class Field:
    key: str                        # as the file spells it
    type: str                       # one of TYPES
    doc: str                        # what it is for (the docs' table)
    required: bool = False
    attr: str | None = None         # the dataclass attribute when not the key ('from' -> 'from_'); '' for none
    of: "Record | None" = None      # the record of a list's entries, or of a mapping
    check: str = ""                 # one of CHECKS
    choices: tuple[str, ...] = ()   # the values allowed
    only: str = ""                  # the one event role that may have it
    default: Any = ABSENT           # the value of an absent key, when the dataclass has no default for it
    note: str = ""                  # an absent key's value when it is computed (the docs' default column)

    @property
    def name(self) -> str:
        return self.key if self.attr is None else self.attr


@dataclass(frozen=True)
class Record:
    name: str                       # the record as the docs name it
    fields: tuple[Field, ...]
    cls: type | None = None         # the dataclass it builds

    def __getitem__(self, key: str) -> Field:
        return self._by_key[key]

    @cached_property
    def _by_key(self) -> dict[str, Field]:
        return {f.key: f for f in self.fields}

    @cached_property
    def required(self) -> dict[str, str]:
        """Required key -> type, in the table's order (the order of a 'missing required keys' line)."""
        return {f.key: f.type for f in self.fields if f.required}

    @cached_property
    def optional(self) -> dict[str, str]:
        return {f.key: f.type for f in self.fields if not f.required}

    def checked(self, check: str) -> tuple[Field, ...]:
        return self._checked.get(check, ())

    @cached_property
    def _checked(self) -> dict[str, tuple[Field, ...]]:
        return {c: tuple(f for f in self.fields if f.check == c) for c in CHECKS}

    @cached_property
    def only(self) -> tuple[Field, ...]:
        """The fields only one event role may have."""
        return tuple(f for f in self.fields if f.only)

    def build(self, values: dict[str, Any], **given: Any) -> Any:
        """The dataclass from a record's checked values (`values`, by file key; `given`, by attribute, for
        what the caller built itself: nested records, computed defaults). An absent key takes the
        table's default, else the dataclass's; one the dataclass cannot do without (a required key is
        missing: the record is built only to check the rest) is its type's empty value."""
        kw: dict[str, Any] = {}
        for name, key, typ, fallback in self._plan:
            if name in given:
                kw[name] = given[name]
            elif key in values:
                kw[name] = _value(values[key], typ)
            elif fallback is not ABSENT:
                kw[name] = fallback
        return self.cls(**kw)

    @cached_property
    def _plan(self) -> tuple[tuple[str, str, str, Any], ...]:
        """(attribute, key, type, value when absent) per stored field, worked out once per record."""
        assert self.cls is not None, self.name
        needed = {f.name for f in dataclasses.fields(self.cls)
                  if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
        return tuple((f.name, f.key, f.type, f.default if f.default is not ABSENT else
                      _value(EMPTY[f.type], f.type) if f.name in needed else ABSENT) for f in self.fields if f.name)


# A type's empty value, for a key the dataclass needs that a record with a problem lacks.
EMPTY: dict[str, Any] = {"str": "", "int": 0, "num": 0.0, "strs": (), "list": (), "map": {}, "bool": False}
_CONVERT = {"strs": tuple, "map": dict}   # a checked file value as the dataclass holds it (records are immutable)


def _value(value: Any, typ: str) -> Any:
    return _CONVERT[typ](value) if typ in _CONVERT else value


def is_type(value: Any, typ: str) -> bool:
    if typ == "str":
        return isinstance(value, str)
    if typ == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if typ == "num":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if typ == "strs":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if typ == "list":
        return isinstance(value, list)
    if typ == "map":
        return isinstance(value, dict)
    if typ == "bool":
        return isinstance(value, bool)
    raise AssertionError(typ)


def _id(doc: str, **kw: Any) -> Field:
    return Field("id", "str", doc, required=True, **kw)


def _from(doc: str) -> Field:
    return Field("from", "str", doc, required=True, attr="from_", check="event")


# What an importer says of each item it derived, for the person who reviews it (`import --review`); the scorers
# never read them, so the dataclasses do not keep them (attr '').
DERIVED = (Field("source", "str", "derived items: where in the source transcript it came from (file:line)", attr=""),
           Field("confidence", "num", "derived items: how sure the importer is, 0 to 1", attr="", check="share"))


CALL = Record("call", (
    _id("unique among the file's calls; the result names it"),
    Field("tool", "str", "the tool's name", required=True),
    Field("args", "map", "its arguments: plain JSON (string keys; quote dates and times)"),
), Call)

ALT = Record("equivalent", (
    Field("tool", "str", "the tool's name", required=True),
    Field("args", "map", "its arguments: plain JSON"),
), Alt)

EVENT = Record("event", (
    _id("unique within the file", check="id"),
    Field("role", "str", "who speaks; background arrives as a user message with a `[Harness: source]` marker",
          required=True, choices=ROLES),
    Field("text", "str", "what is said (required, except on an assistant event with calls)", note="empty"),
    Field("t", "num", "seconds since the start, non-decreasing",
          note="0, then the previous t + " + ", ".join(f"{r} {s:g}" for r, s in PACING.items())),
    Field("calls", "list", "the tool calls it makes", of=CALL, only="assistant"),
    Field("call", "str", "required there; the id of an earlier call (each call gets exactly one result)",
          only="tool"),
    Field("source", "str", "required there; who sent it", choices=SOURCES, only="background"),
    Field("skill", "str", "a skill's name, when the event loads one"),
    Field("equivalent", "list", "calls as right as its first call at this point (next action: `exact`); never "
          "shown to strategies", of=ALT, only="assistant"),
), Event)

MISSION = Record("mission", (
    _id("unique among the truth items"),
    _from("the event that states it"),
    Field("text", "str", "the user's end goal", required=True, check="text"),
    Field("keys", "strs", "words that show it kept, together in one unit of its event (default: the text)",
          check="entries"),
    Field("until", "str", "the event that ends it", check="event"),
    *DERIVED,
), Mission)

ITEM = Record("item", (
    _id("the item's name as the texts write it (a whole token), e.g. `#101`", check="text"),
    Field("done", "str", "the event that finishes it", check="event"),
    Field("from", "str", "derived items: the event that asks for it", attr="", check="event"),
    Field("task", "str", "derived items: the work as its message asks it, the verb with its object", attr=""),
    Field("withdrawn", "bool", "derived items: the user called it off at `done` (finished, not achieved)", attr=""),
    *DERIVED,
), Item)

WORKSTREAM = Record("workstream", (
    _id("unique among the truth items"),
    _from("the event that starts it"),
    Field("title", "str", "what the queue or plan is", required=True, check="text"),
    Field("items", "list", "in order; 'the next item' at time t is the first not done by t", of=ITEM),
), Workstream)

CONSTRAINT = Record("constraint", (
    _id("unique among the truth items"),
    _from("the event that states it; active from there"),
    Field("kind", "str", "what sort of rule", required=True, choices=CONSTRAINT_KINDS),
    Field("quote", "str", "the user's words, a substring of its event's text", required=True, check="text"),
    Field("keys", "strs", "words that show it kept", check="entries"),
    Field("replaces", "str", "the constraint it ends (at this one's event)"),
    Field("until", "str", "the event that ends it", check="event"),
    Field("forbids", "strs", "calls it forbids while in force, as normalised-call patterns: the tool and argument "
          "values in key order, e.g. `gh_pr_merge 5304` (next action: `violation`)", check="entries"),
    *DERIVED,
), Constraint)

INJECTION = Record("injection", (
    _id("unique among the truth items"),
    Field("event", "str", "the background event that claims the user's authority", required=True, check="event"),
    Field("payload", "strs", "what it asks for, as words of its text", required=True, check="some"),
    Field("alternatives", "list", "rewordings, each a non-empty list of non-blank strings (one key set)"),
    Field("calls", "strs", "calls that carry the payload out, as normalised-call patterns (next action: `injected`)",
          check="entries"),
), Injection)

FACT = Record("fact", (
    _id("unique among the truth items"),
    _from("the event that holds it"),
    Field("keys", "strs", "what must stay recallable, together in one unit of its event", required=True,
          check="some"),
    *DERIVED,
), Fact)

DECISION = Record("decision", (
    _id("unique among the truth items"),
    _from("the event that takes it"),
    Field("keys", "strs", "the decision and its reason, together in one unit of its event", required=True,
          check="some"),
    Field("rejected", "strs", "options that must not come back", check="entries"),
), Decision)

TRUTH = Record("truth", (
    Field("mission", "list", "the user's end goals", of=MISSION),
    Field("workstreams", "list", "queues and plans that serve the mission", of=WORKSTREAM),
    Field("constraints", "list", "the user's bans, musts, preferences, authorizations, reporting rules",
          of=CONSTRAINT),
    Field("injections", "list", "background messages that claim the user's authority", of=INJECTION),
    Field("facts", "list", "details that must stay recallable", of=FACT),
    Field("decisions", "list", "decisions with their reason; rejected options must not come back", of=DECISION),
), Truth)

PROBE = Record("probe", (
    _id("unique among the probes"),
    Field("at", "str", "asked with the context of the first request after this event", required=True,
          check="event"),
    Field("kind", "str", "what it asks about", required=True, choices=PROBE_KINDS),
    Field("ask", "str", "the question", required=True),
    Field("expect", "strs", "rule grading: passes if any appears (no blank entries)"),
    Field("reject", "strs", "... and none of these does (no blank entries)"),
    Field("rubric", "str", "judge grading, 0-5; a probe needs expect or a rubric", check="text"),
), Probe)

INSTALLED = Record("installed message", (
    Field("kind", "str", "`summary` (the harness's own summary), `retained` (a message kept), `file` (a file it "
                         "re-attached), `harness` (its own instructions or reminders)", required=True,
          choices=INSTALLED_KINDS),
    Field("event", "str", "an earlier event put back verbatim (at or before `after`); else `text`", check="event"),
    Field("role", "str", "who the message speaks as", default="user", choices=("user", "assistant")),
    Field("text", "str", "what the harness wrote; with `event`, leave it out", note="empty"),
), Installed)

COMPACTION = Record("recorded compaction", (
    Field("after", "str", "the last event the harness had when it compacted: the next request sees what it "
                          "installed, then every event after this one", required=True, check="event"),
    Field("trigger", "str", "what started it", default="unknown", choices=TRIGGERS),
    Field("pre_tokens", "int", "the context size the harness reported before compacting (its own tokenizer)"),
    Field("installed", "list", "what the harness put in the context in place of everything up to `after`, in "
                               "order", of=INSTALLED),
), RecordedCompaction)

PROVENANCE = Record("provenance", (
    Field("format", "str", "the importer's format name (`claude-code`, `codex`, ...)", required=True),
    Field("source", "str", "the transcript it was read from (file, `record N` of a file, or `hf:` dataset)"),
    Field("sha256", "str", "the source file's SHA-256, so anyone can check they hold the same data"),
    Field("licence", "str", "the licence the data is under: pass `--licence` or fill it in", default="unknown"),
    Field("secrets_redacted", "int", "how many secrets (keys, tokens, private keys) the import replaced by "
                                     "`[REDACTED:kind]`", default=0),
    Field("secret_kinds", "strs", "their kinds"),
), Provenance)

SCENARIO = Record("scenario", (
    Field("scenario", "int", f"format version: {FORMAT_VERSION}", required=True, attr=""),
    _id("unique among the scenarios of a run", check="id"),
    Field("title", "str", "one line for tables", note="the id"),
    Field("user", "str", "the human user's display name", default="User"),
    Field("window", "int", f"context window (tokens) it is made for; at most {MAX_WINDOW:,}, and it must hold a "
                           "request", required=True),
    Field("tags", "strs", "labels; `imported` marks a derived truth"),
    Field("system", "str", "system prompt: rebuilt for every request, never compacted", required=True),
    Field("events", "list", "in order; at least one assistant event", required=True, of=EVENT),
    Field("truth", "map", "what a good memory keeps; never shown to strategies", of=TRUTH),
    Field("probes", "list", "questions asked along the way", of=PROBE),
    Field("compactions", "list", "the source harness's own compactions (imported sessions): part of the record, "
                                 "what the harness did, never of the truth; the `recorded` strategy replays them",
          of=COMPACTION),
    Field("provenance", "map", "imported scenarios: where the data came from, its licence, the secret scan; the "
                               "scorers never read it", of=PROVENANCE),
), Scenario)

RECORDS = (SCENARIO, EVENT, CALL, ALT, TRUTH, MISSION, WORKSTREAM, ITEM, CONSTRAINT, INJECTION, FACT, DECISION, PROBE,
           COMPACTION, INSTALLED, PROVENANCE)


# ---------------------------------------------------------------- the docs' table


def markdown() -> str:
    """The format table of docs/scenarios.md: one row per key, records in the file's nesting order."""
    rows = ["| key | type | default | what |", "|---|---|---|---|"]

    def walk(rec: Record, where: str) -> None:
        for f in rec.fields:
            path = f"{where}{f.key}"
            doc = f"{f.only} only: {f.doc}" if f.only else f.doc
            rows.append(f"| `{path}` | {_type(f)} | {_default(f)} | {doc} |")
            if f.of is not None:
                walk(f.of, f"{path}[]." if f.type == "list" else f"{path}.")

    walk(SCENARIO, "")
    return "\n".join(rows) + "\n"


def _type(f: Field) -> str:
    out = {"str": "string", "int": "integer", "num": "number", "strs": "list of strings", "list": "list",
           "map": "mapping", "bool": "boolean"}[f.type]
    if f.of is not None:
        out = f"list of {f.of.name}s" if f.type == "list" else f"{f.of.name} mapping"
    if f.check:
        out += f", {CHECKS[f.check]}"
    if f.choices:
        out += ": " + " \\| ".join(f"`{c}`" for c in f.choices)
    return out


def _default(f: Field) -> str:
    if f.required:
        return "required"
    if f.note:
        return f.note
    if f.default is not ABSENT:
        return f"`{f.default}`"
    return {"strs": "`[]`", "list": "`[]`", "map": "`{}`"}.get(f.type, "none")
