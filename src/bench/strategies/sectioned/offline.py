"""The offline writer's answer to a sectioned request (answer.py's format block), from the request alone.

It reads what an LLM would read: the headings the instruction lists, the sections so far when the
instruction gives them (anchored), a focus line, and the conversation before the instruction. Each
heading is understood by its words (a "next step" wants what comes next, "errors and fixes" wants
error lines, ...) and filled with original sentences of the conversation, each labelled with who
said it, so what a scorer finds here was really in the request. Rules an LLM would follow too:
a sentence goes under one heading only (a list of the user's messages and the next step may quote
the user again); only the latest statement of what comes next is repeated
(an older "next: #104" would contradict it); sections that describe the present (next, pending,
current work) are rewritten from the new messages, the others keep their earlier points and add.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate, chain, repeat
from operator import itemgetter
from typing import Sequence

from bench.scenarios.loader import normalize
from bench.harness.messages import Message
from bench.models.offline import Turn
from bench.models.offline.extract import SENTENCE_END, STATES_NEXT, Sentence, flags, label_of, mentions, said_salience, split, terms
from bench.tokens import Tokenizer

from bench.strategies.files import kind as file_kind
from bench.strategies.files import paths
from bench.strategies.sectioned.answer import CLOSE, CUE, FOCUS, HEADING, OPEN, key, parse

KINDS = (   # heading words -> what the section holds; the first match wins
    ("user_messages", r"\buser'?s?\b.*\bmessages?\b"),
    ("files_changed", r"\bfiles?\b.*\b(modif|chang|edit|writ|touch)"),
    ("files", r"\bfiles?\b|\bcode\b"),
    ("next", r"\bnext\b"),
    ("pending", r"\bpending\b|\btodo\b|\bremaining\b|\bopen\b|\bleft\b"),
    ("errors", r"\berrors?\b|\bfix|\bpitfall|\bbugs?\b|\bproblem|\bissues?\b|\bgotcha|\bwarning"),
    ("decisions", r"\bdecision|\breason|\bchoice|\bchose"),
    ("progress", r"\bcurrent\b|\bprogress\b|\bstatus\b|\bstate\b|\bdone\b"),
    ("concepts", r"\bconcept|\btechnical\b|\bknowledge\b|\bfacts?\b|\breferences?\b|\bdetails?\b"),
    ("intent", r"\bintent|\brequests?\b|\bgoals?\b|\bobjective|\btasks?\b|\bmission|\bpurpose"),
)
PRESENT = {"next", "pending", "progress"}       # rewritten each time, not accumulated
QUOTING = {"user_messages", "next"}             # may quote the user again: that is what they are for
DECISION = re.compile(r"\b(decid\w*|decision|chose|chosen|choose|go(ing)? with|agreed|settled|instead of|rather than|"
                      r"because|reject\w*|ruled out|stick with|switch\w* to|keep\b)", re.I)
PENDING = re.compile(r"\b(todo|to do|pending|remaining|still|left|need to|needs|waiting|blocked|not yet|later|"
                     r"after that|then)\b", re.I)
CODE = re.compile(r"^[+-]|[{};]|=>|::|^\s*(def|func|class|const|let|var|return|import)\b")   # a line of code
DID = re.compile(r"\b(done|merged|finished|fixed|passed|approved|completed|resolved|shipped|reviewed|deployed)\b",
                 re.I)
GROUP = re.compile(r"^(User|Assistant|System|Earlier|Tool \S+|\[Harness: [\w-]+\]):?$")   # a speaker line
BUDGET = re.compile(r"At most (\d+) tokens")
DEFAULT_BUDGET = 800
WORTH = 1.0         # a sentence scoring below this is padding: a section may stay short
FOCUS_AT = FOCUS.split("{focus}")[0]


# Words one of which every match of a pattern holds (lower-cased): a cheap test before the pattern.
WORDS = {DECISION: ("decid", "decision", "chose", "choose", "go with", "going with", "agreed", "settled", "instead",
                    "rather", "because", "reject", "ruled out", "stick with", "switch", "keep"),
         PENDING: ("todo", "to do", "pending", "remaining", "still", "left", "need", "waiting", "blocked", "not yet",
                   "later", "after that", "then"),
         STATES_NEXT: ("next", "resum", "moving on", "continu"),
         DID: ("done", "merged", "finished", "fixed", "passed", "approved", "completed", "resolved", "shipped",
               "reviewed", "deployed")}


def has(pattern: re.Pattern, text: str, low: str | None = None) -> bool:
    """Whether one of this module's patterns occurs in `text` (`low`: its lower-cased form, when the
    caller has it). Asked once per sentence: `_trait` and `_pieces` are cached."""
    words = WORDS.get(pattern)
    if words is not None and not mentions(low if low is not None else text.lower(), words):
        return False
    return pattern.search(text) is not None


def section_kind(name: str) -> str:
    low = name.lower()
    return next((k for k, pattern in KINDS if re.search(pattern, low)), "general")


def play(messages: Sequence[Message], tools: list[dict] | None, max_tokens: int | None,
         tok: Tokenizer) -> Turn | None:
    if tools or not messages or messages[-1].role != "user" or CUE not in messages[-1].text:
        return None
    instruction = messages[-1].text
    after = instruction.split(CUE, 1)[1].splitlines()[1:]
    names = []
    for line in after:
        m = HEADING.match(line)
        if not m:
            break
        names.append(m.group(1))
    if not names:
        return None
    current = None
    if OPEN in instruction and CLOSE in instruction:
        current = parse(instruction.split(OPEN, 1)[1].split(CLOSE, 1)[0], names)[0]
    focus = next((line[len(FOCUS_AT):] for line in instruction.splitlines() if line.startswith(FOCUS_AT)), "")
    asked = BUDGET.search(instruction)
    budget = max_tokens or (int(asked.group(1)) if asked else DEFAULT_BUDGET)
    conv = [m for m in messages[:-1] if m.role != "system"]
    return Turn(text=write(names, conv, current, focus, budget, tok))


def write(names: list[str], conv: list[Message], current: dict[str, str] | None, focus: str, budget: int,
          tok: Tokenizer) -> str:
    pool, origin, traits, nexts = _pool(conv)
    n = max(1, len(pool))
    stated = [i for i, x in enumerate(nexts) if x]
    latest_next = pool[stated[-1]] if stated else None
    if stated:
        keep = [i for i, x in enumerate(nexts) if not x or i == stated[-1]]
        pool, traits = [pool[i] for i in keep], [traits[i] for i in keep]
    latest_request = _latest_request(pool)
    wants = terms(focus) if focus else frozenset()
    if wants:
        traits = [_trait(s.label, s.text, wants) for s in pool]
    by_id = dict(zip(map(id, pool), traits))

    writes = _writes(conv, n, tok)
    used: set[str] = set()
    out = []
    left = budget - 2 * len(names)
    for i, name in enumerate(names):
        share = max(8, left // (len(names) - i))
        head = f"## {name}\n"
        kind = section_kind(name)
        new = _candidates(kind, pool, traits, writes, latest_next, latest_request)
        old = _earlier(current.get(name, "") if current else "", tok)
        cands = (new or old) if kind in PRESENT else old + new
        fresh = cands if kind in QUOTING else [s for s in cands if s.key not in used]
        scores = _scores(kind, n, fresh, by_id, wants, {id(s) for s in old})
        chosen = _fit(fresh, scores, share - tok.count(head), tok, origin)
        used.update(s.key for s in chosen)
        body = _render(chosen, origin) if chosen else "None."
        text = head + body
        out.append(text)
        left -= tok.count(text) + 2
    return "\n\n".join(out)


def _pool(conv: list[Message]) -> tuple[list[Sentence], Origins, list[Trait], list[bool]]:
    """The conversation's sentences, de-duplicated (the latest copy counts), in order, with where each
    comes from (`Origins`), and their traits and whether each states what comes next."""
    per = [_pieces(m.text, label_of(m), m.role == "user") for m in conv]
    flat = list(chain.from_iterable(per))
    latest = dict(zip(map(itemgetter(1), flat), range(len(flat))))
    rows = sorted(latest.values())
    picked = list(map(flat.__getitem__, rows))
    pool = list(map(itemgetter(2), picked))
    for i, s in enumerate(pool):
        s.pos = i
    home = list(chain.from_iterable(repeat(i, len(p)) for i, p in enumerate(per)))
    origins = Origins(pool, rows, home, list(map(itemgetter(0), flat)), list(accumulate(map(len, per), initial=0)))
    return pool, origins, list(map(itemgetter(3), picked)), list(map(itemgetter(4), picked))


class Origins:
    """The line a pooled sentence can share, and its place among the conversation's sentences (before
    de-duplication): its message's line, or in an earlier answer of this format its own bullet's (a
    bullet is one message's). Worked out when asked (`_render` asks for the chosen few)."""

    def __init__(self, pool: list[Sentence], rows: list[int], home: list[int], bullets: list[int], starts: list[int]):
        self.pool, self.rows, self.home, self.bullets, self.starts = pool, rows, home, bullets, starts

    def get(self, s: Sentence) -> tuple[int, int] | None:
        """(line, row) of a pooled sentence; None for any other (an earlier section's point, a write)."""
        if not (0 <= s.pos < len(self.pool) and self.pool[s.pos] is s):
            return None
        row = self.rows[s.pos]
        i, bullet = self.home[row], self.bullets[row]
        return (i if bullet < 0 else -self.starts[i] - bullet - 1), row


@lru_cache(maxsize=1 << 14)
def _pieces(text: str, label: str, user_role: bool) -> tuple[tuple[int, str, Sentence, Trait, bool], ...]:
    """A message's sentences as this writer reads them, each (bullet, key, sentence, trait, states next):
    bullet -1 for a plain message's sentence (it shares its message's line), else its bullet's index in
    a message in this module's format. Cached per content, sentences too: a long session's writer
    requests share nearly all their messages, and one worker runs all cells of a scenario. A request
    sets each pooled sentence's position (no request holds them after it ends, and a sentence is
    pooled once: its latest copy); its token count (-1 here) is counted when `_fit` first reaches it."""
    grouped = _grouped(text) if user_role else None
    if grouped is None:
        rows = [(-1, lab, s, key or normalize(s)) for lab, s, key in split(text, label, user_role)
                if not HEADING.match(s) and s.lower() != "none."]
    else:
        rows = [(j, lab, x, normalize(x))
                for j, (lab, line) in enumerate(grouped) for x in SENTENCE_END.split(line) if x.strip()]
    return tuple((j, key, Sentence(0, lab, x, -1, key=key), _trait(lab, x, frozenset()), has(STATES_NEXT, x))
                 for j, lab, x, key in rows)


@lru_cache(maxsize=1 << 12)
def _grouped(text: str) -> tuple[tuple[str, str], ...] | None:
    """(speaker, bullet) pairs of a text in this module's format (a speaker line, its bullets), or None
    when the text is not in it. Frame prose and headings are the harness's, not content."""
    out, label = [], None
    for line in text.splitlines():
        m = GROUP.match(line.strip())
        if m:
            label = m.group(1)
        elif label is not None and line.startswith("- "):
            out.append((label, line[2:].strip()))
        elif HEADING.match(line):
            label = None
    return tuple(out) or None


def _render(chosen: list[Sentence], origin: Origins) -> str:
    """The chosen sentences in conversation order under a line naming who said them ("User:",
    "Tool read:", a "[Harness: watch]" marker, which heads the lines up to a blank one); a bullet
    holds one message's consecutive sentences, so a user's message copied whole is still their words."""
    lines: list[str] = []
    label: str | None = None
    last: Sentence | None = None
    for s in sorted(chosen, key=lambda s: s.pos):
        here, before = origin.get(s), origin.get(last) if last is not None else None
        if here and before and here[0] == before[0] and here[1] == before[1] + 1:   # next in the same line
            lines[-1] += " " + s.text
            last = s
            continue
        if s.label != label:
            if label is not None and label.startswith("[Harness"):
                lines.append("")
            lines.append(s.label if s.label.startswith("[Harness") else f"{s.label}:")
            label = s.label
        lines.append(f"- {s.text}")
        last = s
    return "\n".join(lines)


def _latest_request(pool: list[Sentence]) -> list[Sentence]:
    """The user's latest words: the last run of user sentences."""
    end = next((i for i in reversed(range(len(pool))) if pool[i].label == "User"), None)
    if end is None:
        return []
    start = end
    while start > 0 and pool[start - 1].label == "User":
        start -= 1
    return pool[start:end + 1]


@dataclass(frozen=True)
class Trait:
    """What the scoring reads of a sentence, worked out once per answer."""
    base: float           # extract's salience
    path: bool
    ref: bool             # a path, an id or a number
    error: bool
    rule: bool
    code: bool
    did: bool
    decision: bool
    pending: bool
    focus: bool


@lru_cache(maxsize=1 << 18)
def _trait(label: str, text: str, wants: frozenset[str]) -> Trait:
    f = flags(text)
    low = text.lower()
    return Trait(said_salience(label, text), f.path, f.path or f.ident or f.number, f.error, f.rule,
                 has(CODE, text, low), has(DID, text, low), has(DECISION, text, low), has(PENDING, text, low),
                 bool(wants and terms(text) & wants))


def _candidates(kind: str, pool: list[Sentence], traits: list[Trait], writes: list[Sentence],
                latest_next: Sentence | None, latest_request: list[Sentence]) -> list[Sentence]:
    """The sentences a section of `kind` may hold (`traits` are the pool's, in its order)."""
    if kind in ("user_messages", "intent"):
        return [s for s in pool if s.label == "User"]
    if kind == "files_changed":
        return writes + [s for s, x in zip(pool, traits) if s.label == "Assistant" and x.path]
    if kind == "files":
        return [s for s, x in zip(pool, traits) if x.path]
    if kind == "next":
        return ([latest_next] if latest_next else []) + latest_request
    if kind == "pending":
        return [s for s, x in zip(pool, traits) if x.pending or s is latest_next]
    if kind == "errors":
        return [s for s, x in zip(pool, traits) if x.error]
    if kind == "decisions":
        return [s for s, x in zip(pool, traits) if x.decision]
    if kind == "progress":
        return [s for s in pool if s.label != "User"]
    if kind == "concepts":
        return [s for s, x in zip(pool, traits) if s.label != "User" and x.ref]
    return list(pool)


def _scores(kind: str, n: int, cands: list[Sentence], traits: dict[int, Trait], wants: frozenset[str],
            anchored: set[int]) -> list[float]:
    """Each candidate's score for a section of `kind`; `traits` are the pool's by id (another
    sentence's are worked out). One loop for all candidates: a long session's sections score
    thousands of sentences each."""
    get = traits.get
    code_counts = kind not in ("files", "files_changed")
    out = []
    for s in cands:
        r = (s.pos + 1) / n
        if r < 0.0:
            r = 0.0
        x = get(id(s)) or _trait(s.label, s.text, wants)
        base = x.base
        if kind == "intent":
            value = base + 4.0 * (1.0 - r) + 1.0 * x.rule
        elif kind == "progress":     # the agent's own account of what it did, newest first
            value = 6.0 * r + 0.5 * base + 3.0 * (s.label == "Assistant") + 2.0 * x.did
        elif kind == "pending":
            value = 6.0 * r + 0.5 * base
        elif kind == "next":
            value = 10.0 + r
        else:
            value = base + 3.0 * r
        if x.code and code_counts:
            value -= 2.5           # a line of code is no account of errors, decisions or progress
        if anchored and id(s) in anchored:
            value += 2.0           # a point an earlier compaction kept stays unless room runs out
        if x.focus:
            value += 8.0           # the focus outranks recency: it is what the summary must make room for
        if base == 0 and s.label.startswith("[Harness"):
            value -= 2.0           # harness framing, not content
        out.append(value)
    return out


def _fit(cands: list[Sentence], scores: list[float], budget: int, tok: Tokenizer, origin: Origins) -> list[Sentence]:
    """The best-scoring sentences within `budget` tokens, as rendered lines: best first, the later of
    equals first, then the earlier candidate."""
    # two stable sorts of the indices (ints and floats: no tuple per candidate), the later one first
    by_pos = sorted(range(len(cands)), key=[-s.pos for s in cands].__getitem__)
    chosen, used = [], 0
    for k in sorted(by_pos, key=[-v for v in scores].__getitem__):
        s, value = cands[k], scores[k]
        if value < WORTH:
            break
        if s.tokens < 0:
            s.tokens = tok.count(s.text)
        cost = s.tokens + 4
        if used + cost <= budget:
            chosen.append((value, s))
            used += cost
        elif used + 5 > budget:
            break
    while chosen and tok.count(_render([s for _, s in chosen], origin)) > budget:
        chosen.remove(min(chosen, key=lambda x: (x[0], x[1].pos)))
    return [s for _, s in chosen]


def _earlier(body: str, tok: Tokenizer) -> list[Sentence]:
    """An earlier section's points (older than anything in the conversation), each one bullet."""
    points = _grouped(body)
    if points is None:     # not in this format (an LLM's section): each line one point
        points = tuple(("Earlier", line.strip().lstrip("-* ").strip()) for line in body.splitlines()
                       if line.strip() and key(line) != "none" and not GROUP.match(line.strip()))
    return [Sentence(i - len(points), label, text, tok.count(text), key=normalize(text))
            for i, (label, text) in enumerate(points)]


def _writes(conv: list[Message], n: int, tok: Tokenizer) -> list[Sentence]:
    """One line per file-writing call: the assistant's words and the call's tool and paths."""
    out = []
    for i, m in enumerate(conv):
        for c in m.calls:
            if file_kind(c) == "write" and paths(c.args):
                said = m.text.strip().splitlines()[0] if m.text.strip() else ""
                text = f"{c.tool} {', '.join(paths(c.args))}" + (f" ({said})" if said else "")
                out.append(Sentence(int(i * n / max(1, len(conv))), "Assistant", text, tok.count(text),
                                    key=normalize(text)))
    return out
