"""Which tool calls touch files, and which paths: read from a call's name and arguments.

Strategies that carry file state across a compaction (vibey's file list, claude_code's
re-attached reads) need the same reading of the record: a call writes when its tool (or its
shell `command`) says edit / write / ..., reads when it says read / view / ..., and names its
files in the usual argument keys.
"""
from __future__ import annotations

import re
from typing import Any

from bench.scenarios.model import Call

PATH_KEYS = ("path", "file", "file_path", "filepath", "filename", "target", "paths", "files")
WRITES = re.compile(r"edit|write|create|patch|apply|replace|modify|update|append|insert|delete|remove|rename|"
                    r"move|save|\bmv\b|\brm\b", re.I)
READS = re.compile(r"read|view|cat|open|show|grep|search|head|tail|\bls\b|list|find|get", re.I)
# A call whose result is a file's content (a search or a listing touches files but shows none whole).
READS_CONTENT = re.compile(r"read|view|\bcat\b|open", re.I)


def kind(call: Call) -> str | None:
    """"write", "read" or None (the call touches no file we can tell)."""
    command = str(call.args.get("command", "")) if isinstance(call.args, dict) else ""
    for name in (command, call.tool):
        if WRITES.search(name):
            return "write"
        if READS.search(name):
            return "read"
    return None


def shows_content(call: Call) -> bool:
    """A read whose result is the file itself (read_file, view, cat), not a search over files."""
    return kind(call) == "read" and bool(READS_CONTENT.search(call.tool)) and bool(paths(call.args))


def paths(args: Any) -> list[str]:
    if not isinstance(args, dict):
        return []
    out: list[str] = []
    for key in PATH_KEYS:
        v = args.get(key)
        for p in v if isinstance(v, list) else [v]:
            if isinstance(p, str) and p.strip():
                out.append(p.strip())
    return out
