"""Messages as the model sees them, and how the harness renders scenario events.

A `Message` is immutable and carries its token count and a content hash, both
computed once when it is made. Requests are lists of messages; two requests
are compared by their hashes, never by re-reading text.

`tag` says what a message *is* for the scorers: the record types ``system``,
``user``, ``assistant``, ``tool``, ``background`` for messages rendered from
events, and strategy tags (``summary``, ``mind``, ``memo``, ``scene``,
``placeholder``, ...) for text a strategy put there. A message that combines
several parts (a checkpoint of mind + memo + scene) lists them in `parts`, so a
scorer can tell the user's verbatim words (``memo``) from model-written text.

A message's JSON object is `bench.harness.record`; the OpenAI wire format is `bench.harness.wire`.
Both build messages through `make`.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields
from typing import Any, Iterable

from bench.scenarios.model import Call, Event, Scenario, calls_text
from bench.tokens import Tokenizer

MARKER = "[Harness:"
# Tags whose text is the human user's own words, verbatim.
USER_WORDS = ("user", "memo")
EVENT_TAGS = ("system", "user", "assistant", "tool", "background")


@dataclass(frozen=True)
class Part:
    tag: str
    text: str


@dataclass(frozen=True, eq=False)
class Message:
    id: str
    role: str                      # wire role: system | user | assistant | tool
    text: str
    tag: str
    tokens: int
    hash: str
    t: float = 0.0
    source: str | None = None      # background source (watch, cron, ...)
    calls: tuple[Call, ...] = ()   # assistant tool calls
    call_id: str | None = None     # tool result: the call it answers
    tool: str | None = None        # tool result: the tool's name
    skill: str | None = None       # the skill this message loads, if any
    parts: tuple[Part, ...] = ()   # tagged spans, when one message holds several kinds of text

    def segments(self) -> tuple[Part, ...]:
        """(tag, text) pieces; a plain message is one piece."""
        return self.parts or (Part(self.tag, self.text),)

    @property
    def from_event(self) -> bool:
        return self.tag in EVENT_TAGS


FIELDS = tuple(f.name for f in fields(Message))
CONTENT = tuple(f for f in FIELDS if f not in ("tokens", "hash"))   # what `make` takes; it works out the rest


def common_prefix(a: list, b: list) -> int:
    """How many leading items `a` and `b` share (Messages compare by identity: the same objects), found
    by slice compares, which run in C: a request that rebuilds its tail after a long kept head costs
    O(log n) list compares, not a Python loop over the head."""
    hi = min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    lo, hi = 0, hi - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _digest(role: str, text: str, calls: tuple[Call, ...], call_id: str | None) -> str:
    h = hashlib.blake2b(digest_size=10)
    h.update(role.encode())
    h.update(b"\0")
    h.update(text.encode("utf-8", "surrogatepass"))
    if calls:
        h.update(b"\0calls\0")
        h.update(calls_text(calls).encode())
    if call_id:
        h.update(b"\0call\0")
        h.update(call_id.encode())
    return h.hexdigest()


def make(tok: Tokenizer, *, id: str, role: str, text: str, tag: str, t: float = 0.0,
         source: str | None = None, calls: Iterable[Call] = (), call_id: str | None = None,
         tool: str | None = None, skill: str | None = None, parts: Iterable[Part] = ()) -> Message:
    """Build a message, counting its tokens (cached per text) and hashing its content. Parts, when
    given, must join to the text exactly: the model reads the text, the scorers read the parts."""
    calls = tuple(calls)
    parts = tuple(parts)
    if parts and "".join(p.text for p in parts) != text:
        raise ValueError(f"message {id}: its parts do not join to its text (the model reads the text, the "
                         "scorers read the parts: they must be the same words)")
    tokens = tok.count(text) + (tok.count(calls_text(calls)) if calls else 0)
    return Message(id=id, role=role, text=text, tag=tag, tokens=tokens,
                   hash=_digest(role, text, calls, call_id), t=t, source=source, calls=calls,
                   call_id=call_id, tool=tool, skill=skill, parts=tuple(parts))


def remake(tok: Tokenizer, msg: Message, **changes: Any) -> Message:
    """`msg` made again from its content (`make`'s arguments), with `changes`: counted and hashed anew."""
    return make(tok, **{**{f: getattr(msg, f) for f in CONTENT}, **changes})


def retext(tok: Tokenizer, msg: Message, text: str, *, tag: str | None = None, id: str | None = None) -> Message:
    """The same message with new text (a placeholder, a cut): new tokens and hash."""
    return remake(tok, msg, text=text, tag=tag or msg.tag, id=id or msg.id, parts=())


def render_text(event: Event, user: str, markers: bool) -> str:
    """What the model reads for an event: the source marker comes from the record, never the text."""
    if event.role == "background":
        return f"[Harness: {event.source}]\n{event.text}" if markers else event.text
    if event.role == "user" and markers and event.text.startswith(MARKER):
        return f"{user}: {event.text}"
    return event.text


def render(tok: Tokenizer, event: Event, *, user: str, markers: bool = True,
           tool_names: dict[str, str] | None = None) -> Message:
    role = {"background": "user"}.get(event.role, event.role)
    tool = (tool_names or {}).get(event.call or "") if event.role == "tool" else None
    return make(tok, id=event.id, role=role, text=render_text(event, user, markers), tag=event.role,
                t=event.t, source=event.source, calls=event.calls, call_id=event.call, tool=tool,
                skill=event.skill)


_RENDERED: dict[tuple, tuple[tuple[Event, ...], list[tuple]]] = {}
_KEEP = 4       # scenarios whose rendering a process keeps (a worker runs one scenario's cells in a row)


def render_all(tok: Tokenizer, scenario: Scenario, markers: bool = True) -> list[Message]:
    """Every event of a scenario as a message, in order: new objects on every call, so nothing a
    strategy does to the ones it was given reaches another cell or the scorers. The counting and
    hashing are done once per scenario and process: a cell renders its scenario several times
    (replay, scoring, log reading) and a worker runs every cell of a scenario; the cached rendering is
    reused only while the events are equal to the ones it was made from."""
    key = (tok.encoding_name, markers, scenario.user, scenario.path, scenario.id)
    kept = _RENDERED.get(key)
    if kept is None or kept[0] != scenario.events:
        names = {c.id: c.tool for e in scenario.events for c in e.calls}
        made = [render(tok, e, user=scenario.user, markers=markers, tool_names=names) for e in scenario.events]
        kept = (scenario.events, [tuple(getattr(m, f) for f in FIELDS) for m in made])
        _RENDERED.pop(key, None)
        _RENDERED[key] = kept
        while len(_RENDERED) > _KEEP:
            del _RENDERED[next(iter(_RENDERED))]
    return [Message(*values) for values in kept[1]]


def system_message(tok: Tokenizer, scenario: Scenario) -> Message:
    return make(tok, id="system", role="system", text=scenario.system, tag="system")


__all__ = ["Message", "Part", "make", "remake", "retext", "render", "render_all", "render_text", "system_message",
           "calls_text", "USER_WORDS", "MARKER"]
