"""What memory_file and progress_harness share: files a person can read, kept by the harness from the
record and re-injected after every compaction (seed 001: what must survive belongs in files, not only
in the context).

The rules file holds the user's standing rules and what they asked to remember, copied sentence by
sentence from their own messages (record type `user`, never background), never re-written: a file
the model re-reads is only as good as its words, and a paraphrase loosens a rule. It has its own
budget (the "hot rules" of the seed); when it is over, the middle is cut and the cut is said in the
text: which messages, and where the full file is. A silent cut is how a rule vanishes unnoticed.
"""
from __future__ import annotations

import re

from bench.harness.messages import Message, Part
from bench.harness.strategy import Session
from bench.units import SENTENCE

from bench.strategies.summary import is_user

RULES_PATH = "memory/RULES.md"
# A sentence that sets a rule, a preference, a permission, a reporting habit or a decision, or asks
# to be remembered: normative and contrastive words, not a topic list, so it reads any session.
CUE = re.compile(
    r"\b(never|always|don['’]?t|do not|must|mustn['’]t|should|shall|only|ask me|tell me|to me|come to me|check with me|"
    r"report|post|notify|you may|you can|allowed|permission|without (?:asking|waiting)|from now on|going forward|"
    r"instead|rather than|not|no|stop|skip|switch|keep|use|prefer|make sure|make it|remember|note that|rule|"
    r"agreement|policy|decid\w*|decision|rejected|chose|go with|first|before|until|unless|except|strictly|"
    r"forbidden|avoid|careful|required?|requirement|store|stick|after (?:each|every)|at the end|come back|enough)\b",
    re.I)


# A sentence that records a choice between options: a decision word, or "use / keep / store X ..., not Y".
DECISION = re.compile(
    r"\b(?:decid\w*|decision|reject\w*|ruled out|cho(?:se|sen)|settled on|opt(?:ed)? for|instead of|rather than|"
    r"(?:let['’]s|we['’]ll|we will|we['’]re|i['’]ll|i will|i['’]m) go(?:ing)? with)\b|"
    r"\b(?:use|keep|store|stick with|stay with|pick)\b[^.;:!?]*?,?\s+not\b", re.I)
STOP = re.compile(r"(?<=[.!?])\s+")   # whole sentences: a decision and its reason are often joined by ';'
# Words that give a decision its reason in the same sentence; without one, the next sentence of the line is taken.
REASON = re.compile(r"\bbecause\b|\bsince\b|\bdue to\b|\bafter\b|\bso that\b|[:;—]", re.I)


def rules(record: list[Message]) -> list[tuple[int, str]]:
    """(record number, sentence) of every rule-like sentence of the user's messages, in order."""
    return [(n, s) for n, line in _user_lines(record) for s in _sentences(line) if CUE.search(s)]


def decisions(record: list[Message], skip: int | None = None) -> list[tuple[int, str]]:
    """(record number, text) of every decision the user's messages state (but message `skip`), with its reason: the
    sentence, and the next one of its line when the sentence gives no reason after its choice."""
    out = []
    for n, line in _user_lines(record):
        if n == skip:
            continue
        parts = [p for p in STOP.split(line.strip()) if p]   # whole sentences: "Keep X; we rejected Y because ..."
        for i, s in enumerate(parts):
            found = list(DECISION.finditer(s))
            if not found:
                continue
            if not REASON.search(s[found[-1].end():]) and i + 1 < len(parts) and not DECISION.search(parts[i + 1]):
                s = line[line.index(s):line.index(parts[i + 1]) + len(parts[i + 1])]   # as the user wrote them
            out.append((n, s))
    return out


def _user_lines(record: list[Message]):
    for n, m in enumerate(record, 1):
        if is_user(m):
            yield from ((n, line) for line in m.text.splitlines())


def _sentences(line: str) -> list[str]:
    return [s.strip() for s in SENTENCE.split(line) if s.strip()]


RULES_FRAME = (f"[Harness: memory]\n{RULES_PATH}, kept by the harness and re-read after every compaction: the user's "
               "standing rules and what they asked to remember, copied word for word from their own messages (#N: the "
               "message's number in the session record). A later entry wins over an earlier one it changes.\n\n")


def rules_file(session: Session, id: str, budget: int) -> tuple[Message, list[int]]:
    """(the rules file as a message, the record numbers cut from it): `copied_file` of the user's rules."""
    return copied_file(session, id, budget, rules(session.record), RULES_PATH, RULES_FRAME, "memory", "(no rules yet)")


def copied_file(session: Session, id: str, budget: int, entries: list[tuple[int, str]], path: str, frame: str,
                tag: str, empty: str) -> tuple[Message, list[int]]:
    """(a file of the user's words as a message, the record numbers cut from it). Entries are `#N: sentence`
    (N: the message's number in the record); over `budget` the middle entries go and a line in
    their place names them and the full file."""
    lines = [f"#{n}: {s}" for n, s in entries] or [empty]
    tok = session.tok
    cut: list[int] = []
    head, tail = lines, []
    while tok.count("\n\n".join([*head, *tail])) > budget and len(head) + len(tail) > 1:
        # cut from the middle: the first rules and the latest corrections are the ones to keep
        i = len(head) - 1 if len(head) > len(tail) else None
        if i is not None:
            cut.append(entries[i][0])
            head = head[:i]
        else:
            cut.append(entries[len(entries) - len(tail)][0])
            tail = tail[1:]
    if cut:
        nums = sorted(set(cut))
        note = (f"[memory cut: {len(cut)} entries from messages #{nums[0]}-#{nums[-1]} are over this file's budget "
                f"of {budget} tokens; the full file is {path}, and the messages themselves are in the record]")
        pieces = [Part("memo", "\n\n".join(head) + "\n\n"), Part("frame", note + ("\n\n" if tail else ""))]
        if tail:
            pieces.append(Part("memo", "\n\n".join(tail)))
    else:
        pieces = [Part("memo", "\n\n".join(lines))]
    parts = (Part("frame", frame), *(p for p in pieces if p.text))
    msg = session.message(id=id, role="user", text="".join(p.text for p in parts), tag=tag, parts=parts)
    return msg, sorted(set(cut))
