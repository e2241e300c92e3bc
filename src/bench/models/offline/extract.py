"""Extractive text for the offline model: summaries under a budget, answers to questions.

Everything here keeps original sentences, so what a scorer finds in offline
output was really in the conversation; what is lost is what a budget forces
out. Choices are deterministic: scores, then position, break every tie.
"""
from __future__ import annotations

import heapq
import math
import re
from bisect import bisect_left, bisect_right
from itertools import chain
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from bench.scenarios.loader import normalize
from bench.harness.messages import MARKER, Message
from bench.tokens import Tokenizer
from bench.models.offline.index import Read

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
        for label, s, key, n in counted(msg.text, label_of(msg), msg.role == "user", tok):
            out.append(Sentence(len(out), label, s, n, key=key))
    return out


@lru_cache(maxsize=1 << 16)
def counted(text: str, label: str, user_role: bool, tok: Tokenizer) -> tuple[tuple[str, str, str, int], ...]:
    """A message's (label, sentence, key, tokens) rows, from its text, label (`label_of`) and role:
    `sentences` of one message as tuples, cached, since a long session's summaries and writer
    answers read thousands of messages, nearly all of them read by earlier ones of the session."""
    return tuple((lab, s, key, tok.count(s)) for lab, s, key in split(text, label, user_role))


@lru_cache(maxsize=1 << 16)
def split(text: str, label: str, user_role: bool) -> tuple[tuple[str, str, str], ...]:
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
    return said_salience(s.label, s.text)


@lru_cache(maxsize=1 << 18)
def said_salience(label: str, text: str) -> float:
    """What a reader resuming the work needs: the user's words, exact references, errors, rules."""
    f = flags(text)
    score = 3.0 if label == "User" else 0.0
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
    """The most salient and most recent sentences that fit `budget` tokens, in their order.

    Works on the de-duplicated rows (`_Pool`) and makes `Sentence`s of the chosen ones only: a long
    session's summary reads tens of thousands of sentences and keeps a few hundred."""
    pool = _Pool([_read(m.text, label_of(m), m.role == "user") for m in messages])
    if not pool.size:
        return tok.truncate(HEADER, budget)
    labels = list(chain.from_iterable(r.labels for r in pool.reads))
    texts = list(chain.from_iterable(r.texts for r in pool.reads))
    kept = [(labels[row], texts[row]) for row in pool.rows]     # position = index
    n = len(kept)
    # the newest sentence weighs like a user's word
    scores = [said_salience(label, text) + 3.0 * (i + 1) / n for i, (label, text) in enumerate(kept)]
    # best first, the later of equals first (a stable sort of the positions from the last)
    order = sorted(range(n - 1, -1, -1), key=scores.__getitem__, reverse=True)
    chosen: list[Sentence] = []
    used = tok.count(HEADER) + 1
    for i in order:
        if used + 5 > budget:        # no sentence fits any more: each costs at least 1 + 4
            break
        label, text = kept[i]
        size = tok.count(text)       # counted only when reached: most sentences of a long pool never are
        cost = size + 4              # label and line framing, an upper bound
        if used + cost <= budget:
            chosen.append(Sentence(i, label, text, size, scores[i]))
            used += cost
    text = render(chosen)
    while chosen and tok.count(text) > budget:    # the bound above is loose; make sure
        chosen.remove(min(chosen, key=lambda s: (s.score, s.pos)))
        text = render(chosen)
    if not chosen:  # not even one sentence fits: the best one, cut
        label, best = kept[order[0]]
        text = tok.truncate(render([Sentence(order[0], label, best, tok.count(best), scores[order[0]])]), budget)
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
    return frozenset(term_set(text))


def term_set(text: str) -> set[str]:
    """`terms` as a plain set, uncached (a message's word index reads each sentence once): filled
    word by word, so `terms` freezes it in the same order of insertion, and of iteration, as ever."""
    return set(chain.from_iterable(map(_word_terms, WORD.findall(text.lower()))))


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


def answer(messages: Sequence[Message], question: str, budget: int | None, tok: Tokenizer) -> str:
    """The sentence(s) of the context that share the most rare words with the question.

    Three honest extractive preferences: the conversation over the system prompt's instructions
    (the question is about the session); a question that names an id (a PR number, a path, a sha)
    looks at the sentences that name it; a question about what comes next answers with the latest
    sentence that states what comes next, since a later statement of the position supersedes an
    earlier one.

    The pool is `dedupe(sentences(messages))` less the system prompt's; each sentence scores the
    idf of the question's words it holds, plus recency, a user's word and the kind of thing asked
    (`_score`), and the best one or two are the answer. A probe on a long context reads tens of
    thousands of sentences, so this works from each message's cached `Read` (index.py): it scores
    only the sentences that hold a word of the question (every other one scores the same), found
    through each message's word index; sentences stay (position, label, text) tuples."""
    want = terms(question)
    pool = _Pool([_read(m.text, label_of(m), m.role == "user") for m in messages])
    if not pool.size or not want:
        return "I do not know."
    asked = {m.group(0).lower() for m in IDENT.finditer(question)} | {m.group(0).lower() for m in PATH.finditer(question)}
    named = pool.naming(asked) if asked else []
    if ASKS_NEXT.search(question):
        stated = [s for s in named if states_next(s[2])][-1:] if named else pool.latest_stating()
        if stated:
            text = stated[-1][2]
            return tok.truncate(text, budget) if budget else text
    if named:
        n = len(named)
        bags = [terms(s[2]) for s in named]
        df: dict[str, int] = {}
        for bag in bags:
            for w in bag & want:
                df[w] = df.get(w, 0) + 1
        scored = [(_score(pos, label, text, bag & want, df, n, True, question), pos, text)
                  for (pos, label, text), bag in zip(named, bags)]
    else:
        n = pool.n
        scored = pool.scored(want, question)
    best = heapq.nlargest(2, scored, key=lambda x: (x[0], x[1]))
    if best[0][0] <= 0:
        return "I do not know."
    picked = best[:2] if n > 1 and best[1][0] >= 0.8 * best[0][0] else best[:1]
    text = " ".join(x[2] for x in sorted(picked, key=lambda x: x[1]))
    return tok.truncate(text, budget) if budget else text


def _score(pos: int, label: str, text: str, hits: set[str], df: dict[str, int], n: int, named: bool,
           question: str) -> float:
    score = sum(math.log((n + 1) / (df[w] + 0.5)) for w in hits) + (1.0 if named else 0.0)
    if hits:
        score += 0.5 * (pos + 1) / n + 0.3 * (label == "User") + wanted_kind(question, text)
    return score


@lru_cache(maxsize=1 << 14)
def _read(text: str, label: str, user_role: bool) -> Read:
    return Read(split(text, label, user_role))


class _Pool:
    """A context's de-duplicated sentences, without listing them: sentence `j` of message `k` is
    row `base[k] + j`; it is in the pool when it is its key's latest row (and, when the context has
    any conversation, not the system prompt's); its position is its rank among the latest rows."""

    def __init__(self, reads: list[Read]):
        self.reads, self.bases = reads, []
        latest: dict[str, int] = {}
        at = 0
        for r in reads:
            self.bases.append(at)
            latest.update(zip(r.keys, range(at, at + len(r.keys))))
            at += len(r.keys)
        self.latest, self.rows = latest, sorted(latest.values())
        self.size = len(self.rows)
        system = sum(1 for b, r in zip(self.bases, reads) for j in r.system if latest[r.keys[j]] == b + j)
        self.talk = self.size > system          # the system prompt's sentences stay out
        self.n = self.size - system if self.talk else self.size

    def has(self, r: Read, j: int, row: int) -> bool:
        return self.latest[r.keys[j]] == row and not (self.talk and r.labels[j] == "System")

    def pos(self, row: int) -> int:
        return bisect_left(self.rows, row)

    def naming(self, asked: set[str]) -> list[tuple[int, str, str]]:
        return [(self.pos(b + j), r.labels[j], r.texts[j]) for b, r in zip(self.bases, self.reads)
                for j in r.naming(asked) if self.has(r, j, b + j)]

    def latest_stating(self) -> list[tuple[int, str, str]]:
        """The pool's last sentence that states what comes next, if any."""
        for b, r in zip(reversed(self.bases), reversed(self.reads)):
            for j in reversed(r.nexts(states_next)):
                if self.has(r, j, b + j):
                    return [(self.pos(b + j), r.labels[j], r.texts[j])]
        return []

    def scored(self, want: frozenset[str], question: str) -> list[tuple[float, int, str]]:
        """(score, position, text) of every sentence holding a word of `want`, and of the two latest
        that hold none (the runners-up when fewer hold one; they score 0)."""
        df: dict[str, int] = {}
        hit: dict[int, tuple[Read, int]] = {}
        for b, r in zip(self.bases, self.reads):
            where = r.where(term_set)
            for w in want:
                for j in where.get(w, ()):
                    if self.has(r, j, b + j):
                        df[w] = df.get(w, 0) + 1
                        hit[b + j] = (r, j)
        out = []
        for row, (r, j) in hit.items():
            text = r.texts[j]
            out.append((_score(self.pos(row), r.labels[j], text, terms(text) & want, df, self.n, False, question),
                        self.pos(row), text))
        spare = 0
        for i in reversed(range(self.size)):
            row = self.rows[i]
            if spare == 2:
                break
            if row in hit:
                continue
            k = bisect_right(self.bases, row) - 1
            r, j = self.reads[k], row - self.bases[k]
            if self.has(r, j, row):
                out.append((_score(i, r.labels[j], r.texts[j], set(), df, self.n, False, question), i, r.texts[j]))
                spare += 1
        return out


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
