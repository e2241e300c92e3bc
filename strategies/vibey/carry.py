"""What a checkpoint carries besides mind, memo and scene: loaded skills and a file list.

Skills come back in their recorded text, most recently loaded first, within
per-skill, total and count budgets. Carrying one back is not a reload, so a
skill nobody loads again drifts to the end and is eventually pushed out.
The file list holds paths only, taken from the tool calls' arguments.
"""
from __future__ import annotations

import json
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Iterable

from bench.messages import Message
from bench.scenario import Call
from bench.tokens import Tokenizer

from .budgets import Budgets
from .texts import block

PATH_KEYS = ("path", "file", "file_path", "filepath", "filename", "target", "paths", "files")
WRITES = re.compile(r"edit|write|create|patch|apply|replace|modify|update|append|insert|delete|remove|rename|"
                    r"move|save|\bmv\b|\brm\b", re.I)
READS = re.compile(r"read|view|cat|open|show|grep|search|head|tail|\bls\b|list|find|get", re.I)


@dataclass(frozen=True)
class Skill:
    name: str
    text: str
    at: int          # record number of its latest load
    load: str = ""   # the call that loads it in full, as recorded ("" = the `vibe skill load NAME` command)

    def how(self) -> str:
        return self.load or f"vibe skill load {self.name}"


def loaded(messages: Iterable[Message], number: dict[str, int]) -> list[Skill]:
    """Skills loaded by these messages, with the recorded call that loaded each (its assistant message
    travels with the result)."""
    messages = list(messages)
    calls = {c.id: c for m in messages for c in m.calls}
    out = []
    for m in messages:
        if m.skill:
            c = calls.get(m.call_id or "")
            how = f"{c.tool} {json.dumps(c.args, sort_keys=True, ensure_ascii=False)}" if c else ""
            out.append(Skill(m.skill, m.text, number.get(m.id, 0), how))
    return out


def choose(skills: Iterable[Skill], b: Budgets, tok: Tokenizer) -> list[Skill]:
    """Latest load per name, most recent first, each cut to its budget, within the total and count."""
    latest: dict[str, Skill] = {}
    for s in skills:
        if s.name not in latest or s.at >= latest[s.name].at:
            latest[s.name] = s
    out, used = [], 0
    for s in sorted(latest.values(), key=lambda s: -s.at)[:b.skills_max]:
        text = s.text
        if tok.count(text) > b.skill_each:
            text = tok.truncate(text, b.skill_each).rstrip() + "\n" + block(
                "recollection.md", "skill_cut", each=b.skill_each, name=s.name, load=s.how())
        n = tok.count(text)
        if used + n > b.skills_total:
            continue
        used += n
        out.append(Skill(s.name, text, s.at, s.load))
    return out


class FileLog:
    """Most recently modified and read paths, in order of last touch."""

    def __init__(self) -> None:
        self.modified: OrderedDict[str, None] = OrderedDict()
        self.read: OrderedDict[str, None] = OrderedDict()

    def note(self, call: Call) -> None:
        kind = _kind(call)
        if kind is None:
            return
        bucket = self.modified if kind == "write" else self.read
        for path in _paths(call.args):
            bucket.pop(path, None)
            bucket[path] = None

    def text(self, b: Budgets) -> str:
        lines = []
        for title, bucket, n in (("recently modified", self.modified, b.files_modified),
                                 ("recently read", self.read, b.files_read)):
            paths = list(bucket)[::-1]
            if not paths:
                continue
            more = len(paths) - n
            note = f" ({more} older ones pushed out)" if more > 0 else ""
            lines.append(f"{title.capitalize()}{note}: " + ", ".join(paths[:n]))
        return "\n".join(lines)


def _kind(call: Call) -> str | None:
    command = str(call.args.get("command", "")) if isinstance(call.args, dict) else ""
    for name in (command, call.tool):
        if WRITES.search(name):
            return "write"
        if READS.search(name):
            return "read"
    return None


def _paths(args: Any) -> list[str]:
    if not isinstance(args, dict):
        return []
    out: list[str] = []
    for key in PATH_KEYS:
        v = args.get(key)
        for p in v if isinstance(v, list) else [v]:
            if isinstance(p, str) and p.strip():
                out.append(p.strip())
    return out
