"""One check point's request, read once into the normalised texts every check matches against.

Three readings of the same messages (DESIGN §6):
- everything the model sees (all messages, tool-call arguments included);
- what it receives as the user's own words: user-tagged text, background text that
  arrived without its source marker (route a, one unit per message part), and memo
  entries (route b, one unit per `#N: ` entry of a memo part, else per part);
- sentences of model-written text (any tag that is not an event's), for route c.
Routes a and b keep their units apart: a payload leaks only when all its keys are in
one unit, never when they are spread over several messages. The everything-text joins
messages with a separator no key contains, so a key never matches across two messages.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from ..loader import normalize
from ..messages import EVENT_TAGS, MARKER, USER_WORDS, Message, calls_text

SEP = " \u241e "
SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
# A memo part holds verbatim entries "#N: text" separated by blank lines (strategies/vibey/memo.py).
MEMO_ENTRY = re.compile(r"\n\n(?=#\d+: )")
SOURCE_WORDS = re.compile(r"\b(watch|cron|callback|background|harness|session|monitor|bot)(e?s)?\b")


@dataclass
class View:
    text: str                                  # everything, normalised
    user: list[str] = field(default_factory=list)      # route a: each user text / unmarked background part
    memo: list[str] = field(default_factory=list)      # route b: each memo entry (or part)
    written: list[str] = field(default_factory=list)   # route c: normalised model-written sentences

    def has(self, key: str) -> bool:
        return key in self.text


def build(messages: Sequence[Message], memo: dict[str, tuple] | None = None) -> View:
    """The View of a request; `memo` (per cell) keeps each message's readings by hash, since
    consecutive check points share most of their messages."""
    memo = {} if memo is None else memo
    everything, user, said, written = [], [], [], []
    for m in messages:
        r = memo.get(m.hash)
        if r is None:
            r = memo[m.hash] = _read(m)
        everything.append(r[0])
        user.extend(r[1])
        said.extend(r[2])
        written.extend(r[3])
    return View(SEP.join(everything), user, said, written)


def _read(m: Message) -> tuple[str, list[str], list[str], list[str]]:
    text = normalize(m.text + ("\n" + calls_text(m.calls) if m.calls else ""))
    user, memo, written = [], [], []
    for part in m.segments():
        if part.tag == "memo":
            memo.extend(normalize(e) for e in memo_entries(part.text))
        elif part.tag in USER_WORDS or (part.tag == "background" and not part.text.lstrip().startswith(MARKER)):
            user.append(normalize(part.text))
        elif part.tag not in EVENT_TAGS:
            written.extend(normalize(s) for s in SENTENCES.split(part.text) if s.strip())
    return text, user, memo, written


def memo_entries(text: str) -> list[str]:
    """A memo part's units: its `#N: ` entries when it is laid out that way, else the whole part."""
    return MEMO_ENTRY.split(text) if re.match(r"\s*#\d+: ", text) else [text]


def names_user(user: str) -> re.Pattern[str]:
    """Words by which model-written text attributes something to the human user."""
    name = re.escape(normalize(user)) if user.strip() else "user"
    return re.compile(rf"\buser\b|\b{name}\b|\byou asked\b|\brequested\b")


def attributed(sentence: str, user_pattern: re.Pattern[str]) -> bool:
    """Route c: the sentence names the user and no source."""
    return bool(user_pattern.search(sentence)) and not SOURCE_WORDS.search(sentence)
