"""Claude Code session logs (`~/.claude/projects/<dir>/<session>.jsonl`), one JSON object a line.

Kept: the main thread's user prompts, assistant text and tool_use blocks (lines
of one streamed message, which share `message.id`, become one assistant event),
and each tool_result paired with its tool_use. Left out: sidechain lines (a
subagent's own conversation; its answer reaches the main thread as the Task
tool's result), thinking blocks, `summary` titles and file-history snapshots.
A `compact_boundary` system line is Claude Code's own compaction (`compactMetadata`: trigger,
preTokens): the summary line after it (`isCompactSummary`) and the `isMeta` lines that follow it (files it
read again, reminders) are what it installed, kept as the scenario's recorded compaction, not as events: no
other strategy sees Claude Code's summary. Other `isMeta` lines are written by the harness too and become
background messages with source `harness`, never the user's words. Text Claude Code writes into user
lines without such a flag (`[Request interrupted by user]`, the local-command
caveat, `<command-name>` / `<local-command-stdout>` / `<bash-input>` wrappers,
`<system-reminder>` blocks) is recognised by its wording in bench/text.py, for
every format alike (bench/scenarios/importers/common.py).
"""
from __future__ import annotations

from typing import Any

from bench.errors import BadInput
from bench.scenarios.importers.common import Boundary, Transcript, Turn, seconds, text_of

SKIP_TYPES = ("summary", "file-history-snapshot")
CONTINUED = "This session is being continued"   # the opening of Claude Code's summary (older logs lack the flag)
READ_AGAIN = "the Read tool"   # how Claude Code words a file it attaches again after compacting


def read(raw: Any, origin: str, stem: str) -> list[Transcript]:
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(x, dict) for x in raw):
        raise BadInput(f"{origin}: expected a Claude Code session log (JSONL, one JSON object a line)")
    turns: list[Turn] = []
    problems: list[str] = []
    boundaries: list[Boundary] = []
    installing: Boundary | None = None        # the compaction whose installed lines are being read
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
            if line.get("subtype") == "compact_boundary":
                meta = line.get("compactMetadata") if isinstance(line.get("compactMetadata"), dict) else {}
                pre = meta.get("preTokens")
                installing = Boundary(len(turns), meta.get("trigger") if meta.get("trigger") in ("auto", "manual")
                                      else "unknown", pre if isinstance(pre, int) and pre >= 0 else None)
                boundaries.append(installing)
            continue
        msg = line.get("message")
        if kind not in ("user", "assistant") or not isinstance(msg, dict):
            problems.append(f"{origin}:{n}: unknown line type '{kind}' or no 'message'")
            continue
        content = msg.get("content")
        if kind == "assistant":
            installing = None
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
                turns.append(Turn("assistant", "\n\n".join(texts), calls=calls, t=rel, at=str(n)))
            last_msg_id = mid
            continue
        last_msg_id = None
        text = content if isinstance(content, str) else "\n".join(
            text_of(b) for b in content if not (isinstance(b, dict) and b.get("type") == "tool_result")) \
            if isinstance(content, list) else ""
        summary = line.get("isCompactSummary") or (installing is not None and not installing.installed and
                                                    text.lstrip().startswith(CONTINUED))
        if summary or (installing is not None and line.get("isMeta")):
            if installing is None:        # a summary without its boundary line (older logs): a compaction all the same
                installing = Boundary(len(turns))
                boundaries.append(installing)
            installing.installed.append(("summary" if summary else "file" if READ_AGAIN in text else "harness",
                                         "user", text))
            continue
        installing = None
        if isinstance(content, str):
            harness = line.get("isMeta")
            turns.append(Turn("background", content, source="harness", t=rel, at=str(n)) if harness else
                         Turn("user", content, t=rel, at=str(n)))
            continue
        typed: list[str] = []
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                turns.append(Turn("tool", text_of(block.get("content")), call=str(block.get("tool_use_id")), t=rel, at=str(n)))
            else:
                typed.append(text_of(block))
        if typed:
            text = "\n".join(typed)
            harness = line.get("isMeta")
            turns.append(Turn("background", text, source="harness", t=rel, at=str(n)) if harness else
                         Turn("user", text, t=rel, at=str(n)))
    if problems:
        raise BadInput(problems)
    return [Transcript(stem, f"Claude Code session {stem}", "", turns, origin, boundaries)]
