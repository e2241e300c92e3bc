"""The mind file: four sections in fixed order, changed only by edits.

A section is a level-1 heading (`# I am here`) and the lines up to the next
one. Mission entries are the bullet lines under `## Mission` in Goals; they
are the anchor of the whole memory, so a mind with fewer of them than before
(or without one of the ids it had) is rejected, whatever else it says. Text
before the first heading belongs to no section and no cap, so it is rejected.
An edit whose `old` covers a whole section body counts as that checkpoint's one
section rewrite (whole_section).
"""
from __future__ import annotations

import re

from bench.tokens import Tokenizer

from bench.strategies.vibey.budgets import SECTIONS
from bench.strategies.vibey.texts import raw

SUBSECTIONS = ("Mission", "Workstreams")
BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\S")
ENTRY_ID = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\**\[?(M\d+)\b")


class EditError(ValueError):
    """An edit the tool refuses; its message goes back to the writer as the tool result."""


def template() -> str:
    return raw("mind_template.md")


def sections(text: str, level: int = 1) -> list[tuple[str, str]]:
    """(heading, body) for each heading of `level` (# or ##), in order; text before the first has heading ''."""
    mark = "#" * level + " "
    out: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines():
        if line.startswith(mark):
            out.append((line[len(mark):].strip(), []))
        else:
            out[-1][1].append(line)
    return [(h, "\n".join(body)) for h, body in out if h or "".join(body).strip()]


def body(text: str, heading: str) -> str:
    return next((b for h, b in sections(text) if h == heading), "")


def subsections(goals: str) -> list[tuple[str, str]]:
    return sections(goals, level=2)


def mission(text: str) -> list[str]:
    """The mission entries (bullet lines under ## Mission)."""
    sub = dict(subsections(body(text, "Goals")))
    return [line.strip() for line in sub.get("Mission", "").splitlines() if BULLET.match(line)]


def mission_ids(entries: list[str]) -> list[str]:
    return [m.group(1) for m in (ENTRY_ID.match(e) for e in entries) if m]


def _section_at(text: str, pos: int) -> int:
    """Index of the section that holds character `pos`."""
    return sum(1 for m in re.finditer(r"^# ", text, flags=re.M) if m.start() <= pos)


def whole_section(text: str, old: str) -> str | None:
    """The section whose whole body `old` covers, when that is a rewrite: a body of two lines or
    more that is no longer the template's (filling the template is not a rewrite)."""
    if not old or text.count(old) != 1:
        return None
    at = text.index(old)
    heads = list(re.finditer(r"^# (.*)$", text, flags=re.M))
    blank = dict(sections(template()))
    for i, h in enumerate(heads):
        start, end = h.end(), heads[i + 1].start() if i + 1 < len(heads) else len(text)
        body_ = text[start:end]
        lines = [x.strip() for x in body_.splitlines() if x.strip()]
        if len(lines) < 2 or lines == [x.strip() for x in blank.get(h.group(1).strip(), "").splitlines() if x.strip()]:
            continue
        first = start + len(body_) - len(body_.lstrip())
        last = start + len(body_.rstrip())
        if at <= first and at + len(old) >= last:
            return h.group(1).strip()
    return None


def apply_edit(text: str, old: str, new: str) -> str:
    if not old:
        raise EditError("`old` is empty; quote the exact text to replace (or rewrite_mind_section once)")
    n = text.count(old)
    if n == 0:
        raise EditError("`old` was not found in mind.md; read the file and quote it exactly")
    if n > 1:
        raise EditError(f"`old` occurs {n} times in mind.md; include more surrounding text")
    at = text.index(old)
    start = at + 1 if old.startswith("\n") else at
    if _section_at(text, start) != _section_at(text, at + len(old.rstrip("\n")) - 1):
        raise EditError("an edit must stay within one section; the mind is never overwritten whole")
    return text.replace(old, new, 1)


def rewrite_section(text: str, heading: str, new_body: str) -> str:
    names = [h for h, _ in sections(text)]
    if heading not in SECTIONS or heading not in names:
        raise EditError(f"unknown section {heading!r}; sections are {', '.join(SECTIONS)}")
    out, current = [], None
    for line in text.splitlines():
        if line.startswith("# "):
            current = line[2:].strip()
            out.append(line)
            if current == heading:
                out.append(new_body.strip("\n"))
                out.append("")
            continue
        if current != heading:
            out.append(line)
    return "\n".join(out).rstrip("\n") + "\n"


def validate(new: str, old: str, caps: dict[str, int], tok: Tokenizer) -> list[str]:
    problems: list[str] = []
    before_first = next((b for h, b in sections(new) if not h), "")
    if before_first.strip():
        problems.append(f"mind: {tok.count(before_first.strip())} tokens of text stand before '# I am here'; "
                        f"nothing may precede the first heading, move it into a section")
    found = [h for h, _ in sections(new) if h]
    if found != list(SECTIONS):
        missing = [h for h in SECTIONS if h not in found]
        what = f"missing {', '.join(repr(h) for h in missing)}" if missing else f"found {found}"
        problems.append(f"mind: the headings must be exactly {', '.join(repr(h) for h in SECTIONS)} in this "
                        f"order ({what})")
    subs = [h for h, _ in subsections(body(new, "Goals")) if h]
    if [h for h in subs if h in SUBSECTIONS] != list(SUBSECTIONS):
        problems.append("mind: Goals must hold '## Mission' then '## Workstreams'")
    before, after = mission(old), mission(new)
    if len(after) < len(before):
        problems.append(f"mind: Mission has {len(after)} entries, the previous mind had {len(before)}; mission "
                        f"entries are never deleted, mark them done / withdrawn / replaced instead")
    gone = [i for i in mission_ids(before) if i not in mission_ids(after)]
    if gone:
        problems.append(f"mind: mission entries {', '.join(gone)} are gone; keep them and mark their status")
    for heading, text in sections(new):
        cap = caps.get(heading)
        n = tok.count(text.strip())
        if cap is not None and n > cap:
            problems.append(f"mind: section {heading!r} has {n} tokens, its cap is {cap}")
    return problems
