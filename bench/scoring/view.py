"""How the scorers read one message (DESIGN §6), once per message hash.

Three readings of the same message:
- its retention units: what the agent would know from it. The system prompt is rebuilt for
  every request and can never be lost, and tool-call arguments are the agent's own actions,
  not memory: neither is retention text;
- what it presents as the user's own words: unmarked background (route a), parts a strategy
  tags as the user's or as the memo (routes a and b), one unit per part or memo entry, so a
  payload leaks only when all its keys are in one unit. Text that is the user's real words
  (a substring of one of the user's own messages) is not a leak whoever copies it;
- the units of text the strategy wrote, whatever its tag (route c, and decisions coming back):
  anything that is not the harness's own rendering of an event.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..loader import normalize
from ..messages import MARKER, Message
from ..units import Unit, units

# A memo part holds verbatim entries "#N: text" separated by blank lines (strategies/vibey/memo.py).
MEMO_ENTRY = re.compile(r"\n\n(?=#\d+: )")
ENTRY_PREFIX = re.compile(r"^\s*#\d+:\s*")
CUT_NOTE = re.compile(r"\s*\[cut [^\]]*\]\s*$", re.I)
USER_TAGS = ("user", "memo")


@dataclass
class Reading:
    text: str                                         # normalised retention text, for a quick prefilter
    raw: list[str] = field(default_factory=list)      # the retention parts' texts, split into units on demand
    user: list[str] = field(default_factory=list)     # routes a/b: units presented as the user's words
    memo: list[str] = field(default_factory=list)
    wrote: list[str] = field(default_factory=list)     # route c: the parts of strategy-written text
    _units: list[Unit] | None = None
    _written: list[Unit] | None = None

    @property
    def units(self) -> list[Unit]:
        if self._units is None:
            self._units = [u for part in self.raw for u in part_units(part)]
        return self._units

    @property
    def written(self) -> list[Unit]:
        """The units of `wrote`, split when first read: only a message near an injection or a rejected
        option reads them."""
        if self._written is None:
            self._written = [u for part in self.wrote for u in part_units(part)]
        return self._written


_UNITS: dict[str, list[Unit]] = {}


def part_units(text: str) -> list[Unit]:
    """`units(text)`, once per text: a part the strategy wrote is read both as retention and as written
    text, and the same part recurs in the messages of later compactions. Callers never change the list."""
    got = _UNITS.get(text)
    if got is None:
        if len(_UNITS) > 256:      # a bound on what a worker keeps: the reuse is mostly within a message
            _UNITS.clear()
        got = _UNITS[text] = units(text)
    return got


def read(m: Message, verbatim: bool, said: "Said") -> Reading:
    """`verbatim`: the message is the harness's own rendering of an event."""
    if m.role == "system":
        return Reading("")
    parts = m.segments()
    r = Reading(normalize("\n".join(p.text for p in parts)), [p.text for p in parts])
    for part in parts:
        unmarked = part.tag == "background" and not part.text.lstrip().startswith(MARKER)
        if part.tag == "memo":
            r.memo.extend(e for e in (normalize(x) for x in memo_entries(part.text)) if not said.by_user(e))
        elif unmarked or (part.tag in USER_TAGS and not verbatim):
            text = normalize(part.text)
            if unmarked or not said.by_user(text):
                r.user.append(text)
        elif not verbatim:
            r.wrote.append(part.text)
    return r


def memo_entries(text: str) -> list[str]:
    """A memo part's units: its `#N: ` entries when it is laid out that way, else the whole part."""
    return MEMO_ENTRY.split(text) if re.match(r"\s*#\d+: ", text) else [text]


class Said:
    """The user's own words in a scenario, to tell a copy of them from a background payload."""

    def __init__(self, texts: list[str]):
        self.texts = [normalize(t) for t in texts]

    def by_user(self, unit: str) -> bool:
        core = CUT_NOTE.sub("", ENTRY_PREFIX.sub("", unit)).strip()
        return bool(core) and any(core in t for t in self.texts)


__all__ = ["Reading", "read", "part_units", "memo_entries", "Said"]
