"""OpenAI chat messages: a list of messages, `{"messages": [...]}`, JSONL of messages, or
records that hold a conversation under `traj` (tau-bench), `messages` or `conversation`.

The first system messages become the scenario's system prompt; a later system
message is something the harness injected mid-session, so it becomes a
background message with source `harness`.
"""
from __future__ import annotations

from typing import Any

from bench.errors import BadInput
from bench.scenarios.importers.common import Transcript, Turn, each_record, first_sentence, parse_args, slug, text_of

CONVERSATION_KEYS = ("traj", "messages", "conversation")


def read(raw: Any, origin: str, stem: str) -> list[Transcript]:
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise BadInput(f"{origin}: expected a list of chat messages or of records, got {type(raw).__name__}")
    if all(isinstance(m, dict) and "role" in m for m in raw):
        return [transcript(raw, origin, stem, stem)]

    def one(i: int, rec: Any, where: str) -> Transcript:
        msgs = next((rec[k] for k in CONVERSATION_KEYS if isinstance(rec, dict) and isinstance(rec.get(k), list)), None)
        if msgs is None:
            raise BadInput(f"{where}: no chat messages (expected a list under one of: {', '.join(CONVERSATION_KEYS)})")
        task = rec.get("task_id")
        sid = slug(f"{stem}-task-{task}" if task is not None else f"{stem}-{i}")
        return transcript(msgs, where, sid, _title(rec, sid))
    return each_record(raw, origin, one)


def _title(rec: dict[str, Any], sid: str) -> str:
    task = ((rec.get("info") or {}).get("task") or {}) if isinstance(rec.get("info"), dict) else {}
    instruction = task.get("instruction") if isinstance(task, dict) else None
    extra = f" (reward {rec['reward']})" if "reward" in rec else ""
    if isinstance(instruction, str) and first_sentence(instruction):
        return f"{sid}{extra}: {first_sentence(instruction)}"
    return sid + extra


def transcript(msgs: list[Any], origin: str, sid: str, title: str) -> Transcript:
    system: list[str] = []
    turns: list[Turn] = []
    problems = []
    for n, m in enumerate(msgs):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            problems.append(f"{origin}: message {n}: expected a mapping with a 'role'")
            continue
        role, text = m["role"], text_of(m.get("content"))
        if role in ("system", "developer"):
            if turns:
                turns.append(Turn("background", text, source="harness"))
            else:
                system.append(text)
        elif role == "user":
            turns.append(Turn("user", text))
        elif role == "assistant":
            calls = openai_calls(m.get("tool_calls"), f"{origin}: message {n}", problems)
            fc = m.get("function_call")   # legacy single function call
            if fc is not None and not isinstance(fc, dict):
                problems.append(f"{origin}: message {n}: function_call: expected a mapping, got {kind(fc)}")
            elif fc is not None:
                name = tool_name(fc.get("name"), f"{origin}: message {n}: function_call.name", problems)
                calls.append((f"fn:{fc.get('name')}", name, parse_args(fc.get("arguments"))))
            turns.append(Turn("assistant", text, calls=calls))
        elif role == "tool":
            turns.append(Turn("tool", text, call=str(m.get("tool_call_id"))))
        elif role == "function":
            turns.append(Turn("tool", text, call=f"fn:{m.get('name')}"))
        else:
            problems.append(f"{origin}: message {n}: unknown role '{role}' (expected system, user, assistant, tool)")
    if problems:
        raise BadInput(problems)
    return Transcript(sid, title, "\n\n".join(system), turns, origin)


def kind(value: Any) -> str:
    """How a wrong-shaped JSON value reads in a problem line."""
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number",
            type(None): "null"}.get(type(value), type(value).__name__)


def tool_name(value: Any, where: str, problems: list[str]) -> str:
    """A call's tool name: a string, 'tool' when absent; anything else is reported."""
    if value is None or value == "":
        return "tool"
    if not isinstance(value, str):
        problems.append(f"{where}: expected a tool name (a string), got {kind(value)}")
        return "tool"
    return value


def openai_calls(raw: Any, where: str, problems: list[str]) -> list[tuple[str, str, dict[str, Any]]]:
    """OpenAI `tool_calls` ([{id, function: {name, arguments}}]) as (id, tool, args); wrong shapes
    are added to `problems` (one line each) instead of raising mid-record. SWE-agent uses it too."""
    if not raw:
        return []
    if not isinstance(raw, list):
        problems.append(f"{where}: tool_calls: expected a list of calls, got {kind(raw)}")
        return []
    calls = []
    for i, c in enumerate(raw):
        fn = c.get("function") if isinstance(c, dict) else None
        if not isinstance(c, dict) or not isinstance(fn, (dict, type(None))):
            got = kind(c) if not isinstance(c, dict) else f"'function' as {kind(fn)}"
            problems.append(f"{where}: tool_calls[{i}]: expected a mapping with a 'function' mapping, got {got}")
            continue
        fn = fn or {}
        name = tool_name(fn.get("name"), f"{where}: tool_calls[{i}].function.name", problems)
        calls.append((str(c.get("id")), name, parse_args(fn.get("arguments"))))
    return calls
