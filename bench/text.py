"""Plain-text rules shared by the importers (derived truth) and the scorers (user_words_retained):
which user messages say something, and what their first real sentence is."""
from __future__ import annotations

import re


def normalize(text: str) -> str:
    """Case-insensitive, whitespace-normalised form used by every text match."""
    return " ".join(text.split()).casefold()

ACKS = {"continue", "ok", "okay", "k", "yes", "y", "no", "n", "thanks", "thank you", "thx", "go on", "go ahead", "proceed",
        "sounds good", "lgtm", "great", "perfect", "sure", "keep going", "do it", "yep", "nope", "cool", "done", "next"}
GREETING = re.compile(r"^(hi|hello|hey|thanks|thank you|great|ok|okay|sure|yes|no|perfect|good (morning|afternoon|evening))\b[\s,!.]*",
                      re.I)
PLEASANTRY = re.compile(r"^(thanks|thank you|cheers|bye|goodbye|have a (nice|good)|no worries|sorry)\b", re.I)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
QUOTE_CHARS = 200


def substantive(text: str) -> bool:
    """Not an acknowledgement, not a bare paste of terminal output or code."""
    words = normalize(text).strip(" .!?")
    if not words or words in ACKS or len(words.split()) < 3 and not re.search(r"[/_.:#0-9]", words):
        return False
    lines = [ln for ln in text.splitlines() if ln.strip()]
    prose = [ln for ln in lines if _is_prose(ln)]
    return bool(prose) and (len(lines) < 3 or len(prose) / len(lines) >= 0.2)


def _is_prose(line: str) -> bool:
    s = line.strip()
    if s.startswith(("$ ", ">>> ", "at ", "File \"", "Traceback", "+", "-", "|", "{", "}", "```", "#!")):
        return False
    words = re.findall(r"[A-Za-z][A-Za-z'’-]+", s)
    return len(words) >= 3 and sum(len(w) for w in words) >= 0.5 * len(s)


def first_sentence(text: str) -> str | None:
    """The first real sentence (greetings and one-word lines skipped), cut at a word boundary."""
    for raw in SENTENCE_END.split(text):
        s = raw.strip()
        if PLEASANTRY.match(s):
            continue
        g = GREETING.match(s)
        if g and len(s[g.end():].split()) >= 3:
            s = s[g.end():]
        if len(re.findall(r"[A-Za-z]{2,}", s)) < 3 or not _is_prose(s) and len(s.split()) < 5:
            continue
        if len(s) > QUOTE_CHARS:
            s = s[:QUOTE_CHARS].rsplit(None, 1)[0]
        return s
    return None


__all__ = ["normalize", "substantive", "first_sentence"]
