"""Identifiers (what a bag of them pulled from dropped text holds) and an id named as a whole token.
"""
from __future__ import annotations

import re
from typing import Callable, Iterable

from bench.text import normalize


# Identifier-like tokens (what a bag of identifiers pulled from dropped text holds): paths,
# file:line, #ids, hex shas, numbers with units, ALL_CAPS, dotted / snake_case / camelCase names,
# hyphenated ids with a number. The validator warns about truth a bag of them would keep, and the
# `token_bag` reference adversary keeps exactly such a bag.
IDENTIFIER = re.compile(r"""^(?:[\w.~-]*/[\w./~@:+#=-]*|[\w.-]+\.\w+:\d+(?::\d+)?|\#\w+|[0-9a-f]{7,40}
    |[-+]?\d[\d,._:]*%?[a-zA-Z]{0,3}|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[A-Z]{2,}[0-9]*|[A-Za-z_]\w*(?:\.\w+)+(?:\(\))?
    |[a-z]\w*_\w+|[a-z]+[0-9]*[A-Z]\w*|[A-Za-z]+(?:-[A-Za-z0-9]+)*-\d[\w-]*|\w*\d\w*)$""", re.X)
WORD = re.compile(r"^[A-Za-z][a-z]*(?:['’-][A-Za-z]+)*$")
STRIP = "()[]{}<>,;:\"'`!?.…“”‘’*"


def tokens(text: str) -> list[str]:
    """A text's whitespace-separated tokens without surrounding punctuation."""
    return [t for t in (raw.strip(STRIP) for raw in text.split()) if t]


def identifier(token: str) -> bool:
    return len(token) >= 2 and bool(IDENTIFIER.match(token))


def _word(token: str, least: int) -> bool:
    return len(token) >= least and bool(WORD.match(token)) and not IDENTIFIER.match(token)


def descriptive(key: str) -> bool:
    """A key that says what a value is: at least two ordinary words ('first bad commit',
    'backoff never grows'), not only identifiers, numbers and codes."""
    return sum(_word(w, 2) for w in tokens(key)) >= 2


def ordinary(key: str) -> bool:
    """A key holding at least one ordinary word (a bag of identifiers never does)."""
    return any(_word(w, 3) for w in tokens(key))


def mention(item: str) -> re.Pattern[str]:
    """An item id as a whole token: '#101' not inside '#1012' (but in 'acme/api#101'), 'auth' not
    inside 'author'."""
    return re.compile(mention_source(normalize(item)))


def mention_source(t: str) -> str:
    left = r"(?<![\w])" if _wordchar(t[:1]) else ""
    right = r"(?![\w])" if _wordchar(t[-1:]) else ""
    return left + re.escape(t) + right


def _wordchar(c: str) -> bool:
    """A word character as the regex `\\w` reads one (a letter, digit or '_'); False for ''."""
    return c.isalnum() or c == "_"


def spans(text: str, t: str, wordchar: Callable[[str], bool] = _wordchar) -> Iterable[int]:
    """Where the normalised id `t` stands in `text` as a whole token, left to right, overlaps included:
    `mention(t)`'s test without compiling a pattern per id (a queue of a thousand ids compiled a
    thousand patterns, more than the regex cache holds, on every validation). `wordchar`: what may not
    touch either end of `t` when that end is one itself."""
    if not t:
        return
    left, right, n, end = wordchar(t[0]), wordchar(t[-1]), len(t), len(text)
    at = text.find(t)
    while at >= 0:
        if not (left and at and wordchar(text[at - 1])) and not (right and at + n < end and wordchar(text[at + n])):
            yield at
        at = text.find(t, at + 1)


def names(text: str, t: str) -> bool:
    """Whether `text` holds the normalised id `t` as a whole token."""
    return next(iter(spans(text, t)), None) is not None
