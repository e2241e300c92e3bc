"""Writer tasks the offline model reads from an instruction, beyond "summarise": a checkpoint, a handoff, notes,
a list of every constraint, one line, named sections — answered extractively, in the form asked for.

An external strategy (any language, over the protocol) writes its own instruction; "Create a checkpoint of
the session: goal, constraints, progress, next step" or "List every constraint on one line" asks for an
account of the conversation as surely as "summarise" does, and an LLM writes one. The offline writer reads the
instruction the same way, from the request alone:

- **is it a writer task** — an instruction (not a question) that asks for an account of the conversation:
  it names one (checkpoint, handoff, notes, state, status, memory, log) or speaks of the conversation as a
  whole (the conversation, the session, so far, everything, every / all of a kind). "List the current rules
  for deleting flags." is a question about one topic, answered as a question;
- **what** — kinds the instruction names (goals and requests, constraints and rules, decisions, progress,
  next step, files and references, errors and pitfalls), each a selection of the conversation's own
  sentences by what they hold (the user's requests, rule words, decision words, done words, a stated next
  step, paths and ids, error words); none named: the most salient sentences, as a summary;
- **in which form** — the headings it lists (`## Goal`, `Goal:` lines), one line, a list, or a checkpoint's
  default headings (Goal, Constraints, Progress, Next, References) for a checkpoint or handoff that names none.

Every sentence is copied verbatim with who said it, within the budget. Nothing here knows a strategy.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

from bench.harness.messages import Message
from bench.tokens import Tokenizer
from bench.models.offline import extract

ACCOUNT = re.compile(r"\b(check-?points?|hand-?offs?|notes|state|status|memory|log|records?|recaps?|briefing|digest|"
                     r"overview)\b", re.I)
WHOLE = re.compile(r"\b(the (conversation|session|transcript|history|context|work)|so far|everything|every|all (the )?"
                   r"\w+s\b|each)\b", re.I)
IMPERATIVE = re.compile(r"^\W*(please\s+)?(create|write|make|produce|draft|prepare|list|give|update|record|capture|"
                        r"keep|save|note|collect|extract|put|compose|build|sum|restate|state|name|enumerate|dump|"
                        r"output|return)\b", re.I)
ONE_LINE = re.compile(r"\b(one|a single|single|1) (line|sentence)\b|\bon a line\b", re.I)
AS_LIST = re.compile(r"\b(list|bullets?|bullet points|enumerate)\b", re.I)
HEADING = re.compile(r"^\s{0,3}(?:#{1,4}\s+(.+?)\s*#*|\*\*(.+?)\*\*:?|([A-Z][\w /&'-]{1,40}):)\s*$")
DEFAULT_SECTIONS = ("Goal", "Constraints", "Progress", "Next", "References")

DECIDES = re.compile(r"\b(decid\w*|decision|chose|chosen|going with|we'll use|instead of|rather than|agreed|settled)\b",
                     re.I)
DONE = re.compile(r"\b(done|finished|merged|fixed|passed|approved|completed|closed|shipped|resolved|green)\b", re.I)


@dataclass
class Task:
    kinds: list[str] = field(default_factory=list)      # what the instruction asks about (KINDS' keys)
    sections: list[str] = field(default_factory=list)   # headings to answer under, in order
    form: str = "text"                                   # text | line | list | sections


def _is_user(label: str) -> bool:
    return label == "User"


KINDS: dict[str, tuple[re.Pattern, Callable[[str, str], bool]]] = {
    "goal": (re.compile(r"\b(goals?|tasks?|requests?|mission|intent|objectives?|asks?|asked|wants?)\b", re.I),
             lambda label, text: _is_user(label) and not extract.is_question(text) and not extract.flags(text).rule),
    "constraints": (re.compile(r"\b(constraints?|rules?|requirements?|bans?|limits?|preferences|musts?|"
                               r"authori[sz]ations?|boundaries)\b", re.I),
                    lambda label, text: _is_user(label) and extract.flags(text).rule),
    "decisions": (re.compile(r"\b(decisions?|decided|choices)\b", re.I),
                  lambda label, text: DECIDES.search(text) is not None),
    "progress": (re.compile(r"\b(progress|done|status|state|completed|where (it|the work) stands)\b", re.I),
                 lambda label, text: not _is_user(label) and DONE.search(text) is not None),
    "next": (re.compile(r"\bnext\b", re.I), lambda label, text: extract.states_next(text)),
    "references": (re.compile(r"\b(files?|paths?|references?|identifiers?|ids|commands?|values)\b", re.I),
                   lambda label, text: extract.flags(text).path or extract.flags(text).ident),
    "errors": (re.compile(r"\b(errors?|pitfalls?|failures?|problems?|traps?|dead ends?)\b", re.I),
               lambda label, text: extract.flags(text).error),
}
SECTION_KIND = {"Goal": "goal", "Constraints": "constraints", "Progress": "progress", "Next": "next",
                "References": "references"}


def read(instruction: str) -> Task | None:
    """The writer task `instruction` asks for, or None when it is none (a question, a remark)."""
    text = extract.strip_marker(instruction).strip()
    if not text or extract.is_question(text.splitlines()[0]) or text.rstrip().endswith("?"):
        return None
    first = next((x for x in text.splitlines() if x.strip()), "")
    if not (IMPERATIVE.search(first) or ACCOUNT.search(first)):
        return None
    if not (ACCOUNT.search(text) or WHOLE.search(text)):
        return None
    task = Task(kinds=[k for k, (words, _) in KINDS.items() if words.search(text)])
    task.sections = [h for line in text.splitlines() if (h := _heading(line))]
    if len(task.sections) >= 2:
        task.form = "sections"
    elif ONE_LINE.search(text):
        task.form = "line"
    elif AS_LIST.search(first):
        task.form = "list"
    elif re.search(r"\b(check-?points?|hand-?offs?)\b", text, re.I):
        task.form, task.sections = "sections", [h for h in DEFAULT_SECTIONS
                                                 if not task.kinds or SECTION_KIND[h] in task.kinds]
        if len(task.sections) < 2:
            task.sections = list(DEFAULT_SECTIONS)
    return task


def _heading(line: str) -> str | None:
    m = HEADING.match(line)
    if not m:
        return None
    name = next(g for g in m.groups() if g)
    return name.strip() if len(name.split()) <= 6 else None


def kind_of(heading: str) -> str | None:
    """What a heading asks for, by its words (KINDS); None: the most salient sentences."""
    for k, (words, _) in KINDS.items():
        if words.search(heading):
            return k
    return None


def write(task: Task, messages: Sequence[Message], budget: int, tok: Tokenizer) -> str:
    """The answer: the conversation's own sentences, labelled by speaker, chosen for each kind asked, in the
    form asked, within `budget` tokens."""
    pool = extract.dedupe(extract.sentences(messages, tok))
    pool = [s for s in pool if s.label != "System"] or pool
    if task.form == "sections":
        parts = task.sections
        share = max(8, (budget - sum(tok.count(f"## {h}\n") for h in parts)) // max(1, len(parts)))
        out, used = [], set()
        for h in parts:
            chosen = _pick(pool, kind_of(h), share, tok, used)
            used |= {s.pos for s in chosen}
            out.append(f"## {h}\n" + ("\n".join(f"- {s.label}: {s.text}" for s in chosen) or "None."))
        return _fit("\n\n".join(out), budget, tok)
    kinds = task.kinds or [None]
    share = max(8, budget // len(kinds))
    chosen, used = [], set()
    for k in kinds:
        got = _pick(pool, k, share, tok, used)
        used |= {s.pos for s in got}
        chosen += got
    chosen.sort(key=lambda s: s.pos)
    if task.form == "line":
        return _fit("; ".join(f"{s.label}: {s.text.rstrip('.')}" for s in chosen) + ".", budget, tok)
    if task.form == "list":
        return _fit("\n".join(f"- {s.label}: {s.text}" for s in chosen), budget, tok)
    return _fit(extract.render(chosen), budget, tok)


def _pick(pool: list, kind: str | None, budget: int, tok: Tokenizer, used: set[int]) -> list:
    """The best sentences of `kind` (all of the pool when None, or when none is of that kind) within `budget`:
    salient and recent first, each costing its tokens plus its label."""
    test = KINDS[kind][1] if kind else None
    cand = [s for s in pool if s.pos not in used and (test is None or test(s.label, s.text))]
    if not cand and kind in ("goal", "constraints"):
        cand = [s for s in pool if s.pos not in used and _is_user(s.label)]
    n = max(1, len(pool))
    ranked = sorted(cand, key=lambda s: (extract.salience(s) + 3.0 * (s.pos + 1) / n, s.pos), reverse=True)
    out, spent = [], 0
    for s in ranked:
        cost = s.tokens + 6
        if spent + cost <= budget:
            out.append(s)
            spent += cost
    return sorted(out, key=lambda s: s.pos)


def _fit(text: str, budget: int, tok: Tokenizer) -> str:
    """Whole lines dropped from the end until the answer fits (a cut line would read as a cut answer)."""
    lines = text.split("\n")
    while len(lines) > 1 and tok.count("\n".join(lines)) > budget:
        lines.pop()
    out = "\n".join(lines)
    return out if tok.count(out) <= budget else tok.truncate(out, budget)


__all__ = ["Task", "read", "write", "kind_of"]
