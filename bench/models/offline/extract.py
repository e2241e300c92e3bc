"""Extractive text for the offline model: summaries under a budget, answers to questions.

Everything here keeps original sentences, so what a scorer finds in offline
output was really in the conversation; what is lost is what a budget forces
out. Choices are deterministic: scores, then position, break every tie.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from ...loader import normalize
from ...messages import MARKER, Message
from ...tokens import Tokenizer

HEADER = "Summary of the conversation so far (sentences kept verbatim, oldest first):"
# Labels this module writes; a previous summary's lines keep theirs when summarised again.
LABELED = re.compile(r"^- (User|Assistant|System|Tool \S+|\[Harness: [\w-]+\]): (.*)$")
MARKER_LINE = re.compile(r"^\[Harness: ([\w-]+)\]\s*$")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[^\s])")
ASKS_SUMMARY = re.compile(r"\b(summar(y|ies|i[sz]e\w*)|condens\w*|compress\w*|compact\w*|recap\w*)\b", re.I)
QUESTION_START = re.compile(r"^\s*(who|what|which|when|where|why|how|is|are|do|does|did|can|should|was|were)\b", re.I)

PATH = re.compile(r"[\w.-]+/[\w./-]+|\b[\w-]+\.(py|ts|tsx|js|go|rs|md|ya?ml|json|toml|java|c|h|cc|cpp|sh|sql|txt|cfg|ini)\b(:\d+)?")
IDENT = re.compile(r"#\d+|\b[A-Z][A-Z0-9]+-\d+\b|\b[0-9a-f]{7,40}\b|`[^`]+`")
NUMBER = re.compile(r"\d")
ERROR = re.compile(r"\b(error|exception|traceback|fail\w*|fatal|panic|denied|timeout|refused|crash\w*)\b", re.I)
RULE = re.compile(r"\b(never|always|must|don't|do not|only|without|instead|prefer\w*|allow\w*|may|ask me|until)\b", re.I)
WORD = re.compile(r"[a-z0-9#_./:-]+")
STOP = frozenset("""a an the and or but if of to in on at by for with from as is are was were be been being it its this
that these those there here what which who whom whose when where why how do does did done can could should would
will shall may might must i you he she we they me my your our their them us so not no yes than then too very just
about into over under again any all each some such only own same other also now next please tell me""".split())


@dataclass(slots=True)    # slots: a long session's summaries make hundreds of thousands of these
class Sentence:
    pos: int          # order in the conversation
    label: str
    text: str
    tokens: int
    score: float = 0.0
    key: str = ""     # the normalised text, for de-duplication


def label_of(msg: Message) -> str:
    if msg.role == "tool":
        return f"Tool {msg.tool or msg.call_id or 'result'}"
    return msg.role.capitalize()


def sentences(messages: Sequence[Message], tok: Tokenizer) -> list[Sentence]:
    """Every sentence of `messages`, labelled with who said it (background by its marker)."""
    out: list[Sentence] = []
    for msg in messages:
        for label, s, key, n in _counted(msg.text, label_of(msg), msg.role == "user", tok):
            out.append(Sentence(len(out), label, s, n, key=key))
    return out


@lru_cache(maxsize=1 << 16)
def _counted(text: str, label: str, user_role: bool, tok: Tokenizer) -> tuple[tuple[str, str, str, int], ...]:
    """`_split` with each sentence's token count: a probe asked on a long context reads thousands of
    messages, nearly all of them read by earlier probes and summaries of the same session."""
    return tuple((lab, s, key, tok.count(s)) for lab, s, key in _split(text, label, user_role))


@lru_cache(maxsize=1 << 16)
def _split(text: str, label: str, user_role: bool) -> tuple[tuple[str, str, str], ...]:
    """A message's (label, sentence, normalised sentence) triples; cached, since a long session's
    contexts share most messages."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        marker = MARKER_LINE.match(line)
        if marker and user_role:
            label = f"[Harness: {marker.group(1)}]"
            continue
        if not line or line == HEADER:
            continue
        own = LABELED.match(line)
        line_label, line = (own.group(1), own.group(2)) if own else (label, line)
        out.extend((line_label, s.strip(), normalize(s)) for s in SENTENCE_END.split(line) if s.strip())
    return tuple(out)


@dataclass(frozen=True)
class Flags:
    """What a sentence holds, by the patterns above (computed once per text)."""
    path: bool
    ident: bool
    number: bool
    error: bool
    rule: bool


# Words one of which every match of ERROR / RULE holds (lower-cased): a cheap test before the pattern.
ERROR_WORDS = ("error", "exception", "traceback", "fail", "fatal", "panic", "denied", "timeout", "refused", "crash")
RULE_WORDS = ("never", "always", "must", "don't", "do not", "only", "without", "instead", "prefer", "allow", "may",
              "ask me", "until")
EXTENSION = re.compile(r"\.(py|ts|tsx|js|go|rs|md|ya?ml|json|toml|java|c|h|cc|cpp|sh|sql|txt|cfg|ini)\b")


def mentions(text: str, words: tuple[str, ...]) -> bool:
    return any(map(text.__contains__, words))


@lru_cache(maxsize=1 << 18)
def flags(text: str) -> Flags:
    low = text.lower()
    path = ("/" in text or EXTENSION.search(text) is not None) and PATH.search(text) is not None
    return Flags(path, bool(IDENT.search(text)), bool(NUMBER.search(text)),
                 mentions(low, ERROR_WORDS) and ERROR.search(text) is not None,
                 mentions(low, RULE_WORDS) and RULE.search(text) is not None)


def salience(s: Sentence) -> float:
    """What a reader resuming the work needs: the user's words, exact references, errors, rules."""
    f = flags(s.text)
    score = 3.0 if s.label == "User" else 0.0
    score += 1.5 * f.path + 1.5 * f.ident + 0.5 * f.number + 1.5 * f.error + 1.0 * f.rule
    return score


def render(chosen: list[Sentence]) -> str:
    """One line per run of sentences from the same speaker, in conversation order."""
    lines: list[str] = [HEADER]
    last: Sentence | None = None
    for s in sorted(chosen, key=lambda s: s.pos):
        if last is not None and last.label == s.label and last.pos + 1 == s.pos:
            lines[-1] += " " + s.text
        else:
            lines.append(f"- {s.label}: {s.text}")
        last = s
    return "\n".join(lines)


def summary(messages: Sequence[Message], budget: int, tok: Tokenizer) -> str:
    """The most salient and most recent sentences that fit `budget` tokens, in their order."""
    pool = dedupe(sentences(messages, tok))
    if not pool:
        return tok.truncate(HEADER, budget)
    n = len(pool)
    for s in pool:
        s.score = salience(s) + 3.0 * (s.pos + 1) / n   # the newest sentence weighs like a user's word
    chosen: list[Sentence] = []
    used = tok.count(HEADER) + 1
    for s in sorted(pool, key=lambda s: (-s.score, -s.pos)):
        cost = s.tokens + 4          # label and line framing, an upper bound
        if used + cost <= budget:
            chosen.append(s)
            used += cost
    text = render(chosen)
    while chosen and tok.count(text) > budget:    # the bound above is loose; make sure
        chosen.remove(min(chosen, key=lambda s: (s.score, s.pos)))
        text = render(chosen)
    if not chosen:  # not even one sentence fits: the best one, cut
        best = max(pool, key=lambda s: (s.score, s.pos))
        text = tok.truncate(render([best]), budget)
    return text


def dedupe(pool: list[Sentence]) -> list[Sentence]:
    """A sentence repeated (re-summarised, re-quoted) counts once, at its latest position."""
    latest: dict[str, Sentence] = {}
    for s in pool:
        latest[s.key or normalize(s.text)] = s
    keep = sorted(latest.values(), key=lambda s: s.pos)
    for i, s in enumerate(keep):
        s.pos = i
    return keep


PATH_SEP = re.compile(r"[/:]")
JOINED = re.compile(r"\w[/:]\w")     # a word that joins pieces of a path or an id


@lru_cache(maxsize=1 << 18)
def terms(text: str) -> frozenset[str]:
    """Content words, stemmed so 'reviewed' meets 'review'; a path also gives
    its pieces, so 'bar.ts' meets 'src/upstream/bar.ts:88'."""
    out: set[str] = set()
    for word in WORD.findall(text.lower()):
        out.update(_word_terms(word))
    return frozenset(out)


@lru_cache(maxsize=1 << 18)
def _word_terms(word: str) -> tuple[str, ...]:
    """One word's terms, in `terms`' order; cached, since a session's sentences share their words."""
    out = []
    for w in [word] + (PATH_SEP.split(word) if JOINED.search(word) else []):
        w = w.strip(".:/-")
        if len(w) > 1 and w not in STOP:
            out.append(w if w[0] == "#" or any(c in ".0123456789" for c in w) else stem(w))
    return tuple(out)


def stem(word: str) -> str:
    """A crude stem: one common suffix off, then 5 letters ('warning', 'warns' -> 'warn')."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:5]


ASKS_PLACE = re.compile(r"\b(file|path|line|where)\b")
LINE_REF = re.compile(r"\.\w+:\d+")
ASKS_COUNT = re.compile(r"\b(how many|how much|number|count|version|which id)\b")


def wanted_kind(question: str, text: str) -> float:
    """A question asking for a file, a line or a number prefers sentences that hold one."""
    q = question.lower()
    bonus = 0.0
    if ASKS_PLACE.search(q) and PATH.search(text):
        bonus += 1.0 + 0.5 * bool(LINE_REF.search(text) and "line" in q)
    if ASKS_COUNT.search(q) and NUMBER.search(text):
        bonus += 0.5
    return bonus


ASKS_NEXT = re.compile(r"\b(next|what do you do|continue)\b", re.I)
# A sentence that states what comes next: "Next: billing.", "next in the queue: #5311", "Resuming the
# queue at #5327", "moving on to POST /orders".
STATES_NEXT = re.compile(r"(?:^|;\s*)next(?: up| in the queue| \w+)?\s*(?:\(\d+ of \d+\)\s*)?:|\bnext (?:is|one is|up is)\b|"
                         r"\bresum\w* (?:the \w+ )?(?:at|with)\b|\bmoving on to\b|\bcontinu\w* with\b", re.I)


@lru_cache(maxsize=1 << 18)
def states_next(text: str) -> bool:
    """Cached: every probe about what comes next scans the whole context's sentences."""
    return STATES_NEXT.search(text) is not None


def names(low: str, asked: set[str]) -> bool:
    return any(map(low.__contains__, asked))


def answer(messages: Sequence[Message], question: str, budget: int | None, tok: Tokenizer) -> str:
    """The sentence(s) of the context that share the most rare words with the question.

    Three honest extractive preferences: the conversation over the system prompt's instructions
    (the question is about the session); a question that names an id (a PR number, a path, a sha)
    looks at the sentences that name it; a question about what comes next answers with the latest
    sentence that states what comes next, since a later statement of the position supersedes an
    earlier one.

    Sentences are (position, label, text) tuples here, not `Sentence`s: a probe on a long context
    reads tens of thousands of them and scores only the few that share a word with the question."""
    pool = _deduped(messages, tok)
    want = terms(question)
    if not pool or not want:
        return "I do not know."
    talk = [s for s in pool if s[1] != "System"]
    pool = talk or pool
    asked = {m.group(0).lower() for m in IDENT.finditer(question)} | {m.group(0).lower() for m in PATH.finditer(question)}
    named = [s for s in pool if asked and names(s[2].lower(), asked)]
    if ASKS_NEXT.search(question):
        stated = [s for s in (named or pool) if states_next(s[2])]
        if stated:
            text = stated[-1][2]
            return tok.truncate(text, budget) if budget else text
    pool = named or pool
    bags = [terms(s[2]) for s in pool]
    df: dict[str, int] = {}
    for bag in bags:
        for w in bag & want:
            df[w] = df.get(w, 0) + 1
    n = len(pool)
    scores = []
    for (pos, label, text), bag in zip(pool, bags):
        hits = bag & want
        score = sum(math.log((n + 1) / (df[w] + 0.5)) for w in hits) + (1.0 if named else 0.0)
        if hits:
            score += 0.5 * (pos + 1) / n + 0.3 * (label == "User") + wanted_kind(question, text)
        scores.append(score)
    ranked = sorted(range(n), key=lambda i: (-scores[i], -pool[i][0]))
    if scores[ranked[0]] <= 0:
        return "I do not know."
    picked = [ranked[0]]
    if n > 1 and scores[ranked[1]] >= 0.8 * scores[ranked[0]]:
        picked.append(ranked[1])
    text = " ".join(pool[i][2] for i in sorted(picked, key=lambda i: pool[i][0]))
    return tok.truncate(text, budget) if budget else text


def _deduped(messages: Sequence[Message], tok: Tokenizer) -> list[tuple[int, str, str]]:
    """`dedupe(sentences(messages, tok))` as (position, label, text) tuples."""
    rows: list[tuple[str, str, str, int]] = []
    for msg in messages:
        rows.extend(_counted(msg.text, label_of(msg), msg.role == "user", tok))
    latest: dict[str, int] = {}
    for i, (_, text, key, _) in enumerate(rows):
        latest[key or normalize(text)] = i
    return [(pos, rows[i][0], rows[i][1]) for pos, i in enumerate(sorted(latest.values()))]


def wants_summary(messages: Sequence[Message]) -> bool:
    """Decided from the request: the last message asks for one, or the system prompt does and
    the last message is no question."""
    if not messages:
        return False
    last = messages[-1].text
    if ASKS_SUMMARY.search(last):
        return True
    return (messages[0].role == "system" and bool(ASKS_SUMMARY.search(messages[0].text))
            and not is_question(last))


def is_question(text: str) -> bool:
    text = text.strip()
    return text.endswith("?") or bool(QUESTION_START.match(text))


def strip_marker(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith(MARKER))
