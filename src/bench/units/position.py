"""Where the work stands: which items a unit says are finished, which one is at work or next.
"""
from __future__ import annotations

import re
from functools import cached_property
from operator import itemgetter
from typing import Iterable

from bench.text import normalize
from bench.units.grammar import (ATTRIBUTIVE, COORDINATED, COUNTED, DOING, DONE, DONE_LABEL, LABEL_START, MARK, NEXT,
                                 NOT_DOING, NOT_YET, NO_SUBJECT, PASSIVE, PROGRESSIVE, SEP, SUBJECT_DONE, THEN_DONE,
                                 WANTED)
from bench.units.ids import (mention_source, mention, names, spans)
from bench.units.keys import FUNCTION
from bench.units.sentences import (Unit, asides_blanked)
from bench.units.rules import PRIVATIVE


class Mention:
    """`mention(item)` tried only on a text that holds the id's text: a mention always does, and the
    pattern's leading look-behind makes the regex try every position of a long text."""

    def __init__(self, item: str):
        self.text, self.pattern = normalize(item), mention(item)

    def search(self, text: str) -> re.Match[str] | None:
        return self.pattern.search(text) if self.text in text else None


def mentions(text: str, term: str) -> bool:
    """Whole-token match on normalised text, so 'no' is not found inside 'know' (probe grading, the
    validator's checks of probes and system prompts)."""
    return bool(normalize(term)) and mention(term).search(normalize(text)) is not None


TOKEN = re.compile(r"\w+")


def words_of(text: str) -> set[str]:
    """The distinct words of a text (runs of word characters: '#5301' gives '5301'), for the indexes below. An
    ASCII text is cut at its other characters by a translation table, which runs faster than a regex."""
    if text.isascii():
        return set(text.translate(_ASCII_GAPS).split())
    return set(TOKEN.findall(text))


# every ASCII character that is not a word character (\w: letters, digits, '_') made a space
_ASCII_GAPS = str.maketrans({c: " " for c in map(chr, range(128)) if not TOKEN.fullmatch(c)})


class KeyIndex:
    """Truth items by the words of their probe strings (each item's longest key, a quote...), so a text
    is tested only against the items one of whose probe strings could be in it. A probe string is
    indexed by the first four letters of its first word: a text holding the string holds a word that
    starts with them ('rebase' is found in 'rebased', 'sign-off' in 'sign-offs'). A probe string that
    begins inside a word ('ebase') is not found this way: keys are whole words."""

    PREFIX = 4

    def __init__(self, items: Iterable[tuple[str, Iterable[str]]]):
        self.by_prefix: dict[str, set[str]] = {}
        self.always: set[str] = set()
        self.lengths: set[int] = set()
        for item, probes in items:
            for p in probes:
                word = TOKEN.search(normalize(p))
                if word is None:
                    self.always.add(item)
                    continue
                head = word.group(0)[:self.PREFIX]
                self.by_prefix.setdefault(head, set()).add(item)
                self.lengths.add(len(head))
        self._cuts = [itemgetter(slice(None, n)) for n in sorted(self.lengths)]
        self._heads = set(self.by_prefix)

    def near(self, text: str, words: set[str] | None = None) -> set[str]:
        """`words`: the text's `words(text)`, when the caller has them already."""
        out = set(self.always)
        words = words if words is not None else words_of(text)
        heads = self._heads
        for cut in self._cuts:     # the text's word prefixes that are an indexed head, as set operations
            for h in heads.intersection(map(cut, words)):
                out |= self.by_prefix[h]
        return out


class Items:
    """A workstream's item ids, matched as whole tokens. `within(text)` narrows them to the ids a text
    names — looked up by their first word among the text's words, then checked in full — so the
    per-unit work of `claims` only ever sees the handful of ids of one message. Nothing is compiled per
    id: only a set of more than 64 ids searches with one compiled alternation."""

    def __init__(self, ids: Iterable[str], ends: tuple[str, str] | None = None):
        self.by_text = {t: i for i in ids if (t := normalize(i))}
        # the workstream's first and last ids, in its order: a narrowed set keeps its parent's (`whole`)
        self.ends = ends if ends is not None else (
            (next(iter(self.by_text.values())), next(reversed(self.by_text.values()))) if len(self.by_text) > 1 else None)
        self.first: dict[str, list[str]] = {}
        self.loose: list[str] = []            # ids without a word to index them by
        for t in self.by_text:
            word = TOKEN.search(t)
            if word is None:
                self.loose.append(t)
            else:
                self.first.setdefault(word.group(0), []).append(t)
        self._within: dict[frozenset[str], Items] = {}    # the narrowed sets built so far, by their ids
        self._heads = frozenset(self.first)   # set & set walks the smaller side; dict_keys & set may walk the keys

    @cached_property      # compiled when first needed
    def pattern(self) -> re.Pattern[str] | None:
        return _alternation(self.by_text)

    @cached_property
    def _literal(self) -> re.Pattern[str] | None:
        return re.compile("|".join(re.escape(t) for t in self.by_text)) if self.by_text else None

    def named(self, text: str) -> bool:
        """Whether `text` holds some id's text, as every mention does (a few ids: a substring test each;
        many: one regex search, not a loop)."""
        if len(self.by_text) <= 16:
            return any(t in text for t in self.by_text)
        return self._literal is not None and self._literal.search(text) is not None

    def _candidates(self, text: str, words: set[str] | None = None) -> list[str]:
        words = words if words is not None else words_of(text)
        # one C-level set intersection: a text's cost does not grow with the ids (a long queue)
        first = self.first
        return [t for w in self._heads & words for t in first[w]] + self.loose

    def within(self, text: str, words: set[str] | None = None) -> "Items":
        """The same few ids recur in message after message: each narrowed set is built once. Which ids an
        Items holds, not their order, decides what it finds."""
        found = frozenset(self.by_text[t] for t in self._candidates(text, words) if t in text and names(text, t))
        got = self._within.get(found)
        if got is None:
            if len(self._within) > 4096:
                self._within.clear()
            got = self._within[found] = Items(found, self.ends)
        return got

    def find(self, text: str) -> list[tuple[int, int, str]]:
        """Every mention, left to right, the longest id where several start at one place (as one
        alternation of the ids, longest first, would find them). A mention holds its id's text, so an id
        not in the text cannot match: a narrowed set (a message's few ids) looks only at the ids a unit
        holds, and most units hold none."""
        if len(self.by_text) > 64:
            pattern = self.pattern
            return [] if pattern is None else [(m.start(), m.end(), self.by_text[m.group(0)])
                                               for m in pattern.finditer(text)]
        hits = sorted((at, -len(t), t) for t in self.by_text if t in text for at in spans(text, t))
        out, end = [], 0
        for at, minus, t in hits:
            if at >= end:
                end = at - minus
                out.append((at, end, self.by_text[t]))
        return out

    def __bool__(self) -> bool:
        return bool(self.by_text)


def _alternation(ids: Iterable[str]) -> re.Pattern[str] | None:
    """One pattern for these (normalised) ids' mentions, longest first, so 'GET /orders/:id' wins over
    'GET /orders' at the same place."""
    ordered = sorted(ids, key=len, reverse=True)
    return re.compile("|".join(f"(?:{mention_source(t)})" for t in ordered)) if ordered else None


CURRENT = ("next", "doing")      # an item claimed as the one now: next, or at work on it


def misclaimed(kind: str, finished: bool) -> bool:
    """A claim the record contradicts: a finished item claimed next (or at work), an open one claimed done."""
    return (kind in CURRENT) == finished


def verdict(said: dict[str, str] | None, last: str | None, nxt: str, finished: set[str],
            wrong: Iterable[str] | None = None) -> str:
    """Whether what a context last says of each item (`said`: item -> 'done' | 'next' | 'doing', its
    latest claim) shows where a workstream stands, given the last finished item, the next one and every
    finished one: '' when it does, else why. Every item is judged by its own latest claim, so a true line
    about an item finished long ago neither helps nor hurts. The scorer and the validator's replay of the
    oracle both judge a position with this. `wrong`: the items of `said` that are `misclaimed`, when the
    caller keeps them up as claims and the record change (the validator's replay: events x items else)."""
    if not said:
        return "no sentence says which item is done or next"
    if wrong is None:
        wrong = [i for i, k in said.items() if misclaimed(k, i in finished)]
    shown = sorted(f"'{i}' as {'next' if said[i] == 'doing' else said[i]}" for i in wrong)   # at work: the current one
    if shown:
        return "the latest claims have " + ", ".join(shown)
    if said.get(nxt) in CURRENT or said.get(last) == "done":
        return ""
    return "no latest claim names the last finished item as done or the next one as next"


class Position:
    """A workstream's claimed state (item -> 'done' | 'next' | 'doing'), advanced in place: each item
    keeps its latest claim, and only one item can be next — naming a new next item supersedes the old
    one ('Starting with #101' then 'Next: #102' leaves #101 no longer next, not wrongly next). The items
    claimed current are kept apart, so a claim costs its own items, not the workstream's: the validator
    advances one state over every event of a session."""

    def __init__(self, state: dict[str, str] | None = None):
        self.state = dict(state or {})
        self._current: set[str] | None = None        # found when first needed
        self._before: dict[str, str | None] = {}     # item -> its claim before the changes since `changed()`

    def advance(self, said: dict[str, str], keep: Iterable[str] = ()) -> None:
        """`keep`: items at work that a new next item does not supersede ('current X; next Y': Y is after X)."""
        state = self.state
        # the agent at work on an item ('doing') makes it the current one, unless it is already said to be
        # finished: labelling or checking a merged PR again does not reopen it
        said = {i: k for i, k in said.items() if not (k == "doing" and state.get(i) == "done")}
        if self._current is None:
            self._current = {i for i, k in state.items() if k in CURRENT}
        if any(k in CURRENT for k in said.values()):
            kept = {i for i in keep if i in self._current and i not in said}
            for i in self._current - kept:
                self._before.setdefault(i, state.pop(i))
            self._current = kept
        for i, k in said.items():
            self._before.setdefault(i, state.get(i))
            state[i] = k
            (self._current.add if k in CURRENT else self._current.discard)(i)

    def finish(self, ids: Iterable[str]) -> None:
        """The record's own event finishes these items: each is done, whatever was claimed of it."""
        for i in ids:
            self._before.setdefault(i, self.state.pop(i, None))
            self.state[i] = "done"
            if self._current is not None:
                self._current.discard(i)

    def changed(self) -> set[str]:
        """The items whose claim differs from what it was at the last call (or the start)."""
        out = {i for i, k in self._before.items() if self.state.get(i) != k}
        self._before = {}
        return out

    def read(self, units_: Iterable[Unit], items: Items) -> "Position":
        """Advance by what these units claim, in order (a sentence that claims an item both done and next
        counts it next: a step of it is done, the item is not). Under a heading that says what is next
        ('Next steps:'), only the first bullet is the next item; the rest are the queue after it."""
        head_next = ""
        units_ = units_ if isinstance(units_, list) else list(units_)
        at_work: tuple[int, set[str]] = (-1, set())   # where a sentence said items are at work, and which
        named = False                                  # whether the unit before names an item
        for k, u in enumerate(units_):
            before, named = named, u.sentence and items.named(u.scope)
            if not u.sentence:
                continue
            # a pronoun is looked for only after a sentence that names an item: most units name none
            scope = u.scope if named else referent(units_, k, items) if before else ""
            if not scope:                                     # a unit that names no item claims nothing
                continue
            said = claims(scope, items)
            if said and u.head and NEXT.search(u.head) and not claims(u.text, items):
                if head_next == u.head:
                    continue                                  # a later bullet under the same 'Next ...:' heading
                head_next = u.head
            if said:
                # an item a sentence both finishes and plans ('#5798 approved, merging next') is still to do
                kind = lambda i: "next" if (i, "next") in said else "done" if (i, "done") in said else "doing"  # noqa: E731
                # an item said to be at work earlier in the same line stays current beside a new next one; a line
                # that calls several items current names no one place, and the newest claim wins as before
                line = at_work[1] if at_work[1] and one_line(units_, at_work[0], k) else set()
                left = {i for i, k_ in said if k_ == "left"}
                if left and all(i in left for i, k_ in said if k_ == "next"):
                    line = at_work[1]       # what is left comes after the item at work, wherever that was said
                self.advance({i: kind(i) for i, k_ in said if k_ not in ("current", "left")},
                             line if len(line) == 1 else ())
                now = {i for i, k_ in said if k_ == "current"}
                if now:
                    at_work = (at_work[0], line | now) if line else (k, now)
        return self


# A pronoun that stands for an item a sentence before named: 'it', 'this one', 'that one'.
REFERRING = re.compile(r"\b(?:it|(?:this|that) one)\b")


def referent(units_: list[Unit], k: int, items: Items) -> str:
    """Unit `k`'s scope with its pronoun read as the item the sentence before it names ('#5761 is approved;
    merge it next': #5761 is next), or '' when it has none: a pronoun reaches back only within its line (a
    bullet is its own entry) and only to a sentence that names exactly one item — with two candidates ('#5760
    and #5761 are approved; merge it next') it names neither."""
    u = units_[k]
    pronoun = REFERRING.search(u.text)
    if pronoun is None or k == 0:
        return ""
    prev = units_[k - 1]
    if not one_line(units_, k - 1, k):
        return ""
    found = items.find(prev.text)
    if len({f[2] for f in found}) != 1:
        return ""
    name = prev.text[found[0][0]:found[0][1]]
    text = u.text[:pronoun.start()] + name + u.text[pronoun.end():]
    return f"{u.head}{SEP}{text}" if u.head else text


def one_line(units_: list[Unit], j: int, k: int) -> bool:
    """Whether units `j` to `k` are consecutive sentences of one line: the line's own unit, which follows its
    last sentence, holds them in order. A line's opening label ('w1: …; current X; next Y') extends the head of
    the clauses after it, so theirs may be longer than the line's own."""
    run = units_[j:k + 1]
    if not run or not all(w.sentence for w in run):
        return False
    line = next((w for w in units_[k + 1:k + 65] if not w.sentence), None)
    return (line is not None and all(w.head.startswith(line.head) for w in run)
            and " ".join(w.text for w in run) in line.text)


def advance(state: dict[str, str], said: dict[str, str]) -> dict[str, str]:
    """A workstream's claimed state after newer claims (`Position.advance`), as a new mapping."""
    p = Position(state)
    p.advance(said)
    return p.state


def latest_claims(units_: Iterable[Unit], items: Items, state: dict[str, str] | None = None) -> dict[str, str]:
    """A workstream's claimed state after these units, in order, from `state` (`Position.read`)."""
    return Position(state).read(units_, items).state


# 'X is next', 'X comes next', 'next after X' and 'up next after X' say the item *before* the marker
# is next (or that X is done and something else follows); any other 'next' points at what follows it.
NEXT_OF_BEFORE = re.compile(r"(?:\b(?:is|are|comes?|goes|go)\s+(?:(?:the|my|our)\s+)?$)")
NEXT_AFTER = re.compile(r"^\s*(?:after|following)\b")
NEXT_ENDS = re.compile(r"^\s*(?:[,.;!?)]|$)")         # 'next' closing its clause is said of what came before it


# A finished action on the item in a clause of time: 'after merging #104', 'having reviewed #104', 'once #104 was
# merged' (past tense: a report, not a condition).
AFTER_DOING = re.compile(r"\b(?:after|having)\s+([a-z]+(?:ing|ed))\s+(?:(?:pr|pull request|the|ticket)\s+)?$")
# an item as the subject of a progressive passive ('the bulk orders endpoint is being written now'); a verb of
# holding it up ('is being held', 'is being blocked') says it waits
BEING = re.compile(r"^\s+(?:is|are)\s+(?:now\s+|currently\s+|still\s+)?being\s+([a-z]+)\b")
HELD_UP = frozenset("held blocked paused deferred postponed delayed parked ignored dropped cancelled canceled "
                    "shelved descoped scrapped abandoned removed reverted waited skipped rejected declined".split())
PAST_COPULA = re.compile(r"\b(?:was|were|had been|has been|have been|had)\s+(?:\w+\s+)?$")
# git's line for a commit just made, '[<branch> <short sha>] <subject>': the change its subject names is committed.
COMMIT = re.compile(r"\[[\w./-]+ (?:\(root-commit\) )?[0-9a-f]{7,12}\]\s")
# A next-marker that says the item is at work now, not only planned ('current X; next Y': X is at work).
AT_WORK = re.compile(r"^(?:current|currently|working on|looking at|in[ _-]progress|underway|under way|i['’]m on|i am on|we['’]re on|"
                     r"we are on|now on)$")
TIE_BREAK = re.compile(r"\s[—–-]\s|;\s")
# the word right after a done-word that would be its object (a word, not a gerund: 'finished reviewing #104')
# where that object ends before an item: a colon, or a comma and what coordinates another clause; never an
# apposition that names the item ('Finished the last big one, search, at 09:40', 'Completed the cutover (billing)')
OBJECT_ENDS = re.compile(r":|,\s*(?:then|and|but|so|while)\b")
OWN_OBJECT = re.compile(r"\s+(?:(?:the|a|an|its|their|our|my)\s+([^\W\d_][\w-]*)|([^\W\d_][\w-]*)(?<!ing))\b")
# A next-marker that lists what is left ('remaining: [load test, docs examples]'): the items after the one at work,
# which it does not supersede.
LEFT = re.compile(r"^(?:remaining|remains?|still open|left to do)$")


# What joins a range's two ends: '#5301 through #5365', 'a … z', '#5301-#5365' ('to' is also a move: 'from #101 to #102').
RANGE = re.compile(r"^\s*(?:through|thru|…|\.\.\.?|[-–—])\s*$")


def whole(scope: str, found: list[tuple[int, int, str]], items: Items) -> list[tuple[int, int, str]]:
    """`found` without a range that runs from the workstream's first item to its last: that names the queue
    itself, not a place in it, so a status said of it ('#5301 through #5365, 34 PRs (done)', 'queue a … z — in
    progress') is the mission's, and no item's claim. A range of part of it ('#5301-#5306 merged') stays."""
    if items.ends is None:
        return found
    first, last = items.ends
    for a, b in zip(found, found[1:]):
        if a[2] == first and b[2] == last and RANGE.match(scope[a[1]:b[0]]):
            return [f for f in found if f is not a and f is not b]
    return found


# what may stand between an item and the mark after it: an aside, a comma ('auth (2 tries) ✓', 'auth, ✓')
MARK_GAP = re.compile(r"\s*(?:\([^()]*\)\s*)?,?\s*")


def _marks_lead(scope: str, found: list[tuple[int, int, str]]) -> bool:
    """Whether a unit's check marks stand before their items: more of them have an item right after than right
    before (`MARK_GAP`)."""
    lead = trail = 0
    for m in MARK.finditer(scope):
        lead += any(f[0] >= m.end() and not scope[m.end():f[0]].strip() for f in found)
        trail += any(f[1] <= m.start() and MARK_GAP.fullmatch(scope[f[1]:m.start()]) for f in found)
    return lead > trail


def claims(scope: str, items: Items) -> set[tuple[str, str]]:
    """What a unit says about the position in a workstream: (item, 'done' | 'next') pairs.

    Each marker is tied to the nearest item mention ('next' prefers the item after it: 'moving on
    to #102', but '#102 is next' the one before), so 'done: #1 #2 ... next: #9' claims #1 done and
    #9 next, not all of them."""
    found = whole(scope, items.find(scope), items)
    if not found:
        return set()
    out: set[tuple[str, str]] = set()
    text_at = scope.find(SEP) + len(SEP) if SEP in scope else 0
    doing = DOING.match(scope[text_at:])
    # the opening word is no verb at work where it is an item's own name ('billing must wait until …')
    if doing and doing.group(1) not in NOT_DOING and not any(f[0] <= text_at + doing.start(1) < f[1] for f in found):
        first = min((f for f in found if f[0] >= text_at), default=None)
        if first is not None:
            out.add((first[2], "doing"))
    commit = COMMIT.search(scope)
    if commit is not None:  # git's report of a commit made: what its subject names is done
        first = min((f for f in found if f[0] >= commit.end()), default=None)
        if first is not None:
            out.add((first[2], "done"))
    for f in found:         # 'after merging #104': the action before the item is finished
        g = AFTER_DOING.search(scope[:f[0]])
        if g and g.group(1) not in NOT_DOING:
            out.add((f[2], "done"))
        g = BEING.match(scope[f[1]:])    # '#104 is being reviewed now': the progressive passive is work under way
        if g and not PRIVATIVE.fullmatch(g.group(1)) and g.group(1) not in HELD_UP:
            out.update(((f[2], "next"), (f[2], "current")))
    prefix: bool | None = None      # whether this unit's check marks stand before their items (`_marks_lead`)
    # an aside's own clauses part no clause of the unit's ('catalog (2nd try; 1st rolled back), orders')
    flat = asides_blanked(scope)
    for kind, pattern in (("done", DONE), ("next", NEXT)):
        for m in pattern.finditer(scope):
            if kind == "done" and ((NOT_YET.search(re.split(r"[()]", " ".join(scope[:m.start()].split()[-4:]))[-1])
                                    or THEN_DONE.search(scope[max(0, m.start() - 12):m.start()])
                                    or WANTED.search(scope[max(0, m.start() - 120):m.start()]))
                                   and not PAST_COPULA.search(scope[:m.start()])
                                   or NO_SUBJECT.search(scope[max(0, m.start() - 40):m.start()])):
                continue        # a plan, a condition or a denial; 'once #104 was merged' reports it done
            # a marker is tied to an item of its own clause (a dash or semicolon ends it): '... pick the queue
            # back up where I left off - #5326 was merged' says nothing of #5326 being next; a clause with a
            # marker and no item comments on the one before it ('#101 - done')
            lo = max((x.end() for x in TIE_BREAK.finditer(flat, 0, m.start())), default=0)
            hi = next((x.start() for x in TIE_BREAK.finditer(flat, m.end())), len(scope))
            after = [f for f in found if m.end() <= f[0] < hi]
            before = [f for f in found if lo <= f[0] and f[1] <= m.start()]
            if not after and not before:
                before = [f for f in found if f[1] <= m.start()]
                if not before:
                    # nothing before it either: the next clause, when it has no marker of its own, says what it
                    # is of ('in progress — reports is the last one'; '... where I left off - #5326 was merged'
                    # speaks for itself)
                    end = next((x.start() for x in TIE_BREAK.finditer(flat, hi + 1)), len(scope))
                    tail = scope[hi:end]
                    if not (DONE.search(tail) or NEXT.search(tail)):
                        after = [f for f in found if hi <= f[0] < end][:1]
            if kind == "done" and after and not MARK.fullmatch(m.group(0)):
                # a done-word with an object of its own that is no item and ends before one ('Sofia ruled out pg_dump:
                # … a dump of orders alone runs ~40 min') says nothing of the items further on
                obj = OWN_OBJECT.match(scope, m.end())
                first = min(f[0] for f in after)
                g = obj.lastindex if obj else None
                ends = OBJECT_ENDS.search(scope, obj.end(g), first) if g and obj.start(g) < first else None
                # the object ends before the item ('merged the docs PR, then #105'); a label's colon right before its
                # items ('Finished today: orders') ends no object
                if ends and obj.group(g) not in FUNCTION and (ends.group(0) != ":" or re.search(r"\w", scope[ends.end():first])):
                    after = []
            near_after = min(after, key=lambda f: f[0] - m.end()) if after else None
            near_before = max(before, key=lambda f: f[1]) if before else None
            if kind == "done" and DONE_LABEL.match(scope[m.end():]) and LABEL_START.search(scope[:m.start()]):
                # a label heads its list: every item after it in the clause is done (an aside's own clauses end no
                # list: 'done: auth, catalog (2nd try; 1st rolled back), orders')
                end = next((x.start() for x in re.finditer(r"[;.!?]\s|\bnext\b|\bnow\b", flat[m.end():])), None)
                stop = m.end() + end if end is not None else len(scope)
                listed = [f for f in after if f[0] < stop]
                if listed:
                    out.update((f[2], "done") for f in listed)
                    continue
            if kind == "done" and near_before is not None and SUBJECT_DONE.search(scope[near_before[1]:m.start()]) \
                    and not re.search(r"[;:,.]", scope[near_before[1]:m.start()]):
                out.add((near_before[2], "done"))       # '#5335 is merged': the subject before the copula
                ahead = near_before     # and the items coordinated with it ('orders and billing were cut over')
                for f in sorted(before, key=lambda f: -f[1]):
                    if f is not near_before and COORDINATED.fullmatch(scope[f[1]:ahead[0]]):
                        out.add((f[2], "done"))
                        ahead = f
                continue
            if kind == "done" and not MARK.fullmatch(m.group(0)) and (
                    ATTRIBUTIVE.search(scope[max(0, m.start() - 8):m.start()])
                    or PROGRESSIVE.search(scope[max(0, m.start() - 8):m.start()])     # under way, not done
                    or not before and PASSIVE.search(scope[max(0, m.start() - 30):m.start()])
                    and not COUNTED.search(scope[max(0, m.start() - 40):m.start()])):
                # an adjective ('in a fixed sequence'), or a passive with no item before it in its clause ('a pg_dump
                # was ruled out, since dumping orders …'; not 'users: migration is done'): said of another thing,
                # not of the item beside it; a subject that counts the work's items is theirs ('13 of 16 flags are
                # cleaned up — most recently X')
                continue
            if kind == "next":
                if NEXT_AFTER.match(scope[m.end():]):     # 'users is next after auth', 'next after auth: users'
                    ahead = sorted(after)
                    pick = near_before or (ahead[1] if len(ahead) > 1 else None)
                elif NEXT_OF_BEFORE.search(scope[max(0, m.start() - 12):m.start()]) or NEXT_ENDS.match(scope[m.end():]):
                    pick = near_before or near_after    # '#5306 is next'; 'review #104 next, then ...'
                else:
                    pick = near_after or near_before
                if pick is not None:
                    out.add((pick[2], kind))
                    if AT_WORK.match(m.group(0)):
                        out.add((pick[2], "current"))     # at work on it, not only planned: `Position.read`
                    elif LEFT.match(m.group(0)):
                        out.add((pick[2], "left"))        # what is left after the one at work: `Position.read`
                continue
            options = [f for f in (near_after, near_before) if f is not None]
            if not options:
                continue
            if MARK.fullmatch(m.group(0)):
                # a mark stands beside its item, on the side the list puts its marks (`_marks_lead`): after ('auth ✓
                # users ✓') or before ('✅ auth ✅ users → catalog now')
                if prefix is None:
                    prefix = _marks_lead(scope, found)
                side = near_after if prefix else near_before
                if side is not None and (not scope[m.end():side[0]].strip() if prefix
                                         else MARK_GAP.fullmatch(scope[side[1]:m.start()])):
                    options = [side]
                elif prefix:
                    continue
            gap = lambda f: f[0] - m.end() if f[0] >= m.end() else m.start() - f[1]   # noqa: E731
            out.add((min(options, key=gap)[2], kind))
    return out
