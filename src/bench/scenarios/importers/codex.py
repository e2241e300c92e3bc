"""Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): one `{timestamp, type, payload}` a line.

Kept: `response_item` messages (user, assistant; a developer or system message before the first turn is the
system prompt, a later one a harness message), `function_call` / `custom_tool_call` / `local_shell_call` with
their outputs (a call joins the assistant message before it), and `session_meta`'s instructions as the system
prompt. Left out: reasoning items and `event_msg` lines (they repeat the response items), except
`token_count`, whose last request size before a compaction is its pre-compaction size. A `compacted` line is
Codex's own compaction: its `replacement_history` is the whole context Codex continued from (the user's
messages it kept, its initial context, the summary behind its handoff prefix), kept as the scenario's recorded
compaction, not as events; an older rollout without it records only the summary (`message`). The rollout does
not say what started a compaction, so its trigger is `unknown` unless the line names one.
"""
from __future__ import annotations

from typing import Any

from bench.errors import BadInput
from bench.scenarios.importers.common import Boundary, Transcript, Turn, harness_made, parse_args, seconds, text_of
from bench.scenarios.importers.openai_chat import kind

CALLS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUTS = ("function_call_output", "custom_tool_call_output")


def read(raw: Any, origin: str, stem: str) -> list[Transcript]:
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(x, dict) and "type" in x for x in raw):
        raise BadInput(f"{origin}: expected a Codex rollout (JSONL, one {{timestamp, type, payload}} a line)")
    system: list[str] = []
    turns: list[Turn] = []
    boundaries: list[Boundary] = []
    problems: list[str] = []
    last_size: int | None = None
    start: float | None = None
    for n, line in enumerate(raw, 1):
        kind_, p = line.get("type"), line.get("payload")
        if not isinstance(p, dict):
            problems.append(f"{origin}:{n}: payload: expected a mapping, got {kind(p)}")
            continue
        t = seconds(line.get("timestamp"))
        start = t if start is None and t is not None else start
        rel = None if t is None or start is None else t - start
        if kind_ == "session_meta":
            if isinstance(p.get("instructions"), str) and p["instructions"].strip():
                system.append(p["instructions"])
        elif kind_ == "event_msg" and p.get("type") == "token_count":
            last_size = _size(p.get("info")) or last_size
        elif kind_ == "compacted":
            boundaries.append(_boundary(p, len(turns), last_size, "\n\n".join(system)))
        elif kind_ == "response_item":
            _item(p, rel, turns, system, f"{origin}:{n}", problems)
            if turns and turns[-1].at is None:
                turns[-1].at = str(n)
    if problems:
        raise BadInput(problems)
    return [Transcript(stem, f"Codex session {stem}", "\n\n".join(system), turns, origin, boundaries)]


def _item(p: dict[str, Any], rel: float | None, turns: list[Turn], system: list[str], where: str,
          problems: list[str]) -> None:
    typ = p.get("type")
    if typ == "message":
        role, text = p.get("role"), _text(p.get("content"))
        if role in ("developer", "system"):
            if turns:
                turns.append(Turn("background", text, source="harness", t=rel))
            else:
                system.append(text)
        elif role == "assistant":
            turns.append(Turn("assistant", text, t=rel))
        elif role == "user":
            turns.append(Turn("background", text, source="harness", t=rel) if harness_made(text) else
                         Turn("user", text, t=rel))
        else:
            problems.append(f"{where}: message role '{role}' (expected user, assistant, developer or system)")
    elif typ in CALLS:
        args = _args(p)
        call = (str(p.get("call_id") or p.get("id")), str(p.get("name") or typ.removesuffix("_call")), args)
        if turns and turns[-1].role == "assistant":
            turns[-1].calls.append(call)
        else:
            turns.append(Turn("assistant", "", calls=[call], t=rel))
    elif typ in OUTPUTS or typ == "local_shell_call_output":
        out = _unwrap(p.get("output"))
        text = out.get("content") if isinstance(out, dict) and "content" in out else out
        turns.append(Turn("tool", text if isinstance(text, str) else text_of(text), call=str(p.get("call_id")), t=rel))


def _unwrap(out: Any) -> Any:
    """Older rollouts store a shell result as a JSON string `{"output": ..., "metadata": {...}}`: the output is
    what the model read."""
    if isinstance(out, str) and out.startswith("{"):
        value = parse_args(out)
        if isinstance(value.get("output"), str):
            return value["output"]
    return out


def _boundary(p: dict[str, Any], at: int, size: int | None, system: str) -> Boundary:
    trigger = p.get("trigger") if p.get("trigger") in ("auto", "manual") else "unknown"
    b = Boundary(at, trigger, size)
    history = p.get("replacement_history")
    if not isinstance(history, list):
        if isinstance(p.get("message"), str):
            b.installed.append(("summary", "user", p["message"]))
        return b
    summary = p.get("message") if isinstance(p.get("message"), str) else ""
    for item in history:
        if not isinstance(item, dict) or item.get("type") != "message":
            continue   # calls, reasoning and encrypted compaction items carry no text a request could show
        role, text = item.get("role"), _text(item.get("content"))
        if role in ("developer", "system"):
            if text.strip() and text.strip() != system.strip():
                b.installed.append(("harness", "user", text))
        elif role == "assistant":
            b.installed.append(("retained", "assistant", text))
        elif summary.strip() and summary.strip() in text or text.lstrip().startswith(HANDOFF):
            b.installed.append(("summary", "user", text))
        else:
            b.installed.append(("harness" if harness_made(text) else "retained", "user", text))
    return b


HANDOFF = "Another language model started to solve this problem"   # Codex's prefix before its summary


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict) and c.get("text") is not None)
    return text_of(content)


def _args(p: dict[str, Any]) -> dict[str, Any]:
    if p.get("type") == "local_shell_call":
        action = p.get("action")
        return {"action": action} if isinstance(action, dict) else {}
    return parse_args(p.get("arguments", p.get("input")))


def _size(info: Any) -> int | None:
    """The last request's size (input plus output) from a token_count event, when it says."""
    last = info.get("last_token_usage") if isinstance(info, dict) else None
    if not isinstance(last, dict):
        return None
    total = last.get("total_tokens")
    if isinstance(total, int):
        return total
    parts = [last.get(k) for k in ("input_tokens", "output_tokens")]
    return sum(parts) if all(isinstance(x, int) for x in parts) else None
