"""A message's JSON record, shared by requests.jsonl and the external protocol: every field survives the
round trip, an optional one is written only when set, and an external process's object is read by
the protocol's looser rules."""
from __future__ import annotations

import json

import pytest

from bench.harness.logs import BODY, SHORT
from bench.harness.messages import CONTENT, Part, make
from bench.harness.record import KEYS, MALFORMED, OPTIONAL, from_json, to_json
from bench.scenarios.model import Call
from bench.strategies.exec.protocol import ADD
from bench.tokens import tokenizer

TOK = tokenizer()
FULL = make(TOK, id="m1", role="tool", text="ab", tag="memo", t=3.5, source="watch",
            calls=[Call("c1", "run", {"n": 1})], call_id="c0", tool="run", skill="review",
            parts=[Part("memo", "a"), Part("scene", "b")])


def test_every_field_of_make_has_a_key_and_comes_back():
    assert set(CONTENT) <= set(KEYS.values())
    back = from_json(TOK, json.loads(json.dumps(to_json(FULL, tuple(KEYS)))))
    assert all(getattr(back, f) == getattr(FULL, f) for f in CONTENT)
    assert (back.tokens, back.hash) == (FULL.tokens, FULL.hash)


def test_optional_fields_appear_only_when_set_in_each_formats_order():
    plain = make(TOK, id="u1", role="user", text="hi", tag="user")
    assert list(to_json(plain, BODY, SHORT)) == ["id", "role", "tag", "n", "h", "text", "t"]
    assert list(to_json(plain, ADD)) == ["id", "role", "tag", "text", "tokens", "t"]
    assert [k for k in to_json(FULL, ADD) if k in OPTIONAL] == ["source", "calls", "call", "tool", "skill"]


def test_a_process_written_object_is_read_loosely():
    m = from_json(TOK, {"id": "s1", "tag": "summary", "text": "x", "t": "2", "call": "c9", "tool": 5,
                        "source": "watch", "skill": "review", "parts": [{"tag": "summary", "text": "x"}]}, loose=True)
    assert (m.role, m.t, m.call_id, m.tool, m.source, m.skill) == ("user", 2.0, None, None, "watch", None)
    with pytest.raises(ValueError, match="calls must be"):
        from_json(TOK, {"id": "s1", "tag": "summary", "text": "x", "calls": ["c1"]}, loose=True)
    assert MALFORMED.startswith("calls must be")
