"""Does a writer's answer do the task it was given? One structural check, shared by every strategy.

A real model fails a writer task in ways that still return HTTP 200 with text: it is cut at
`max_tokens` (finish `length`, usually a repetition loop), it answers nothing, it loops, it answers
the instruction as a chat turn ("I'm ready to continue. What's the next step?"), it echoes the
instruction back, or it writes "None." under every heading. None of these is a summary, so each is a
failed compaction with the strategy's fallback — never a silent success.

The checks are structural, not word lists:

- **cut**: the model says it stopped at its token limit (finish `length`). The model's own tokenizer
  is not the bench's, so only the finish reason can say an answer was cut.
- **empty**: no text (after the markup a strategy strips).
- **loop**: the text is mostly repetition (it compresses to under a fifth of its size, or a handful
  of distinct lines make up most of it).
- **carries nothing of the conversation**: a summary, a checkpoint, a handoff or a list of
  constraints is *about* the conversation it was given, so it repeats some of its specifics: an
  identifier, a path, a number, or a pair of content words side by side ("flaky tests", "release
  branch"). An answer that shares fewer than two of them with the conversation — the instruction and
  the system prompt do not count — is a chat reply, an echo of the instruction, an invented text or
  "I do not know"; a terse one that shares one, with at most one specific of its own besides
  ("Next: #106."), passes. Where the conversation itself holds too few specifics to tell, this check
  passes.
- **every section empty** (for answers under named headings): "None." under each heading.

`assess` is the task-independent part (the harness records its verdict on every writer call in
compactions.jsonl, whatever the strategy does with the answer); strategies call it through their
shared helpers (strategies/summary.py, strategies/sectioned/answer.py, vibey's validation), each with
what its task counts as the conversation.
"""
from __future__ import annotations

import re
import zlib
from collections import Counter
from functools import lru_cache
from typing import Iterable, Sequence

from bench.harness.messages import EVENT_TAGS, Message

CUT = "length"               # the finish reason of an answer cut at max_tokens (OpenAI, litellm, llama.cpp)
MIN_SPECIFICS = 2            # specifics of the conversation an answer must repeat
MIN_SOURCE = 4               # with fewer in the conversation there is nothing to tell an answer by
SHORT_WORDS = 40            # an answer this short that copies one recorded message whole is a copy
LOOP_MIN_CHARS = 64          # a shorter text is never called a loop
RUN = re.compile(r"(.{1,12}?)\1{15,}", re.S)     # a unit of up to 12 characters 16 times or more in a row
SENTENCE = re.compile(r"(?<=[.!?])\s+")
DIGITS = re.compile(r"\d+")
MARK = re.compile(r"^(?:[-*+•]\s+|\d+[.)]\s+|#+\s+)+")
PUNCT = " \t\n.,;:!?-=_*#~`'\"|/\\()[]{}<>+"
TOKEN = re.compile(r"[A-Za-z0-9_#./:@'-]+")
WORDISH = re.compile(r"^[a-z]+(?:'[a-z]+)?$")
STOP = frozenset("""a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing done down during each else even ever every few for from further
get gets got had has have having he her here hers him his how i if in into is it its itself just let like made make
many may me might more most much must my no nor not now of off on once one only or other our ours out over own per
please same she should so some such than that the their theirs them then there these they this those through to too
under until up upon us very via was we were what when where which while who whom whose why will with would yes yet
you your yours i'm i've i'll i'd it's that's there's what's let's don't doesn't didn't won't can't isn't aren't
wasn't weren't you're you've we're they're here's""".split())


def cut(finish: str | None) -> bool:
    return finish == CUT


@lru_cache(maxsize=1 << 16)
def specifics(text: str) -> frozenset[str]:
    """What in `text` is specific to it: identifier-like tokens (a digit, a path or dotted name, a #id,
    an ALL-CAPS or camelCase name) and pairs of adjacent content words, all lower-cased."""
    out: set[str] = set()
    prev: str | None = None
    for raw in TOKEN.findall(text):
        tok = raw.strip(".,:;'\"-/")
        if not tok:
            prev = None
            continue
        low = tok.lower()
        if any(c.isdigit() for c in tok) or re.search(r"\w[/._#:@-]\w|^#\w", tok) or \
                (len(tok) > 2 and (tok.isupper() or re.search(r"[a-z][A-Z]", tok))):
            out.add(low)
            prev = None
            continue
        if WORDISH.match(low) and len(low) > 2 and low not in STOP:
            if prev is not None:
                out.add(f"{prev} {low}")
            prev = low
        elif low not in STOP:
            prev = None
    return frozenset(out)


def loops(text: str, source: Sequence[str] = ()) -> bool:
    """Mostly repetition the conversation does not explain: a short unit repeated on and on ("💻💻💻…",
    "word word word …"), most lines copies of a few, or most lines one pattern that differs only in its
    numbers ("# 7. I am here", "# 8. I am here") when no line of the conversation has that pattern (an
    extractive summary of a repetitive log repeats the log's pattern, and is no loop)."""
    body = text.strip()
    if len(body) < LOOP_MIN_CHARS:
        return False
    data = body.encode("utf-8", "surrogatepass")
    if len(zlib.compress(data, 1)) <= 0.15 * len(data):    # only a text this compressible is mostly one run
        run = RUN.search(body)
        if run is not None and run.group(1).strip(PUNCT) and len(run.group(0)) >= len(body) / 2:
            return True
    units = [u for u in (x.strip() for x in body.splitlines()) if u]
    if len(units) < 8:        # few lines: their sentences
        units = [u for u in (x.strip() for x in SENTENCE.split(body)) if u]
    if len(units) < 8:
        return False
    if len(set(units)) <= len(units) // 4:
        return True
    shapes = [shape(u) for u in units]
    top, n = Counter(shapes).most_common(1)[0]
    if n < len(units) * 3 // 4:
        return False
    return not any(top in other or (len(other) >= 12 and other in top)
                   for text in source for other in map(shape, text.splitlines()))


def shape(line: str) -> str:
    """A line with its numbers as 0 and without its list marker or numbering ("- ", "3. ")."""
    return DIGITS.sub("0", MARK.sub("", line.strip()))


def carries(answer: str, source: Sequence[str], exclude: Sequence[str] = (), least: int = MIN_SPECIFICS) -> bool:
    """The answer repeats at least `least` (two) specifics of `source` (the conversation) that `exclude` (the
    instruction, the system prompt) does not hold; True when `source` has too few to tell."""
    barred: set[str] = set()
    for text in exclude:
        barred |= specifics(text)
    own = specifics(answer) - barred
    found: set[str] = set()
    seen: set[str] = set()          # the source's own specifics, counted only until there are enough
    for text in source:
        spec = specifics(text)
        found |= own & spec
        if len(found) >= least:
            return True
        if len(seen) < MIN_SOURCE:
            seen |= spec - barred
    if len(seen) < MIN_SOURCE:
        return True
    # a terse answer ("Next: #106.") carries one specific, and little else of its own
    return len(found) >= 1 and 2 * len(found) >= len(own)


def repeats_one(answer: str, source: Sequence[str]) -> bool:
    """A short answer that is word for word one whole message of a conversation of several: a chat line
    copied back, not an account."""
    norm = " ".join(answer.split())
    if len(source) < 2 or len(norm.split()) > SHORT_WORDS:
        return False
    return any(" ".join(text.split()) == norm for text in source)


def problem(text: str, finish: str | None, source: Iterable[str], exclude: Iterable[str] = (),
            copies: Sequence[str] | None = None) -> str | None:
    """Why `text` (with its finish reason) does not do a writer task about `source`, or None. `copies`: the
    messages a short answer may not merely repeat (default: `source`; callers that know pass the recorded
    events only, since an earlier summary nothing new displaced may come back whole)."""
    if cut(finish):
        return "the answer was cut at max_tokens (finish: length)"
    if not text.strip():
        return "the answer is empty"
    source, exclude = list(source), list(exclude)
    if loops(text, source):
        return "the answer is a repetition loop"
    if not carries(text, source, exclude):
        return "the answer carries nothing of the conversation (a chat reply, an echo of the instruction, or a non-answer)"
    if repeats_one(text, source if copies is None else copies):
        return "the answer repeats one short message of the conversation word for word"
    return None


def conversation(request: Sequence[Message]) -> tuple[list[str], list[str]]:
    """(source, exclude) of a writer request: what it is about (every message but the system prompt, the last
    one — the instruction — and the writer's own earlier answers in the same turn, such as a checkpoint
    before its repair) and what does not count (the system prompt and the instruction)."""
    if not request:
        return [], []
    head = 1 if request[0].role == "system" else 0
    own = [m for m in request[head:-1] if not (m.role == "assistant" and m.tag not in EVENT_TAGS)]
    return [m.text for m in own], [m.text for m in (*request[:head], request[-1])]


def events(messages: Iterable[Message]) -> list[str]:
    """The texts of the recorded events among `messages` (not what a strategy wrote)."""
    return [m.text for m in messages if m.tag in EVENT_TAGS]


def assess(request: Sequence[Message], text: str, finish: str | None) -> str | None:
    """The task-independent verdict on a writer's final answer (no tool calls) to `request`: why it is
    not an answer, or None."""
    source, exclude = conversation(request)
    head = 1 if request and request[0].role == "system" else 0
    return problem(text, finish, source, exclude, events(request[head:-1]))


__all__ = ["assess", "problem", "carries", "repeats_one", "events", "loops", "cut", "specifics", "conversation", "CUT"]
