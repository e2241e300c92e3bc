"""Claude Code session logs (`~/.claude/projects/<dir>/<session>.jsonl`), one JSON object a line.

Kept: the main thread's user prompts, assistant text and tool_use blocks (lines
of one streamed message, which share `message.id`, become one assistant event),
and each tool_result paired with its tool_use. Left out: sidechain lines (a
subagent's own conversation; its answer reaches the main thread as the Task
tool's result), thinking blocks, `summary` titles and file-history snapshots.
The user line after a `compact_boundary` holds Claude Code's own summary, and
`isMeta` lines are written by the harness too: both become background messages
with source `harness`, never the user's words. Text Claude Code writes into user
lines without such a flag (`[Request interrupted by user]`, the local-command
caveat, `<command-name>` / `<local-command-stdout>` / `<bash-input>` wrappers,
`<system-reminder>` blocks) is recognised by its wording in bench/text.py, for
every format alike (bench/scenarios/importers/common.py).
"""
from __future__ import annotations

from typing import Any

from bench.errors import BadInput
from bench.scenarios.importers.common import Transcript, Turn, seconds, text_of

SKIP_TYPES = ("summary", "file-history-snapshot")


def read(raw: Any, origin: str, stem: str) -> list[Transcript]:
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(x, dict) for x in raw):
        raise BadInput(f"{origin}: expected a Claude Code session log (JSONL, one JSON object a line)")
    turns: list[Turn] = []
    problems: list[str] = []
    after_boundary = False
    last_msg_id: str | None = None
    start: float | None = None
    for n, line in enumerate(raw, 1):
        kind = line.get("type")
        if kind in SKIP_TYPES or line.get("isSidechain"):
            continue
        t = seconds(line.get("timestamp"))
        start = t if start is None and t is not None else start
        rel = None if t is None or start is None else t - start
        if kind == "system":
            after_boundary = after_boundary or line.get("subtype") == "compact_boundary"
            continue
        msg = line.get("message")
        if kind not in ("user", "assistant") or not isinstance(msg, dict):
            problems.append(f"{origin}:{n}: unknown line type '{kind}' or no 'message'")
            continue
        content = msg.get("content")
        if kind == "assistant":
            texts, calls = [], []
            for block in content if isinstance(content, list) else [content]:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    inp = block.get("input")
                    calls.append((str(block.get("id")), str(block.get("name") or "tool"), inp if isinstance(inp, dict) else {"input": inp}))
                elif isinstance(block, dict) and block.get("type") == "text" or isinstance(block, str):
                    texts.append(text_of(block))
            if not texts and not calls:
                continue   # thinking only
            mid = msg.get("id")
            if mid is not None and mid == last_msg_id and turns and turns[-1].role == "assistant":
                prev = turns[-1]
                prev.text = "\n\n".join(x for x in (prev.text, *texts) if x)
                prev.calls.extend(calls)
            else:
                turns.append(Turn("assistant", "\n\n".join(texts), calls=calls, t=rel))
            last_msg_id = mid
            continue
        last_msg_id = None
        if isinstance(content, str):
            harness = after_boundary or line.get("isCompactSummary") or line.get("isMeta")
            turns.append(Turn("background", content, source="harness", t=rel) if harness else Turn("user", content, t=rel))
            after_boundary = False
            continue
        typed: list[str] = []
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                turns.append(Turn("tool", text_of(block.get("content")), call=str(block.get("tool_use_id")), t=rel))
            else:
                typed.append(text_of(block))
        if typed:
            text = "\n".join(typed)
            harness = after_boundary or line.get("isCompactSummary") or line.get("isMeta")
            turns.append(Turn("background", text, source="harness", t=rel) if harness else Turn("user", text, t=rel))
            after_boundary = False
    if problems:
        raise BadInput(problems)
    return [Transcript(stem, f"Claude Code session {stem}", "", turns, origin)]
