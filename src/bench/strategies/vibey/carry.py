"""What a checkpoint carries besides mind, memo and scene: loaded skills and a file list.

Skills come back in their recorded text, most recently loaded first, within
per-skill, total and count budgets. Carrying one back is not a reload, so a
skill nobody loads again drifts to the end and is eventually pushed out.
The file list holds paths only, taken from the tool calls' arguments.
"""
from __future__ import annotations

import json
from collections import OrderedDict
from dataclasses import dataclass
from typing import Iterable

from bench.harness.messages import Message
from bench.scenarios.model import Call
from bench.tokens import Tokenizer

from bench.strategies.files import kind, paths
from bench.strategies.vibey.budgets import Budgets
from bench.strategies.vibey.texts import block


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
        touched = kind(call)
        if touched is None:
            return
        bucket = self.modified if touched == "write" else self.read
        for path in paths(call.args):
            bucket.pop(path, None)
            bucket[path] = None

    def text(self, b: Budgets) -> str:
        lines = []
        for title, bucket, n in (("recently modified", self.modified, b.files_modified),
                                 ("recently read", self.read, b.files_read)):
            newest = list(bucket)[::-1]
            if not newest:
                continue
            more = len(newest) - n
            note = f" ({more} older ones pushed out)" if more > 0 else ""
            lines.append(f"{title.capitalize()}{note}: " + ", ".join(newest[:n]))
        return "\n".join(lines)
