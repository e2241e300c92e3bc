"""A message as a JSON object: the one record requests.jsonl (bench.harness.logs) and the external
protocol (bench.strategies.exec.protocol) both write and read.

Each format chooses which keys it writes and in what order (its bytes are its own and stay as they
are); the key names, how calls and parts are written, and the rule that an optional field appears only
when set are declared here once. Reading never trusts a count or hash: `from_json` makes the message
again through `bench.harness.messages.make`.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

from bench.harness.messages import Message, Part, make
from bench.scenarios.model import Call
from bench.tokens import Tokenizer

# JSON key -> Message attribute. An optional one is written only when set.
KEYS = {"id": "id", "role": "role", "tag": "tag", "text": "text", "tokens": "tokens", "hash": "hash", "t": "t",
        "source": "source", "calls": "calls", "call": "call_id", "tool": "tool", "skill": "skill", "parts": "parts"}
OPTIONAL = frozenset(("source", "calls", "call", "tool", "skill", "parts"))
_ENCODE = {"calls": lambda calls: [{"id": c.id, "tool": c.tool, "args": c.args} for c in calls],
           "parts": lambda parts: [[p.tag, p.text] for p in parts]}
MALFORMED = "calls must be {id, tool, args} objects and parts [tag, text] pairs"


def to_json(m: Message, keys: tuple[str, ...], names: tuple[tuple[str, str], ...] = ()) -> dict[str, Any]:
    """`m` as a JSON object: `keys` in that order (a format's own choice), each optional one only when set;
    `names` renames keys (the log's short `n` and `h`). Every request's added messages pass through
    here, so each (keys, names) is worked out once."""
    out: dict[str, Any] = {}
    for name, attr, optional, encode in _plan(keys, names):
        value = getattr(m, attr)
        if optional and not value:
            continue
        out[name] = encode(value) if encode else value
    return out


@lru_cache(maxsize=None)
def _plan(keys: tuple[str, ...], names: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str, bool, Any], ...]:
    renamed = dict(names)
    return tuple((renamed.get(k, k), KEYS[k], k in OPTIONAL, _ENCODE.get(k)) for k in keys)


def from_json(tok: Tokenizer, rec: dict[str, Any], *, loose: bool = False) -> Message:
    """A message from its JSON object, counted and hashed anew (a count or hash in `rec` is never read).
    `loose` reads one another program wrote (the external protocol's written messages, already checked
    for id, tag, role and text): role defaults to user, `t` is any number or absent, `call` counts only on
    a tool message, a `tool` or `source` that is not a string is left out, and a skill is never taken
    from it. Malformed calls or parts raise ValueError(MALFORMED)."""
    try:
        calls = [Call(str(c["id"]), str(c["tool"]), dict(c.get("args") or {})) for c in rec.get("calls") or ()]
        parts = [Part(str(p[0]), str(p[1])) if isinstance(p, list) else Part(str(p["tag"]), str(p["text"]))
                 for p in rec.get("parts") or ()]
    except (KeyError, TypeError, ValueError, IndexError):
        raise ValueError(MALFORMED) from None
    role = rec.get("role", "user") if loose else rec["role"]
    call, tool, source = rec.get("call"), rec.get("tool"), rec.get("source")
    if loose:
        call = call if role == "tool" else None
        tool, source = (v if isinstance(v, str) else None for v in (tool, source))
    return make(tok, id=rec["id"], role=role, text=rec["text"], tag=rec["tag"],
                t=float(rec.get("t") or 0.0) if loose else rec.get("t", 0.0), calls=calls, call_id=call, tool=tool,
                source=source, skill=None if loose else rec.get("skill"), parts=parts)


__all__ = ["KEYS", "OPTIONAL", "to_json", "from_json"]
