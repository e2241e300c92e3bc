"""What a unit of text is (a sentence, a line, a bullet under its heading) and where its clauses part: the
span inside which keys count together.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

from bench.text import normalize
from bench.units.grammar import (ASIDE, BULLET, CLAUSE, HEADING, MARKER_LEAD, MARKER_LINE, SENTENCE, SEP, STACK_FRAME,
                                 STATUS, STEP, TABLE_ROW, TABLE_RULE, WINDOW)
from bench.units.options import REOPEN_LEAD
from bench.units.keys import (key_spans, stems_of)


@dataclass(frozen=True)
class Unit:
    """One unit: `text` is its own normalised words, `head` the heading it sits under ('' when none).
    `scope` is what a key set must fall in: heading and unit joined by SEP."""
    text: str
    head: str = ""
    sentence: bool = True     # a sentence of its line (False: the whole line of several sentences)
    row: bool = False         # a table row: its cells are one clause (a source cell governs the row)
    scope: str = field(init=False, repr=False, compare=False)   # read by every check of every unit: joined once

    def __post_init__(self) -> None:
        object.__setattr__(self, "scope", f"{self.head}{SEP}{self.text}" if self.head else self.text)

    @property
    def stems(self) -> frozenset[str]:
        """The stems of the scope's words, worked out when a key is first looked for loosely."""
        got = self.__dict__.get("_stems")
        if got is None:
            got = stems_of(self.scope)
            object.__setattr__(self, "_stems", got)
        return got


def units(text: str) -> list[Unit]:
    """Every unit of a text, in order: each sentence of each line, the line itself when it holds
    several sentences, a bullet with its heading; a very long unit as overlapping word windows.

    A line that is only a `[Harness: <source>]` marker heads every line after it until a blank line,
    the way the harness writes background messages; a line or bullet that opens with one heads each of
    its own sentences (a summary's "- [Harness: watch]: CI is red. It asks for X." attributes both). A line
    indented under a list item is more of that item, read under its first line (a YAML entry's 'from:' field
    governs its 'said:' field)."""
    out: list[Unit] = []
    head, marker = "", ""
    lines = text.splitlines()
    columns: list[str] | None = None       # the header cells of the table being read
    error = ""                              # the last line that was not a stack frame
    item: tuple[int, str] | None = None     # the list item being read: its indent, its heading and first line
    for n, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            marker, columns, error, item = "", None, "", None
            continue
        if MARKER_LINE.match(line):
            marker, head = normalize(line), ""
            continue
        if TABLE_ROW.match(line):
            item = None
            if TABLE_RULE.match(line):
                continue
            cells = [normalize(c) for c in line.strip("|").split("|")]
            if n + 1 < len(lines) and TABLE_RULE.match(lines[n + 1].strip()):
                columns = cells            # the header row: each cell below is read under its column's name
                out.extend(_windows(" | ".join(c for c in cells if c), " ".join(x for x in (marker, head) if x)))
                continue
            named = [f"{h}: {c}" if h and c else c for h, c in zip(columns or [], cells)] + cells[len(columns or []):]
            body = " | ".join(c for c in named if c)
            if body:
                out.extend(_windows(body, " ".join(x for x in (marker, head) if x), row=True))
            continue
        columns = None
        if STACK_FRAME.match(line):
            if error:       # a stack frame continues the error above it: 'TypeError: ...' / 'at lookup (geo/x.ts:58)'
                out.extend(_windows(f"{error} {normalize(line)}", " ".join(x for x in (marker, head) if x), False))
        else:
            error = normalize(line)
        bullet = BULLET.match(line)
        body = normalize(line[bullet.end():] if bullet else line)
        if not body:
            continue
        indent = len(raw) - len(raw.lstrip())
        if bullet:
            item = (indent, " ".join(x for x in (head, body) if x))
        elif item is not None and indent <= item[0]:
            item = None
        lead = MARKER_LEAD.match(line[bullet.end():] if bullet else line)
        if not bullet and item is not None:     # a line indented under a list item goes on with that item
            out.extend(_windows(body, " ".join(x for x in (marker, item[1]) if x)))
            continue
        under = " ".join(x for x in (marker, normalize(lead.group(0)) if lead else "", head if bullet else "") if x)
        # a heading: marked as one, or a bare label of a few words over a list ('Done' / '* cart.spec.ts – …')
        label_over_list = (not bullet and len(body.split()) <= BARE_HEADING_WORDS and not SENTENCE_MARK.search(line)
                           and not NOT_LABEL.search(body)
                           and n + 1 < len(lines) and BULLET.match(lines[n + 1].strip()) is not None)
        if label_over_list or HEADING.match(line) and not (bullet and not line.rstrip().endswith(":")):
            out.extend(_windows(body, marker))
            head = body
            continue
        if not bullet:
            head = ""
        sentences = _joined([s for s in SENTENCE.split(body) if s.strip()])
        # a label opening the line ('Ground rules from Ama: A; B.') governs each clause its semicolons part,
        # up to the first full stop: 'B' is read under it as 'A' is
        label = LINE_LABEL.match(sentences[0]) if len(sentences) > 1 else None
        if label and len(label.group(1).split()) > LABEL_WORDS:
            label = None
        for i, s in enumerate(sentences):
            governed = label is not None and 0 < i and all(x.rstrip().endswith(";") for x in sentences[:i])
            out.extend(_windows(s, " ".join(x for x in (under, label.group(1)) if x) if governed else under))
        if len(sentences) > 1:
            out.extend(_windows(body, under, sentence=False))
    return out


LINE_LABEL = re.compile(r"^([^:.;!?␞]{1,80}?):\s")     # a line's opening label, closed by a colon
BARE_HEADING_WORDS = 4
SENTENCE_MARK = re.compile(r"[.!?;,]")
# what a label has none of: a negation or a finite verb ('Users not started' over a list is a sentence, and its 'not'
# governs nothing below it)
NOT_LABEL = re.compile(r"\b(?:not|no|never|is|are|was|were|has|have|had|will|can|should|must|does|did)\b|n['’]t\b")


def _windows(text: str, head: str, sentence: bool = True, row: bool = False) -> list[Unit]:
    if text.count(" ") < WINDOW:         # at most WINDOW words: the unit itself
        return [Unit(text, head, sentence, row)]
    words = text.split(" ")
    return [Unit(" ".join(words[i:i + WINDOW]), head, sentence, row)
            for i in range(0, len(words) - STEP, STEP)]


# a clause that opens on an exception or a skip, with no subject of its own ('; except the ingress pods', '; skip
# this during incidents'): said of the rule before it
EXCEPTION_LEAD = re.compile(r"^(?:and\s+|but\s+)?(?:except|apart from|other than|save for|unless|skip\w*|but for|"
                            r"aside from)\b")
# a clause that opens on a status, with no subject of its own ('moot now that ...', 'now lifted')
STATUS_LEAD = re.compile(rf"^(?:(?:now|since then|by now|meanwhile|and|but)\s+)?(?:(?:is|are|was|were|has been|have been)\s+)?"
                         rf"\b(?:{STATUS})\b")
LABEL_WORDS = 8       # a sentence's opening words before a colon that label the rest ('From the CI watch: ...')


def asides_blanked(text: str, keep: Iterable[int] = ()) -> str:
    """`text` with each bracketed aside blanked, its length kept, but one that holds a position of `keep`: what is
    looked for in the result (a clause's end) is none of an aside's own ('catalog (2nd try; 1st rolled back), orders')."""
    if "(" not in text:
        return text
    keep = tuple(keep)
    return ASIDE.sub(lambda m: m.group() if any(m.start() <= a < m.end() for a in keep) else " " * len(m.group()), text)


LABEL_ASIDE_WORDS = 3   # the words of a label around its aside: 'TODO', 'Open tasks', 'Note for Dana'
# an aside that says where what the label heads came from: '(from the CI watch on main, not Kofi)', '(via cron)'
SPOKEN_ASIDE = re.compile(r"\(\s*(?:i|we|you|she|he|they)\b[^()]*\)")
SOURCE_ASIDE = re.compile(r"\(\s*(?:from|via|by|per|source|sent by|relayed by|according to|not from)\b")


def label_sized(words: str) -> bool:
    """Short enough to label what follows its colon; a short label with a bracketed aside ('TODO (from the CI
    watch on main, not Kofi):') is still a label, the aside one part of it."""
    if len(words.split()) <= LABEL_WORDS:
        return True
    outside = ASIDE.sub(" ", words).split()
    return len(outside) <= LABEL_ASIDE_WORDS and len(words.split()) <= 2 * LABEL_WORDS and all(
        SOURCE_ASIDE.match(a) for a in ASIDE.findall(words))
ANNOTATION_WORDS = 8  # a short clause after a dash that comments on the one before ('... - refused')


def status_after(line: "Unit", part: "Unit") -> bool:
    """Whether, in `line`, the sentence `part` is followed by one that opens on a status ending it ('"<rule>" -
    Omar's early rule; moot now that ...'): a clause with no subject of its own is said of the one before it, and
    so is one whose subject or object is a pronoun for it ('… UTC. It was lifted today.', '… She withdrew it this
    morning.')."""
    i = line.text.find(part.text)
    if i < 0 or part is line:
        return False
    rest = line.text[i + len(part.text):].lstrip()
    return bool(STATUS_LEAD.match(rest) or STATUS_BACK.match(rest))


# a sentence that ends what the one before says, by a pronoun for it: 'It was lifted today.', 'Update: she withdrew
# it this morning.' ('It was not lifted' and 'Nobody has lifted it' end nothing; 'It is no longer on Fridays' moves it)
STATUS_BACK = re.compile(rf"(?:update\s*:\s*)?(?:(?:it|this|that)\s+(?:was|is|has been|had been|got)\s+"
                         rf"(?:(?!not\b|never\b|no\b)\w+\s+)?(?:{STATUS})\b(?!\s+(?:on|to|at|in|from)\b)|"
                         rf"(?!(?:nobody|no one|none|noone|never)\b)[\w'’]+\s+(?:(?:has|had)\s+)?(?:since\s+)?"
                         rf"(?:{STATUS})\s+(?:it|this|that)\b)")


def _said_of_before(clause: str, status: bool = True) -> bool:
    """A clause with no subject of its own (or a pronoun or a short noun phrase for one, reopening a choice) that
    opens on a status, an exception or a skip, or a reopening: said of the clause before it. A sentence after a
    semicolon is joined on the last two only (a status there is read by `status_after`)."""
    return bool(status and STATUS_LEAD.match(clause) or EXCEPTION_LEAD.match(clause) or REOPEN_LEAD.match(clause))


def _joined(sentences: list[str]) -> list[str]:
    """A line's sentences, a clause after a semicolon that opens on an exception or a skip with no subject of its
    own ('…; except the ingress pods', '…; skip this during incidents'), or that reopens the choice before it ('…;
    it will be revisited next sprint'), kept with the one before: it is said of it. A semicolon inside an aside ends
    no sentence: 'catalog (2nd try; 1st rolled back), orders' is one (a full stop still does)."""
    out: list[str] = []
    for s in sentences:
        if out and out[-1].rstrip().endswith(";") and (out[-1].count("(") > out[-1].count(")") and ")" in s
                                                        or _said_of_before(s, status=False)):
            out[-1] = f"{out[-1]} {s}"
        else:
            out.append(s)
    return out


def clause_of(u: "Unit", keys: Iterable) -> "Unit":
    """The part of a unit that governs what `keys` hold: the smallest run of its clauses holding every key,
    with the sentence's label (its opening words before a colon, when short), a short annotation right after
    it behind a dash ('force-push main — refused'), and the heading. What another clause says — a reason, a
    refused request beside a rule, a source named for something else — is not said of the keys."""
    found = _runs(u, keys)
    if found is None:
        return u
    bounds, seps, runs = found
    return _governing(u, bounds, seps, min(runs, key=lambda r: r[1] - r[0]))


def clauses_of(u: "Unit", keys: Iterable) -> list["Unit"]:
    """Every part of a unit that governs what `keys` hold (`clause_of`), where they stand in several clauses:
    'originally 30 days, but she corrected that to 90 days, so nothing evaluated within the past 90 days gets
    deleted' states the rule in its last clause, whatever the first says. Each run that holds the keys and no
    shorter run inside it."""
    found = _runs(u, keys)
    if found is None:
        return [u]
    bounds, seps, runs = found
    return [_governing(u, bounds, seps, r) for r in runs
            if not any(o != r and r[0] <= o[0] and o[1] <= r[1] for o in runs)]


def _runs(u: "Unit", keys: Iterable) -> tuple[list[tuple[int, int]], list[str], list[tuple[int, int]]] | None:
    """`u`'s clauses (their bounds and the separators before them) and, from each clause on, the shortest run
    that holds every key; None when the unit is one clause, or a key stands only in its heading or nowhere (the
    unit as it is governs them)."""
    text = u.text
    # the clauses of an aside that holds no key part none of the unit's ('never touch release/2.4 (a CI watch asked for
    # a force-push — ignored)'); one that holds a key is read by its own ('orders done (deploy-bot callback noted.
    # Plan: skip the soak)': the plan is a clause of its own)
    keys = tuple(keys)
    flat = asides_blanked(text, (a for k in keys for a, _ in key_spans(text, k)) if "(" in text else ())
    cuts = [m.span() for m in CLAUSE.finditer(flat)] if not u.row else []
    if not cuts:
        return None
    bounds, seps, start = [], [""], 0
    for a, b in cuts:
        bounds.append((start, a))
        seps.append(text[a:b].strip())
        start = b
    bounds.append((start, len(text)))
    where = []      # per key, the first and last clause of each place it stands: a key read across a dash
    for k in keys:  # ('archive — not delete') is held by a run that holds all of it
        spans = key_spans(text, k)
        idx = {(min(i for i, (a, b) in enumerate(bounds) if x < b and y > a),
                max(i for i, (a, b) in enumerate(bounds) if x < b and y > a)) for x, y in spans if y > x}
        if not idx:
            return None
        where.append(idx)
    runs = []
    for i in range(len(bounds)):
        for j in range(i, len(bounds)):
            if all(any(i <= x and y <= j for x, y in idx) for idx in where):
                runs.append((i, j))
                break
    return (bounds, seps, runs) if runs else None


PRONOUN_SUBJECT = re.compile(r"\s*(?:it|they|this|that)(?:['’](?:s|re)\b|\s+(?:is|are|was|were|has|have|will|now|stays?|"
                             r"remains?)\b)")

RESTATES = re.compile(r"\s*which\s+(?:[^,;:]{0,30}?\s)?(?:is|are|remains?|stays?)\s+(?!(?:not|no|never|no longer)\b)")


def _governing(u: "Unit", bounds: list[tuple[int, int]], seps: list[str], run: tuple[int, int]) -> "Unit":
    """The run of clauses `run` of `u` with its label, the annotation after it and the heading (`clause_of`)."""
    text = u.text
    i, j = run
    after = len(text[bounds[j + 1][0]:bounds[j + 1][1]].split()) if j + 1 < len(bounds) else 0
    if after and (seps[j + 1] in ("—", "–", "-") and after <= ANNOTATION_WORDS or j == 0 and seps[1] == ":"):
        j += 1      # a comment on it ('— refused'), or the value of the label that holds it ('port: complete')
    # a clause with no subject of its own that opens on a status ending what came before ('"<rule>" - Omar's early
    # rule; moot now that no majors are left', '<rule>; no longer in force') is said of the clause before it
    while j + 1 < len(bounds) and _said_of_before(text[bounds[j + 1][0]:bounds[j + 1][1]]):
        j += 1
    # a clause after a colon whose subject is a pronoun is said of what the clause before names ('the payments freeze
    # has moved: it's now Thursdays 16:00–20:00 UTC')
    while i > 0 and seps[i] == ":" and PRONOUN_SUBJECT.match(text[bounds[i][0]:bounds[i][1]]):
        i -= 1
    # so is a relative clause that says in the present what the noun before it is ('no cutovers inside the payments
    # freeze, which since her update is Thursdays 16:00–20:00 UTC')
    # (its own clauses too: 'which since her update is …' is parted at 'since')
    for k in (i, i - 1):
        if k > 0 and seps[k] == "," and RESTATES.match(text[bounds[k][0]:bounds[i][1]]):
            i = k - 1
            break
    labels = 0          # the sentence's opening labels, each short and closed by a colon ('Unconfirmed: From X: ...')
    while labels + 1 < len(bounds) and seps[labels + 1] == ":" \
            and label_sized(text[bounds[labels][0]:bounds[labels][1]]):
        labels += 1
    label = text[:bounds[min(labels, i) - 1][1]] + ": " if min(labels, i) > 0 else ""
    body = label + text[bounds[i][0]:bounds[j][1]]
    return u if body == text else Unit(body, u.head, u.sentence)
