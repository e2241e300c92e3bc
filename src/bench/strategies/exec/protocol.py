"""The external-strategy protocol, version 1 (docs/protocol.md): the lines
the bench writes, and the checks on the lines a strategy process writes back.

Everything a process sends is checked before it is used; a check that fails raises
`ExternalError` with the one line the run prints for the cell.
"""
from __future__ import annotations

import json
from typing import Any

from bench.harness.messages import Message
from bench.harness.record import from_json, to_json
from bench.harness.strategy import Compaction
from bench.parsing import MAX_DEPTH, too_deep
from bench.tokens import PER_MESSAGE, PER_REQUEST, Tokenizer

VERSION = 1
ROLES = ("user", "assistant", "tool", "system")
# Keys of a compactions.jsonl record that the harness writes; a report's fields cannot replace them.
HARNESS_KEYS = frozenset("cell n strategy event t request ok before after calls text problems repairs fallback "
                         "error".split())


class ExternalError(Exception):
    """The process broke the protocol, was too slow, or exited: its cell fails with this line."""


def begin(session: Any, *, per_message: int = PER_MESSAGE, per_request: int = PER_REQUEST) -> dict[str, Any]:
    s = session
    return {"type": "begin", "version": VERSION, "scenario": s.scenario, "user": s.user, "window": s.window,
            "limit": s.limit, "reserve_output": s.reserve_output, "margin": s.margin,
            "encoding": s.tok.encoding_name, "per_message": per_message, "per_request": per_request,
            "system": {"id": s.system.id, "text": s.system.text, "tokens": s.system.tokens},
            # where the source harness compacted (imported sessions), never what it installed: a program may
            # compact at the same points, for a like-for-like comparison with `recorded`, but not copy its summary
            "recorded": [{"after": rc.after, "trigger": rc.trigger,
                          **({"pre_tokens": rc.pre_tokens} if rc.pre_tokens is not None else {})}
                         for rc in getattr(s, "recorded", ())]}


# A recorded message in an `add` (bench.harness.record's keys, in the protocol's order; the optional
# ones only when set).
ADD = ("id", "role", "tag", "text", "tokens", "t", "source", "calls", "call", "tool", "skill")


def message(m: Message) -> dict[str, Any]:
    """A recorded message as an `add` entry: only the fields it has."""
    return to_json(m, ADD)


# Encoded `add` entries, by what they are made of: a worker replays a scenario's events in every cell of
# it (windows, seeds, writers), and encoding their texts is most of what sending costs. Bounded in bytes.
_ENCODED: dict[tuple, bytes] = {}
_ENCODED_MAX = 64 << 20
_encoded_size = 0


def prepare(request: int, appended: int, added: list[Message]) -> bytes:
    """The `prepare` line, byte for byte what encoding {type, request, appended (when not 0), add} gives."""
    head = f'{{"type":"prepare","request":{request}' + (f',"appended":{appended}' if appended else "")
    return b"".join((head.encode(), b',"add":[', b",".join(map(_entry, added)), b"]}\n"))


def _entry(m: Message) -> bytes:
    global _encoded_size
    key = (m.hash, m.id, m.tag, m.tokens, m.t, m.source, m.tool, m.skill)   # the hash covers role, text, calls, call
    data = _ENCODED.get(key)
    if data is None:
        data = encode(message(m))
        if _encoded_size + len(data) > _ENCODED_MAX:
            _ENCODED.clear()
            _encoded_size = 0
        _ENCODED[key] = data
        _encoded_size += len(data)
    return data


def encode(obj: dict[str, Any]) -> bytes:
    """One protocol object as it goes on the wire (without the newline)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


def decode(line: bytes) -> dict[str, Any]:
    """One line from the process as a protocol object."""
    text = line.decode("utf-8", "replace").strip()
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        why = f"{exc.msg} at column {exc.colno}"
        raise ExternalError(f"its reply is not valid JSON ({why}): {_preview(text)}") from None
    except ValueError:      # a number of more than 4,300 digits
        raise ExternalError(f"its reply holds a number too long to read: {_preview(text)}") from None
    except RecursionError:
        raise ExternalError(f"its reply is nested too deeply: {_preview(text)}") from None
    if text.count("[") + text.count("{") > MAX_DEPTH and too_deep(obj):    # few brackets: cannot be deep
        raise ExternalError(f"its reply is nested more than {MAX_DEPTH} levels deep: {_preview(text)}")
    if "\\u" in text and _surrogate(obj):
        raise ExternalError(f"its reply holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not a character: "
                            f"{_preview(text)}")
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise ExternalError(f"its reply is not a JSON object with a \"type\": {_preview(text)}")
    if obj["type"] == "error":
        raise ExternalError(f"the process reported an error: {_preview(str(obj.get('message', '')), 300)}")
    return obj


def hello(obj: dict[str, Any]) -> None:
    if obj["type"] != "hello":
        raise ExternalError(f"its first reply must be {{\"type\": \"hello\", \"version\": {VERSION}}}, got type "
                            f"{obj['type']!r}")
    if obj.get("version") != VERSION:
        raise ExternalError(f"it speaks protocol version {obj.get('version')!r}; this bench speaks version {VERSION}")


def written(tok: Tokenizer, item: dict[str, Any], where: str) -> Message:
    """A message the process wrote, counted and hashed by the bench (its own counts are never read)."""
    tag = item.get("tag")
    if not isinstance(tag, str) or not tag.strip():
        raise ExternalError(f"{where}: a message the strategy wrote has no tag (say what it is: summary, memo, "
                            f"placeholder, ...)")
    mid = item.get("id")
    if not isinstance(mid, str) or not mid:
        raise ExternalError(f"{where}: a message the strategy wrote (tag {tag!r}) has no id")
    where = f"{where}: message {mid!r}"
    role = item.get("role", "user")
    if role not in ROLES:
        raise ExternalError(f"{where}: role {role!r} is not one of {', '.join(ROLES)}")
    text = item.get("text")
    if not isinstance(text, str):
        raise ExternalError(f"{where}: text must be a string")
    if role == "tool" and not isinstance(item.get("call"), str):
        raise ExternalError(f"{where}: a tool message needs \"call\", the id of the call it answers")
    try:
        return from_json(tok, item, loose=True)
    except (ValueError, TypeError) as exc:   # malformed calls or parts, parts that do not join, a t not a number
        raise ExternalError(f"{where}: {exc}") from None


def wake_above(reply: dict[str, Any]) -> int | None:
    """The reply's promise: until a request would exceed this many tokens, every recorded message is
    simply appended, so the bench need not ask (the messages still reach the process, in the next
    `prepare`, counted in its `appended`)."""
    value = reply.get("wake_above")
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ExternalError(f"\"wake_above\" must be a whole number of tokens >= 0 or absent, got {value!r}")
    return value


def compaction(raw: Any, before: int, after: int, where: str) -> Compaction:
    """The compaction report; before/after default to the bench's own sizes of the request."""
    if not isinstance(raw, dict):
        raise ExternalError(f"{where}: \"compaction\" must be an object")

    def num(key: str, default: int) -> int:
        v = raw.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise ExternalError(f"{where}: compaction.{key} must be a whole number >= 0, got {v!r}")
        return v

    def text(key: str) -> str | None:
        v = raw.get(key)
        if v is not None and not isinstance(v, str):
            raise ExternalError(f"{where}: compaction.{key} must be a string or null")
        return v

    problems, fields, ok = raw.get("problems") or [], raw.get("fields") or {}, raw.get("ok", True)
    if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
        raise ExternalError(f"{where}: compaction.problems must be a list of strings")
    if not isinstance(fields, dict):
        raise ExternalError(f"{where}: compaction.fields must be an object")
    taken = sorted(HARNESS_KEYS & set(fields))
    if taken:
        raise ExternalError(f"{where}: compaction.fields: {', '.join(taken)} are the harness's own keys of the "
                            f"compaction record; name strategy fields otherwise")
    if not isinstance(ok, bool):
        raise ExternalError(f"{where}: compaction.ok must be true or false")
    return Compaction(before=num("before", before), after=num("after", after), ok=ok, text=text("text"),
                      problems=list(problems), repairs=num("repairs", 0), fallback=text("fallback"),
                      error=text("error"), fields=dict(fields))


def _surrogate(obj: Any) -> bool:
    stack = [obj]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def _preview(text: str, n: int = 120) -> str:
    text = " ".join(text.split())
    return repr(text[:n] + ("..." if len(text) > n else "")) if text else "(an empty line)"


__all__ = ["VERSION", "ExternalError", "begin", "message", "prepare", "encode", "decode", "hello", "written", "wake_above", "compaction"]
