"""The memo: a checklist the writer may only tick, and the verbatim copy the harness makes.

The model never re-types the user's words. It sees one line per candidate
message (checkbox, record number, preview) and changes checkboxes; the harness
then copies each ticked message from the record, cut to a per-message budget
with a note naming the message that holds the full text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from bench.harness.messages import Message
from bench.tokens import Tokenizer

from bench.strategies.vibey.texts import block

HEADER = ("# Memo checklist: tick the messages to keep (only checkboxes may change)",)
LINE = re.compile(r"^- \[([ xX])\] #(\d+)\b")
PREVIEW_WORDS = 14


@dataclass(frozen=True)
class Checklist:
    text: str                   # memo.md as written by the harness
    kept: tuple[int, ...]       # entries of earlier checkpoints (listed ticked)
    new: tuple[int, ...]        # candidates of this checkpoint (listed unticked)

    @property
    def numbers(self) -> tuple[int, ...]:
        return self.kept + self.new


def preview(text: str) -> str:
    words = text.split()
    cut = " ".join(words[:PREVIEW_WORDS])
    return cut + (" …" if len(words) > PREVIEW_WORDS else "")


def checklist(kept: list[int], new: list[int], record: dict[int, Message]) -> Checklist:
    lines = [*HEADER]
    lines += [f"- [x] #{n} {preview(record[n].text)}" for n in kept]
    lines += [f"- [ ] #{n} {preview(record[n].text)}" for n in new]
    return Checklist("\n".join(lines) + "\n", tuple(kept), tuple(new))


def tick(text: str, numbers: list[int], ticked: bool) -> tuple[str, str]:
    """Set the checkbox of the given lines; returns (new text, tool result)."""
    want, box = set(numbers), "x" if ticked else " "
    seen: set[int] = set()
    out = []
    for line in text.splitlines():
        m = LINE.match(line)
        if m and int(m.group(2)) in want:
            seen.add(int(m.group(2)))
            line = f"- [{box}]" + line[5:]
        out.append(line)
    unknown = sorted(want - seen)
    verb = "ticked" if ticked else "unticked"
    result = f"{verb}: {', '.join(f'#{n}' for n in sorted(seen)) or 'nothing'}"
    if unknown:
        result += f"; not in the checklist: {', '.join(f'#{n}' for n in unknown)}"
    return "\n".join(out) + "\n", result


def entry(msg: Message, number: int, each: int, tok: Tokenizer) -> str:
    """One memo entry: the message text exactly as recorded, cut to `each` tokens with a note."""
    text = msg.text
    if tok.count(text) > each:
        text = tok.truncate(text, each).rstrip() + " " + block("recollection.md", "memo_cut", each=each,
                                                              number=number)
    return f"#{number}: {text}"


def ticks(text: str, sheet: Checklist) -> tuple[list[int], list[str]]:
    """The ticked numbers, and a problem for every change that is not a checkbox."""
    problems: list[str] = []
    before, after = sheet.text.splitlines(), text.splitlines()
    if len(after) != len(before):
        problems.append(f"memo: memo.md has {len(after)} lines, the checklist had {len(before)}; lines may not "
                        f"be added or removed, only checkboxes changed")
    ticked: list[int] = []
    for i, (was, now) in enumerate(zip(before, after), 1):
        if _unbox(was) != _unbox(now):
            m = LINE.match(was)
            what = f"the line for #{m.group(2)}" if m else f"line {i}"
            problems.append(f"memo: {what} was changed beyond its checkbox (now: {now.strip()[:80]!r})")
            continue
        m = LINE.match(now)
        if m and m.group(1) in "xX":
            ticked.append(int(m.group(2)))
    return ticked, problems


def _unbox(line: str) -> str:
    return re.sub(r"^- \[[ xX]\]", "- [ ]", line.rstrip())


def cost(msg: Message, each: int, tok: Tokenizer) -> int:
    """What a ticked message takes of the memo budget: its own words, cut to `each`."""
    return min(tok.count(msg.text), each)


def over_budget(ticked: dict[int, Message], each: int, total: int, tok: Tokenizer) -> list[str]:
    used = sum(cost(m, each, tok) for m in ticked.values())
    if used <= total:
        return []
    return [f"memo: the ticked messages take {used} tokens, the memo holds at most {total}; untick some "
            f"({', '.join(f'#{n}' for n in ticked)} are ticked)"]
