"""Keys read as a reader reads them: inflected, with words between, numbers and lengths of time however spelt,
anchors (paths, ids, numbers) as written.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Iterable, TYPE_CHECKING

from bench.text import normalize
from bench.units.grammar import (EQUIVALENTS, EQUIVALENT_REACH, NEAR_NEGATION, PASSIVE_CHAIN, WITHOUT, consult_cue)
from bench.units.ids import (spans, tokens)
from bench.units.options import (FORMER_LABEL, undone_note)

if TYPE_CHECKING:     # named in annotations only: that module builds on this one
    from bench.units.sentences import Unit


# A key is a phrase of the truth ('push to main', 'backoff timer (6 s)'); a reader recognises it in other
# words of the same meaning: inflected ('no direct pushes to main'), with words between, or, for a key of
# several parts, with one ordinary word left out ('release/2.4 is off limits'). What pins a key never goes:
# its anchors — paths, ids, numbers, codes — must stand as written (a file path may be cut to its file name
# and line: 'bar.ts:88' for 'src/upstream/bar.ts:88'). A fact keeps at least one ordinary word, so a bag of
# identifiers is still no fact (the token_bag adversary).
ANCHOR = re.compile(r"[\d/._#:@%$=]|^-")
SPLIT_WORD = re.compile(r"[^\w'’]+|_")
# a word is a run of letters of any script (script-aware: 'fixé' is one French word, not 'fix' and a stray 'é')
WORD_TOKEN = re.compile(r"[^\W\d_](?:[^\W\d_]|['’])*")
SUFFIXES = ("'s", "’s", "ingly", "edly", "ings", "ing", "ies", "ied", "ed", "es", "ly", "s", "e", "y")
INFLECTED = r"(?:e|es|s|ed|d|ing|ings|ly|y|ies|ied|er|ers)?"
LOOSE, PHRASE = "loose", "phrase"


UNITS = {"s": r"s|secs?|seconds?", "min": r"m|mins?|minutes?", "h": r"h|hrs?|hours?", "d": r"d|days?",
         "w": r"w|wks?|weeks?", "mo": r"mos?|months?", "y": r"y|yrs?|years?"}
# a unit's short form is its word ('1 yr' is a year, '2 hrs' hours); a one-letter form is too ambiguous to be one
SHORT_UNITS = {f.removesuffix("s?"): forms.split("|")[-1].removesuffix("s?") for forms in UNITS.values()
               for f in forms.split("|")[:-1] if len(f.removesuffix("s?")) > 1}


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """A crude stem: a common suffix off ('deleting', 'deleted', 'delete' -> 'delet'; 'pushes' -> 'push'),
    never below three letters, and a doubled last consonant made single ('stopped' -> 'stop'); a unit's short form
    its word's ('yrs' -> 'year')."""
    short = SHORT_UNITS.get(word[:-1] if word.endswith("s") else word) if len(word) < 5 else None
    if short:
        return stem(short)
    for suf in SUFFIXES:
        if word.endswith(suf) and len(word) - len(suf) >= 3:
            if suf == "s" and word[-2] in "sui":       # 'class', 'status', 'analysis'
                break
            word = word[:-len(suf)]
            if suf == "s" and word.endswith("y") and len(word) > 4:
                word = word[:-1]        # a plural in 'ys' as its singular: 'fridays', 'friday' -> 'frida'
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz" and word[-1].isalpha():
        word = word[:-1]
    return word


# what a text that holds a unit's word in either form holds ('y' of 'year' and 'yr')
UNIT_LOOKS = {stem(word): os.path.commonprefix([short, word]) for short, word in SHORT_UNITS.items()}


# A number is the same number in digits or in words ('5', 'five'), and a length of time the same length however
# its unit is spelt ('24 hours', '24h', '24-hour', '24 hrs'; 'five minutes', '5 min'): what a key pins is the
# quantity, not its typesetting. English number words only: a closed class, like the function words.
_ONES = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
        "seventeen eighteen nineteen".split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
NUMBER_WORDS = {w: str(i) for i, w in enumerate(_ONES, 1)}
NUMBER_WORDS.update({t: str(20 + 10 * i) for i, t in enumerate(_TENS)})
NUMBER_WORDS.update({f"{t}-{o}": str(20 + 10 * i + j) for i, t in enumerate(_TENS) for j, o in enumerate(_ONES[:9], 1)})
NUMERALS = {v: k for k, v in NUMBER_WORDS.items()}
# the same units in the other languages summaries are written in (`ROLES`): a closed class, Latin forms as words
UNITS_ELSEWHERE = {
    "s": (r"sekunden?|secondes?|segundos?", r"秒"),
    "min": (r"minuten?|minutes?|minutos?", r"分钟|分鐘|分間|分"),
    "h": (r"stunden?|std|heures?|horas?", r"小时|小時|時間"),
    "d": (r"tage?n?|jours?|d[ií]as?", r"天|日"),
    "w": (r"wochen?|semaines?|semanas?", r"周|週間|週"),
    "mo": (r"monate?n?|mois|mes(?:es)?", r"个月|か月|ヶ月|月"),
    "y": (r"jahre?n?|ans?|années?|años?", r"年"),
}
UNIT_OF = {form: unit for unit, forms in UNITS.items() for alt in forms.split("|")
           for form in ((alt[:-2], alt[:-1]) if alt.endswith("s?") else (alt,))}
QUANTITY = re.compile(r"^(\d+)-?(" + "|".join(sorted({f for f in UNIT_OF if len(f) > 1}, key=len, reverse=True))
                      + r"|[smhdwy])$")
NUMBER = re.compile(r"^\d{1,2}$")


def quantities(toks: list[str]) -> list[str]:
    """A key's tokens with each number written as digits and a number followed by a unit of time joined into
    one quantity token ('24 hours', '24-hour' and '24h' all become '24h'; 'five flags' becomes '5 flags')."""
    out: list[str] = []
    i = 0
    while i < len(toks):
        t = NUMBER_WORDS.get(toks[i], toks[i])
        nxt = toks[i + 1] if i + 1 < len(toks) else ""
        if (t.isdigit() or NUMBER.match(t)) and nxt in UNIT_OF and len(nxt) > 1:
            out.append(t + UNIT_OF[nxt])
            i += 2
            continue
        q = QUANTITY.match(t)
        out.append(q.group(1) + UNIT_OF[q.group(2)] if q else t)
        i += 1
    return out


def _number(n: str) -> str:
    """A number in digits, or its English word (with a space or hyphen in a compound)."""
    word = NUMERALS.get(n)
    return f"(?:{re.escape(n)}|{word.replace('-', '[ -]?')})" if word else re.escape(n)


_ORDINAL = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth", "nine": "ninth",
            "twelve": "twelfth"}


def _ordinal(n: str) -> str:
    """The English ordinal of a number up to twenty or a round ten ('fifth' for '5', 'twentieth'), else ''."""
    word = NUMERALS.get(n, "")
    if "-" in word:
        return ""
    return _ORDINAL.get(word) or (word[:-1] + "ieth" if word.endswith("ty") else word + "th" if word else "")


def _every(n: str) -> str:
    """A count as a frequency's ordinal: 'after every fifth flag', 'every 5th' say 'after every five flags'."""
    ordinal = _ordinal(n)
    suffix = "th" if n[-2:-1] == "1" else {"1": "st", "2": "nd", "3": "rd"}.get(n[-1:], "th")
    return rf"(?<=\bevery\s)(?:{re.escape(n)}{suffix}{'|' + ordinal if ordinal else ''})(?![\w])"


DAY_NAMES = "monday tuesday wednesday thursday friday saturday sunday".split()
# a weekday's abbreviation stands for the day ('Thu 16:00-20:00' for 'Thursdays 16:00-20:00'): a closed class
SHORT_DAYS = {"tues": "tuesday", "weds": "wednesday", "thur": "thursday", "thurs": "thursday"}
WEEKDAYS = {a: frozenset({stem(d), stem(d + "s")}) for a, d in [*((d[:3], d) for d in DAY_NAMES), *SHORT_DAYS.items()]}


def stems_of(text: str) -> frozenset[str]:
    """The stems of a text's ordinary words (hyphenated and snake_case words split), a weekday's abbreviation
    read as the day."""
    words = set(WORD_TOKEN.findall(" ".join(SPLIT_WORD.split(text))))
    out = frozenset(map(stem, words))
    days = words & WEEKDAYS.keys()
    return out.union(*(WEEKDAYS[d] for d in days)) if days else out


# Words that carry no content of a key of their own: articles, prepositions, pronouns (a summary says 'Dana'
# or 'I' where the user said 'me' or 'you'), auxiliaries and modals (the rule's kind is read by `same_rule`).
FUNCTION = frozenset("""a an the this that these those to of for in on at by with from into onto as and or
any all every each some its it i me my mine you your yours we us our he him his she her they them their
is are was were be been being am do does did has have had will would shall should can could may might must
there here so then than""".split())


def anchors_of(key: str) -> tuple[str, ...]:
    """A key's anchors (ids, paths, numbers), without compiling the key."""
    return key_pieces(normalize(key))[0]


def key_pieces(key: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A key's anchors (tokens with a digit, a path or id character) and its content words (function words
    and single letters left out), in order."""
    anchors, words = [], []
    for t in quantities(tokens(key)):
        if ANCHOR.search(t):
            anchors.append(t)
        else:
            words.extend(w for w in SPLIT_WORD.split(t) if len(w) > 1 and w not in FUNCTION)
    return tuple(anchors), tuple(words)


def _tail(anchor: str) -> str:
    """A path's file name (and line), which may stand for the whole path: 'bar.ts:88' for
    'src/upstream/bar.ts:88' — not '2.4' for 'release/2.4'; '' when it has none."""
    if "/" in anchor.rstrip("/"):
        tail = anchor.rstrip("/").rsplit("/", 1)[1]
        if re.search(r"[a-z]\.[a-z]", tail):
            return tail
    return ""


FILE_LINE = re.compile(r"^(?P<file>.*[a-z]\.[a-z]\w*):(?P<line>\d+)$")


# a range of clock times ('16:00-20:00'): '16–20', 'between 16:00 and 20:00' and 'from 16:00 to 20:00' say it too
TIME_RANGE = re.compile(r"^(\d{1,2}):(\d{2})[-–—](\d{1,2}):(\d{2})$")


def _anchor_pattern(anchor: str) -> str:
    """An anchor as a whole token; a path with a directory may stand as its file name (and line), a
    percentage may be typeset with a space before its sign, and a file's line may be written out ('lookup.ts line 58', 'lookup.ts, line 58' for 'geo/lookup.ts:58')."""
    q = QUANTITY.match(anchor)
    if q:                   # a length of time, however its unit is spelt (`quantities`)
        unit = UNIT_OF[q.group(2)]
        # the number with its unit, in English or in another language's word for it ('2 Stunden', '2 heures',
        # '2 小时'): never the bare number, nor with another unit
        n = _number(q.group(1))
        return (rf"(?:(?<![\w/.-]){n}(?:[\s-]?(?:[^\W\d_]+\s+)?(?:{UNITS[unit]})(?![\w])|"
                rf"[\s-]?(?:{UNITS_ELSEWHERE[unit][0]})(?![\w])|\s?(?:{UNITS_ELSEWHERE[unit][1]}))|"
                # a range's second number takes the unit said with its first ('from 30 days to 90')
                rf"\b(?:{UNITS[unit]})\s+(?:up\s+)?to\s+{n}(?![\w]))")
    if NUMBER.match(anchor):
        return rf"(?:(?<![\w/.-]){_number(anchor)}(?![\w])|{_every(anchor)})"
    r = TIME_RANGE.match(anchor)
    if r:       # a range of clock times however it is joined; a time on the hour may drop its minutes
        one, two = (rf"0?{int(h)}(?::{m})?" if m == "00" else rf"0?{int(h)}:{m}" for h, m in (r.group(1, 2), r.group(3, 4)))
        return (rf"(?<![\w/.:-])(?:{one}\s*[-–—]\s*{two}|between\s+{one}\s+and\s+{two}|"
                rf"{one}\s+(?:to|until|till|through)\s+{two})(?![\w:])")
    forms = [anchor] + ([_tail(anchor)] if _tail(anchor) else [])
    # a range's dash as typeset ('14:00–18:00' for '14:00-18:00')
    alts = "|".join(re.sub(r"(?<=\d)\\-(?=\d)", "[-–—]", re.escape(f)) for f in forms)
    if re.fullmatch(r"\d+(?:\.\d+)?%", anchor):      # a percentage as French and German typeset it: '2 %'
        alts += "|" + re.escape(anchor[:-1]) + r"[ \u00a0\u202f]%"
    at = FILE_LINE.match(anchor)
    if at:
        files = "|".join(re.escape(FILE_LINE.match(f).group("file")) for f in forms)
        alts += rf"|(?:{files}),?\s+line\s+{at.group('line')}"
    left = r"(?<![\w/.-])" if anchor[:1].isalnum() else ""
    right = r"(?![\w])" if anchor[-1:].isalnum() or anchor[-1:] == "%" else ""
    return f"{left}(?:{alts}){right}"


# A phrase that opens with a verb and a determiner ('add the shared Fastify auth hook'): a verb phrase.
VERB_PHRASE = re.compile(r"^[a-z]+\s+(?:the|a|an)\s+(?=\S+\s+\S)")


def object_of(phrase: str) -> str:
    """A verb phrase's object ('shared fastify auth hook' of 'add the shared fastify auth hook'), else the
    phrase: what a detail is about, whichever verb a summary reports it with."""
    m = VERB_PHRASE.match(phrase)
    return phrase[m.end():] if m else phrase


NEGATORS = frozenset({"not", "no", "never"})
NEGATION_CORES = ("no", "never", "n't", "n’t")      # what any text with a negation (`NEAR_NEGATION`) holds
# a rule's day is what it holds on: another day named in its place is another rule (a day in another language, or
# none, leaves the rule's anchors to pin it)
DAY_STEMS = frozenset(stem(d + x) for d in DAY_NAMES for x in ("", "s"))
BOUND_WORDS = frozenset("after before until unless only except without every each never not no first".split()
                        + DAY_NAMES + [d + "s" for d in DAY_NAMES])


def _anchor_cores(anchor: str) -> tuple[str, ...]:
    """Literal strings one of which every match of `_anchor_pattern(anchor)` holds: each form's text, a
    percentage's number, a file line's file name."""
    q = QUANTITY.match(anchor) or NUMBER.match(anchor)
    if q:
        n = q.group(1) if q.groups() else anchor
        ordinal = (_ordinal(n).split("-")[0],) if not QUANTITY.match(anchor) and _ordinal(n) else ()
        return (n, NUMERALS[n].split("-")[0], *ordinal) if n in NUMERALS else (n,)
    r = TIME_RANGE.match(anchor)
    if r:
        return (str(int(r.group(1))),)
    forms = [anchor] + ([_tail(anchor)] if _tail(anchor) else [])
    forms = [re.split(r"(?<=\d)-(?=\d)", f)[0] for f in forms]     # a range's dash may be typeset otherwise
    if re.fullmatch(r"\d+(?:\.\d+)?%", anchor):
        forms = [anchor[:-1]]
    if FILE_LINE.match(anchor):
        forms = [FILE_LINE.match(f).group("file") for f in forms]
    return tuple(forms)


CHOICE_VERB = re.compile(r"^(?:keep|use|go with|stick with|stay with|stay on|choose|pick|adopt|prefer)\s+")
CHOSEN = re.compile(r"\b(?:keep\w*|kept|use[sd]?|using|stay\w*|stick\w* with|go(?:es|ing)? with|went with|chose|chosen|"
                    r"choose|choice|decided|decisions?|picked|adopt\w*|prefer\w*|settled on|remains?|sticking)\b")


CHOICE_COLUMN = r"(?:chosen|choice|decided|decision|picked|selected)"    # a column that holds what was chosen
COPULA = r"(?:is|are|stays?|remains?|will be)"
HEAD_FIRST = r"(?:by|in|with|via|using|through|as|on)"     # what joins a head to its modifier put after it
# a word between a label and its value that is no negation, no adverb of rarity and no 'from' (what is switched
# from is the old value: 'pagination will be switched from cursor to offset')
NOT_NEGATION = r"(?!(?:not|never|no|non|rarely|seldom|hardly|barely|from)\b|\w*n['’]t\b)"
# at most two words before the value, of a closed class (adverbs, determiners, verbs of keeping): 'pagination is
# still cursor-based'; never any other verb ('pagination: drop cursor-based, use offset')
LEAD_WORDS = (r"\s*(?:(?:still|now|always|all|the|a|an|just|only|strictly|fully|purely|kept|keep|keeps|use|uses|using|"
              r"stays?|remains?)\s+){0,2}?")


def _inflection(word: str) -> str:
    if len(word) < 4:
        return rf"{re.escape(word)}(?:s|es|ed|d|ing)?"
    s = stem(word)
    if not word.startswith(s):      # a unit's short form stems as its word ('mins' -> 'minut'): inflect what is written
        s = word
    return rf"{re.escape(s)}{re.escape(s[-1])}?{INFLECTED}"


def _inflected(word: str) -> str:
    """A word with its inflections: 'merge' matches merges, merged, merging; 'stop' stopped."""
    return rf"\b{_inflection(word)}\b"


CLIPPED = 7     # a word this long may be clipped to its first three letters or more, as notes clip ('int', 'repl.')


def clippable(word: str) -> bool:
    return len(word) >= CLIPPED and word.isalpha()


def _phrase_word(word: str, clipped: bool = False) -> str:
    """A phrase's word as terse text writes it: inflected, as a part of an identifier ('pg_advisory_xact_lock' holds
    advisory and lock: '_' bounds it as a space does), and `clipped` when long ('int cents' for integer cents): to its
    first three or four letters, never to a function word ('with' for without)."""
    body = _inflection(word)
    if clipped and clippable(word):
        clips = "|".join(re.escape(word[:n]) for n in (4, 3) if word[:n] not in FUNCTION)
        body = rf"(?:{body}|(?:{clips})\.?)"
    return rf"(?<![^\W_]){body}(?![^\W_])"


class Key:
    """One truth key, matched the way a reader recognises it (see above). `mode` LOOSE: every anchor and
    the ordinary words by their stems anywhere in the unit, `slack` of those words may be missing;
    PHRASE: its content words in order, inflected, at most two other words between them (a decision,
    a rejected option, a background payload: which words go together is what they say). `worded`: at least
    one ordinary word must be held when the key has any (a fact's token is no fact)."""

    __slots__ = ("text", "anchors", "words", "stems", "slack", "mode", "worded", "_anchors", "_cores", "_phrase",
                 "object", "bound", "_contrast", "named", "person", "reworded", "_noun", "looks", "_value")

    def __init__(self, text: str, mode: str = LOOSE, slack: int = 0, worded: bool = False, choice: bool = False,
                 rule: bool = False, pinned_by: bool = False, person: str = ""):
        self.text = normalize(text)
        # a decision worded as its verb and what it chose ('Keep REST'): the choice may be said with any verb
        # of choosing ('REST stays', 'chosen: REST', 'decision: REST')
        verb = CHOICE_VERB.match(self.text) if choice else None
        self.named: re.Pattern[str] | None = None
        self._noun = ""             # the word `named` blanks, looked for before the pattern runs
        self.person = person        # the user's name, who a rule's consulting may name (`_equivalent`)
        self.object = Key(self.text[verb.end():], mode) if verb and self.text[verb.end():].strip() else None
        if self.object is not None and len(self.object.words) == 1 and not self.object.anchors:
            # an option named by a word that is also a common noun ('REST') is not that noun in a partitive ('the
            # rest of the plan', 'options for the rest'): read with those blanked, whichever verb is near
            w = re.escape(self.object.words[0])
            self._noun = self.object._noun = self.object.words[0]
            # the noun heads its phrase: 'of', a complement of keeping ('the rest unchanged') or the clause's end
            # follows it, never a noun it would modify as a name ('the REST API', 'the REST + JSON API')
            self.named = self.object.named = re.compile(
                rf"\bthe\s+{w}(?=\s+(?:of|as is|as-is|as it is|unchanged|untouched|intact|alone|aside|for later|for now)\b|"
                rf"\s*(?:[.,;:!?)—–]|\s-\s|\*|$))")
        self.anchors, self.words = key_pieces(self.text)
        self.stems = tuple(stem(w) for w in self.words)
        # one of its words may be said in other words (`EQUIVALENTS`): no word of it is sure to be in a text
        self.reworded = any(s in EQUIVALENTS for s in self.stems)
        # the words that bound a rule ('after the crash is fixed', 'archive, not delete') are never the one to go
        self.bound = tuple(stem(w) for w in self.words if w in BOUND_WORDS) if rule else ()
        # a key that sets one word against another ('archive, not delete'): the negation governs the word after
        # it and not the one before, however it is said ('archived (never deleted)', not 'deleted, never archived')
        neg = next((i for i, w in enumerate(self.words) if w in NEGATORS), None)
        self._contrast = None
        if neg is not None and 0 < neg < len(self.words) - 1:
            # not a focus ('not merely delete' adds deleting) nor a condition ('or, if not, delete')
            no = r"(?:(?<!\bif )\b(?:not|no|never)\b(?!\W+(?:merely|only|just|simply)\b)|n['’]t\b)"
            against, kept = _inflected(self.words[neg + 1]), _inflected(self.words[neg - 1])
            self._contrast = (re.compile(rf"{no}\W+(?:\w+\W+){{0,1}}?{against}|{against}\w*\W+(?:\w+\W+){{0,3}}?{no}"),
                              re.compile(rf"(?:\b(?:not|never)\b|n['’]t\b)\W+(?:\w+\W+){{0,1}}?{kept}|"
                                         rf"\bno\s+(?:need\s+to\s+)?{kept}"))
        self.mode, self.worded = mode, worded and bool(self.words)
        # what a text that holds each word holds: its stem, or a phrase's long word as clipped (`_phrase_word`)
        self.looks = tuple(w[:3] if mode == PHRASE and clippable(w) else UNIT_LOOKS.get(s, s)
                           for w, s in zip(self.words, self.stems))
        # one ordinary word may go from a key pinned by an anchor or of three words or more: never every part
        # (a worded key keeps a word too), and never one of two plain words ('oldest to newest' is not 'oldest');
        # a number the key spells out ('five flags') pins it no more than as written
        # (`pinned_by`: another key of the same rule is anchored, and pins it: 'freeze: no cutovers Fri 14:00–18:00
        # UTC' is the payments freeze)
        pinned = len(self.anchors) > sum(t in NUMBER_WORDS for t in tokens(self.text))
        if not (pinned or pinned_by) and len(self.words) < 3:
            slack = 0
        elif pinned_by and not pinned and 0 < len(self.words) < 3:
            self.bound = (*self.bound, self.stems[-1])     # the head noun stays: 'freeze', not 'payments'
        self.slack = min(slack, max(0, len(self.words) - (1 if self.worded or not pinned else 0)))
        self._anchors = [re.compile(_anchor_pattern(a)) for a in self.anchors]
        self._cores = [_anchor_cores(a) for a in self.anchors]
        self._phrase: re.Pattern[str] | None = None
        self._value: re.Pattern[str] | None = None

    def __repr__(self) -> str:
        return f"Key({self.text!r})"

    def __len__(self) -> int:
        return len(self.text)

    @property
    def phrase(self) -> re.Pattern[str]:
        if self._phrase is None:
            parts, tight = [], []
            for t in quantities(tokens(self.text)):
                if ANCHOR.search(t):
                    parts.append(_anchor_pattern(t))
                    tight.append(parts[-1])
                    continue
                ws = [w for w in SPLIT_WORD.split(t) if len(w) > 1 and w not in FUNCTION]
                if ws:
                    parts.append(r"[\s-]?".join(_phrase_word(w) for w in ws))
                    tight.append(r"[\s-]?".join(_phrase_word(w, clipped=True) for w in ws))
            if tight:       # only a modifier is clipped: the head stands whole ('int cents'; not 'staging data')
                tight[-1] = parts[-1]
            gap = r"(?:[\W_]+(?:[^\W_]+[\W_]+){0,2}?|[\W_]*)"      # at most two other words between
            pattern = gap.join(parts)
            if len(tight) > 1 and any(clippable(w) for w in self.words):
                # a clipped word is a compound's, right beside the phrase's other words ('int cents'; never 'the
                # cutover log for replication errors' for logical replication)
                pattern = "|".join((pattern, r"[\s_-]+".join(tight)))
            if VERB_PHRASE.match(self.text) and len(parts) > 2:
                # a verb phrase in the passive, its object first ('the old snapshots on db-7 can be deleted',
                # 'the 24h soak skipped'): an auxiliary and a short phrase may stand between
                aux = r"(?:(?!(?:not|never|no)\b|\w+n['’]t\b)[\w'’/.-]+\s+)"     # no negation: 'is not skipped'
                pattern = rf"{pattern}|{gap.join(parts[1:])}\s+{aux}{{0,4}}?{parts[0]}"
                # or with the verb between its object and the rest, wherever the object ends ('the public orders
                # api switched to grpc', '… to be switched over to grpc')
                pattern = "|".join([pattern] + [rf"{gap.join(parts[1:i])}\s+{aux}{{0,3}}?{parts[0]}"
                                                rf"{gap}{gap.join(parts[i:])}" for i in range(2, len(parts))])
            if len(parts) > 1:      # its last word as a label over the rest ('Pagination: cursor-based', a quoted
                # field: '"pagination": "cursor"') or as the subject of a copula ('pagination is cursor-based'); a
                # negation between the two says the opposite
                pattern = (rf"{pattern}|{parts[-1]}(?:[\"'”’]?\s*[:=]|\s+{COPULA}){LEAD_WORDS}[\"'“‘]?"
                           rf"{gap.join(parts[:-1])}")
                # or the head first, its modifier after a preposition ('pagination by cursor', 'cents in integers')
                pattern = (rf"{pattern}|{parts[-1]}\s+{HEAD_FIRST}\s+(?:{NOT_NEGATION}[^\W_]+\s+)?"
                           rf"{gap.join(parts[:-1])}")
                # or as the subject cell of a table row whose next cell is the choice made for it ('| Pagination |
                # cursor |' under 'Decision | Chosen', read 'decision: pagination | chosen: cursor')
                pattern = (rf"{pattern}|{parts[-1]}\s*\|\s*{CHOICE_COLUMN}\s*:\s*(?:{NOT_NEGATION}\w+[^\w|]+){{0,2}}?"
                           rf"{gap.join(parts[:-1])}")
            self._phrase = re.compile(pattern) if parts else re.compile(r"(?!)")
        return self._phrase

    def by_value(self, scope: str) -> bool:
        """The choice could be held here only as a field's value (`valued`): no phrase of it, no verb of choosing."""
        return self.object is not None and not self.phrase.search(scope) and not CHOSEN.search(scope)

    def valued(self, scope: str) -> bool:
        """A choice's object as the whole value of a field ('transport: REST', a table row's 'state: REST |',
        '"transport": "REST"'): a field set to an option says it is the one in use, unless its label says the value
        held before ('Previous transport: REST', '| before: REST |'). A list ('All in place: REST, gRPC') names
        options and chooses none; a comment, a dash or an aside after the value may go back on it ('REST — gRPC being
        evaluated'): the value ends there, and what the comment says of a rejected option is read by
        `checks._taken_back` with the rest of its row, and by `checks._contrasted` where it sets one aside ('REST  #
        gRPC out'). A comment that hedges ('REST  # may change'), holds it for a while or reopens it leaves the field
        undecided, and one that opens on a negation or a rejection ('REST  # dropped', '— no longer', '# not
        negotiable' too: the reading does not tell which way a negation goes) takes it back."""
        if self.object is None:
            return False
        if self._value is None:
            self._value = re.compile(rf"(?:^|␞|\|)\s*[\"'“]?(?P<label>[^:|␞\"'“”]{{1,40}}?)[\"'”]?\s*[:=]\s*[\"'“]?"
                                     rf"(?:{self.object.phrase.pattern})[\"'”]?\s*(?:$|[|;.␞]|(?P<note>(?:#|//|[—–])[^|␞]*))")
        return any(not FORMER_LABEL.search(m.group("label")) and not (m.group("note") and undone_note(m.group("note")))
                   for m in self._value.finditer(scope))

    def maybe(self, text: str) -> bool:
        """A cheap necessary test on a whole text before any unit is read."""
        if self.text in text or self.object is not None and self.object.maybe(text):
            return True
        if self.mode == PHRASE and not self.anchors and len(self.words) < 2:
            return bool(self.words) and self.looks[0] in text
        if not self._anchored(text):
            return False
        missing = 0
        for s, look in zip(self.stems, self.looks):     # a word missing past the slack rules the key out
            # one said otherwise is read in a unit (`_equivalent`), and a key's negation is any negation (`held`)
            if look not in text and s not in EQUIVALENTS and not (s in NEGATORS and any(n in text for n in NEGATION_CORES)):
                missing += 1
                if missing > self.slack:
                    return False
        return True

    def _anchored(self, text: str) -> bool:
        """Every anchor stands in `text`. An anchor's pattern opens with a look-behind, which a regex cannot
        look for as a literal, so it is searched only in a text that holds one of its literal cores."""
        return self._cored(text) and all(p.search(text) for p in self._anchors)

    def _cored(self, text: str) -> bool:
        """Every anchor's literal core stands in `text`: a substring test, before any regex runs."""
        return all(any(c in text for c in cores) for cores in self._cores)

    def held(self, scope: str, stems: frozenset[str] | None = None) -> bool:
        """Whether `scope` (a unit's text with its heading) holds the key."""
        if self.named is not None and self._noun in scope:
            scope = self.named.sub(_spaces, scope)
        if self.text in scope and _whole(scope, self.text):
            return True
        if self.object is not None and self.object.held(scope, stems) and (CHOSEN.search(scope) or self.valued(scope)):
            return True
        if not self.anchors and not self.words:
            return False
        if self.mode == PHRASE:
            # every word and anchor of a phrase stands in any text that holds it: a substring test first
            return all(look in scope for look in self.looks) and self._cored(scope) and bool(self.phrase.search(scope))
        if not self._anchored(scope):
            return False
        have = stems if stems is not None else stems_of(scope)
        if any(s in NEGATORS for s in self.stems) and NEAR_NEGATION.search(scope):
            have = have | NEGATORS       # a key's negation is any negation ('archived, never deleted')
        if self.reworded:
            have = have | {s for s in self.stems if s not in have and self._equivalent(scope, s)}
        missing = sum(s not in have for s in self.stems)
        if self._contrast is not None and not missing:
            against, kept = self._contrast
            return bool(against.search(scope)) and not kept.search(scope)
        return missing <= self.slack and not (self.worded and missing == len(self.stems)) and (
            not missing or all(s in have or s in DAY_STEMS and not have & DAY_STEMS for s in self.bound))

    def _class(self, s: str) -> re.Pattern[str]:
        return consult_cue(self.person) if s == "ask" else EQUIVALENTS[s]

    def _equivalent(self, scope: str, s: str) -> bool:
        """The key's word `s` said by another form of its class (`EQUIVALENTS`) where it stands next to the key's
        other words, as in the key ('needs her OK first', 'gRPC brought up again'; not 'delete it first, then get
        her OK on the summary', nor 'over 2 of them' for 'more than a year'); a word a privative governs in the
        key ('without asking') follows it in the text ('without checking in with her', not 'with her OK,
        without a ticket')."""
        eq = self._class(s) if s in EQUIVALENTS else None
        if eq is None:
            return False
        others = [x for x in self.stems if x != s and x not in FUNCTION]
        privative = any(x == "without" and y == s for x, y in zip(self.stems, self.stems[1:]))
        for m in eq.finditer(scope):
            # an auxiliary chain stands between a passive's subject and its verb ('gRPC must not be suggested')
            before = " ".join([w for w in WORD_TOKEN.findall(scope[:m.start()])[-EQUIVALENT_REACH - 4:]
                               if not PASSIVE_CHAIN.fullmatch(w)][-EQUIVALENT_REACH:])
            after = " ".join(WORD_TOKEN.findall(scope[m.end():])[:EQUIVALENT_REACH])
            if privative:
                if WITHOUT.search(before):
                    return True
                continue
            near = after if s in ("mor", "less") else f"{before} {after}"     # a comparison's quantity follows it
            if not others or any(x in stems_of(near) or x in EQUIVALENTS and self._class(x).search(
                    near + scope[m.end():m.end() + 30]) for x in others):
                return True
        return False

    def spans(self, scope: str) -> list[tuple[int, int]]:
        """Where the key stands in `scope`: each verbatim or phrase occurrence, else (a loose match) the
        stretch from its first held part to its last."""
        if self.named is not None and self._noun in scope:
            scope = self.named.sub(_spaces, scope)
        out = [(m.start(), m.end()) for m in re.finditer(re.escape(self.text), scope)]
        if out or not (self.anchors or self.words):
            return out
        if self.object is not None and not self.phrase.search(scope) and (CHOSEN.search(scope) or self.valued(scope)):
            return self.object.spans(scope)
        if self.mode == PHRASE:
            return [(m.start(), m.end()) for m in self.phrase.finditer(scope)]
        found = [m.span() for p in self._anchors for m in p.finditer(scope)]
        found += [m.span() for m in WORD_TOKEN.finditer(scope) if stem(m.group(0)) in self.stems]
        return [(min(a for a, _ in found), max(b for _, b in found))] if found else []

    def blank(self, scope: str) -> str:
        """`scope` without the key (its first occurrence; a loose match: each of its parts)."""
        i = scope.find(self.text)
        if i >= 0:
            return scope[:i] + " " + scope[i + len(self.text):]
        if self.mode == PHRASE:
            m = self.phrase.search(scope)
            return scope if m is None else scope[:m.start()] + " " + scope[m.end():]
        for p in self._anchors:
            scope = p.sub(" ", scope, count=1)
        stems = self.stems
        if any(s in NEGATORS for s in stems):
            stems = (*stems, *NEGATORS)      # the key's negation, however it is said (`held`)
        return WORD_TOKEN.sub(lambda m: " " if stem(m.group(0)) in stems else m.group(0), scope)


def elided(option: Key, chosen: Iterable[Key]) -> Key | None:
    """A rejected option that shares its head noun with the choice, as a contrast names it, by what sets it apart
    ('cursor pagination (not offset)', 'advisory locks, never Redis'): read only where it is set against the choice,
    never as the option proposed again ('offset' alone is no pagination)."""
    if option.anchors or len(option.words) < 2:
        return None
    for c in chosen:
        c = c.object or c
        if c.stems and c.stems[-1] == option.stems[-1] and c.stems[:-1] != option.stems[:-1]:
            return Key(" ".join(option.words[:-1]), PHRASE)
    return None


def _spaces(m: re.Match[str]) -> str:
    """A match blanked to as many spaces, so every offset after it stays where it was."""
    return " " * len(m.group(0))


def _whole(scope: str, text: str) -> bool:
    """Some occurrence of `text` in `scope` stands as whole words: 'fix' is not in 'fixé' nor in 'prefix'
    (a key's word ends at '_', as in 'squash_merge', where an id's token does not)."""
    return next(iter(spans(scope, text, str.isalnum)), None) is not None


def probes(*keys: "Key") -> tuple[str, ...]:
    """What a `KeyIndex` looks a key up by: a word any text that holds the key holds the start of — its
    first anchor, else its content words' stems (each, when one of them may be missing)."""
    out: list[str] = []
    for k in keys:
        if k.object is not None:
            k = k.object            # a decision's choice may be worded with another verb: looked up by what it chose
        if k.anchors and (QUANTITY.match(k.anchors[0]) or NUMBER.match(k.anchors[0])):
            out.extend(_anchor_cores(k.anchors[0]))     # a number in digits or in words
        elif k.anchors:
            out.append(_tail(k.anchors[0]) or k.anchors[0])
        elif k.stems:
            # a word that may be said in other words is no probe (`Key.reworded`): the key's other words are
            plain = [x for x, s in zip(k.looks, k.stems) if s not in EQUIVALENTS] if k.reworded else list(k.looks)
            if not plain:       # every word may be said otherwise ('without asking'): its other keys find it
                plain = list(k.looks)
            out.extend(plain if k.slack or len(plain) < len(k.stems) else plain[:1])
        else:
            out.append(k.text)
    return tuple(out)


def held(scope: str, key: "Key | str", stems: frozenset[str] | None = None) -> bool:
    return key.held(scope, stems) if isinstance(key, Key) else key in scope


def key_spans(text: str, key: "Key | str") -> list[tuple[int, int]]:
    """Where `key` stands in `text`: a Key as it reads (`Key.spans`), a plain string verbatim."""
    return key.spans(text) if isinstance(key, Key) else [m.span() for m in re.finditer(re.escape(key), text)]


def together(unit: Unit, keys: "tuple[Key | str, ...]") -> bool:
    """All keys within one unit (the heading counts for a bullet)."""
    scope = unit.scope
    return bool(keys) and all(held(scope, k, unit.stems) for k in keys)


def without(text: str, part: "str | Key") -> str:
    """`text` with the first occurrence of `part` blanked, so markers inside a quote do not count."""
    if isinstance(part, Key):
        return part.blank(text)
    i = text.find(part)
    return text if i < 0 else text[:i] + " " + text[i + len(part):]
