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


def rules(record: list[Message]) -> list[tuple[int, str]]:
    """(record number, sentence) of every rule-like sentence of the user's messages, in order."""
    out = []
    for n, m in enumerate(record, 1):
        if not is_user(m):
            continue
        for line in m.text.splitlines():
            out.extend((n, s.strip()) for s in SENTENCE.split(line) if s.strip() and CUE.search(s))
    return out


def rules_file(session: Session, id: str, budget: int) -> tuple[Message, list[int]]:
    """(the rules file as a message, the record numbers cut from it). Entries are `#N: sentence`
    (N: the message's number in the record); over `budget` the middle entries go and a line in
    their place names them and the full file."""
    entries = rules(session.record)
    frame = (f"[Harness: memory]\n{RULES_PATH}, kept by the harness and re-read after every compaction: the "
             "user's standing rules and what they asked to remember, copied word for word from their own "
             "messages (#N: the message's number in the session record). A later entry wins over an earlier "
             "one it changes.\n\n")
    lines = [f"#{n}: {s}" for n, s in entries] or ["(no rules yet)"]
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
                f"of {budget} tokens; the full file is {RULES_PATH}, and the messages themselves are in the record]")
        pieces = [Part("memo", "\n\n".join(head) + "\n\n"), Part("frame", note + ("\n\n" if tail else ""))]
        if tail:
            pieces.append(Part("memo", "\n\n".join(tail)))
    else:
        pieces = [Part("memo", "\n\n".join(lines))]
    parts = (Part("frame", frame), *(p for p in pieces if p.text))
    msg = session.message(id=id, role="user", text="".join(p.text for p in parts), tag="memory", parts=parts)
    return msg, sorted(set(cut))
