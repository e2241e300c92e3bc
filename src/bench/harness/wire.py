"""OpenAI chat-completions wire format <-> our `Message` and `Reply`, in one place.

Two servers speak it: the loopback test server (bench/testing) and the writer endpoint an
external strategy process calls (bench/harness/endpoint.py). Both turn a request body's messages into
`Message`s (through `make`, like every other reader of messages), ask a `Model`, and send its `Reply`
back as a ``chat.completion``; the litellm model sends `to_wire` messages.
"""
from __future__ import annotations

import json
import time
from typing import Any, Callable

from bench.harness.messages import Message, make
from bench.harness.model import Reply
from bench.parsing import parse_args, text_of
from bench.scenarios.model import Call
from bench.tokens import Tokenizer


# OpenAI's newer name for the system prompt's role (reasoning models, the Responses API's SDKs).
ROLES = {"developer": "system"}
STREAM_PIECE = 256   # characters of text per streamed chunk


def to_wire(m: Message) -> dict[str, Any]:
    """A message as an OpenAI chat message (arguments with sorted keys: the same call, the same bytes)."""
    out: dict[str, Any] = {"role": m.role, "content": m.text}
    if m.calls:
        out["tool_calls"] = [{"id": c.id, "type": "function",
                              "function": {"name": c.tool, "arguments": json.dumps(c.args, sort_keys=True)}}
                             for c in m.calls]
    if m.role == "tool":
        out["tool_call_id"] = m.call_id
        if m.tool:
            out["name"] = m.tool
    return out


def from_wire(messages: list[dict[str, Any]], tok: Tokenizer,
              known: Callable[[Message], Message | None] | None = None) -> list[Message]:
    """OpenAI chat messages back into `Message`s. The wire carries no tags: each message is tagged
    with its role, unless `known` recognises it (by content) as a message the caller already
    holds, whose id, tag and source are then kept."""
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise ValueError(f"messages[{i}] is {type(m).__name__}, not an object")
        content = text_of(m.get("content"))
        calls = tuple(Call(str(c.get("id", "")), str(c["function"]["name"]), parse_args(c["function"].get("arguments")))
                      for c in m.get("tool_calls") or ())
        role = m.get("role", "user")
        role = ROLES.get(role, role)
        msg = make(tok, id=f"m{i}", role=role, text=content, tag=role, calls=calls,
                   call_id=m.get("tool_call_id"), tool=m.get("name"))
        out.append((known and known(msg)) or msg)
    return out


def reply_limit(body: dict[str, Any]) -> int | None:
    """The reply budget a request asks for (either of the two names OpenAI has used)."""
    limit = body.get("max_tokens") or body.get("max_completion_tokens")
    if not isinstance(limit, (int, float)) or isinstance(limit, bool) or not 0 < limit < 1 << 31:
        return None      # absent, not a number, NaN, infinite or absurd: no limit asked
    return int(limit)


def usage_of(reply: Reply, cached_tokens: int = 0) -> dict[str, Any]:
    usage: dict[str, Any] = {"prompt_tokens": reply.usage.input_tokens,
                             "completion_tokens": reply.usage.output_tokens,
                             "total_tokens": reply.usage.input_tokens + reply.usage.output_tokens}
    cached = cached_tokens or reply.usage.cached_input_tokens
    if cached:
        usage["prompt_tokens_details"] = {"cached_tokens": min(cached, reply.usage.input_tokens)}
    return usage


def completion(reply: Reply, *, model: str, n: int, usage: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``chat.completion`` body for `reply` (text and/or tool calls)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.calls:
        message["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.tool, "arguments": json.dumps(c.args)}}
                                 for c in reply.calls]
    return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()), "model": model,
            "usage": usage if usage is not None else usage_of(reply),
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish or "stop"}]}


def stream_chunks(body: dict[str, Any], include_usage: bool = False) -> list[dict[str, Any]]:
    """A ``chat.completion`` body as the ``chat.completion.chunk`` objects a streaming server sends:
    the role, the text in pieces, each tool call whole, the finish reason, and the usage last (with
    empty choices) when the request asked for it with ``stream_options.include_usage``. SDKs stream by
    default, so an external strategy's client works unchanged."""
    head = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"]}
    choice = body["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    text = message.get("content") or ""
    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": text[i:i + STREAM_PIECE]}) for i in range(0, len(text), STREAM_PIECE)]
    out += [chunk({"tool_calls": [{"index": k, **call}]}) for k, call in enumerate(message.get("tool_calls") or ())]
    out.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        out.append({**head, "choices": [], "usage": body["usage"]})
    return out


def error_body(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    """An OpenAI-style error object, which SDKs turn into their own exception with this text."""
    return {"error": {"message": message, "type": kind}}


__all__ = ["to_wire", "from_wire", "text_of", "parse_args", "completion", "stream_chunks", "usage_of", "reply_limit",
           "error_body"]
