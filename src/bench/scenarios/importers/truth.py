"""The truth an importer derives from a real session (DESIGN §2, §6): what a good memory of it keeps.

- **mission**: what the first substantive user message asks for — the request of a prompt file it points
  to and the agent read, else the title of the task it quotes (an issue or PR description), else its first
  sentence that makes a request; keys are content words of that one sentence.
  A request that only asks for help with a thing ("I need some help with my travel plans") is a preamble: the
  request after it is the mission; one that names nothing of its own (`_generic`) gives way to the first later
  request that says which work.
- **the user's later tasks**: one workstream whose items are the later messages' requests for a piece of work
  (ACTION), each done where a tool result shows its work succeeded, withdrawn where the user calls it off
  (`tasks_workstream`): what a memory must keep is the task in hand,
  not every task ever asked. An item's id is a name the agent's messages can write (its identifier, a short run of its
  words); its `task` is the work as the message asks it, the verb with its object (`_verb_phrase`). A request that does not say it adds work (ADDITIVE) and answers the agent's question
  or names what the user said before clarifies the task in hand: no task.
- **constraints** (also those of the prompt file the user pointed to): the user's own sentences that carry
  a constraint cue (a ban, a must, a preference, an authorization, a reporting rule; `CUES`) whose role makes it a
  rule (`_holds`: not a permission of free choice, means or consent, not a question asking for information, not an
  elided "need to", not a negated obligation, not advice: a list under a heading naming tips or notes, a sentence
  that recommends; `advice`); one item per requirement (`distinct`); a choice given in answer to the agent that
  a later one replaces is a one-off, left out (`_replaced`). The quote is the cue-bearing sentence,
  verbatim; keys are identifiers and content words of the clause holding the cue, never stop or
  filler words. Harness-made text, quoted blocks, code and pasted terminal lines are not the
  user's sentences (bench/text.py).
- **facts**: the artifact trail, from tool calls and their results — each file created or edited
  (its last edit) and each call whose result reports a failure. A fact's source is the tool
  result, and its keys are taken from the one line (sentence) of the result that reports it: the
  path or identifier as it appears there plus a descriptive phrase of at least two ordinary words
  from the same line ("has been updated", "File created successfully", "No such file or
  directory", the error's message), so a bag of identifiers never satisfies it. A result with no
  such line gives no fact. A fact is about the state the session ends in: a file deleted afterwards, or a missing
  path created afterwards, gives none, nor does an error the same command later gets past (`_signature`), a failed
  lookup of a path never named again (`_guess`) or an edit result whose line names no change ("(1998 lines total)").
  At most `MAX_FACTS` (edits at most `MAX_EDITS`), the most recent.

No key is a word the system prompt holds (the validator warns about such keys: the prompt is rebuilt
for every request). A constraint whose content words are all the system prompt's keeps only its
verbatim quote, a mission only its text; a constraint the system prompt repeats is left out.

Everything here reads events only; it never changes them.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from bench import units as U
from bench.text import (QUOTE_CHARS, TASK_BLOCK, first_sentence, normalize, own_sentences, stop_word, strip_harness, substantive,
                        task_title)

MAX_FACTS, MAX_EDITS = 12, 8
MAX_CONSTRAINTS_PER_MESSAGE = 6
MAX_TASKS = 8   # later tasks (missions m2 ...), the most recent
# How sure a constraint of each kind is: a ban or a permission is rarely anything else; "should", "need to",
# "I want" often describe rather than rule.
CONFIDENCE = {"ban": 0.85, "authorization": 0.8, "reporting": 0.75, "preference": 0.65, "must": 0.6}

# Words before a cue that make it the user's own task ("I need to", "I should have"), not a rule
# for the agent.
FIRST_PERSON = re.compile(r"\bi(?:['’](?:m|ll|ve|d)| am| will| have| would)?(?:\s+\w+)?\s*$", re.I)
# "should be" / "must have" after anything but you/we states how things are, not a rule.
STATEMENT = re.compile(r"^\s*(?:be|have|been)\b", re.I)
# Verbs that name a piece of work: what a request asks done ("add", "book"); after "I want to" the user's own task,
# not how it is to be done. One list, read by REQUEST, ACTION and OWN_TASK.
WORK_VERBS = (r"add|fix|implement|make|create|write|build|update|change|refactor|remove|delete|rename|review|migrate|port|find|"
              r"investigate|debug|set up|configure|install|run|test|deploy|move|convert|improve|optimi[sz]e|support|replace|"
              r"upgrade|clean|solve|resolve|cancel|book|modify|adjust|shift|switch|reschedule|rebook|exchange")
OWN_TASK = re.compile(rf"\s+(?:also\s+)?to\s+(?:{WORK_VERBS}|know|ask|check|get)\b", re.I)
# A later request whose work is done to something said before ("book that flight", "move it to the 6th") depends on
# it: not a task of its own. Only the verb's object counts (`_dependent`): "upgrade me to business for that segment"
# asks for new work.
DEPENDENT = re.compile(r"\b(?:it|them)\b|\b(?:that|this|those|these)\s+(?!(?:is|are|was|were|will|would)\b)[a-z]", re.I)
# "you don't have to modify the tests", "you need not": an obligation negated, so no rule at all (neither a must nor
# a ban: the negation lifts the duty, it does not forbid the act).
NO_NEED = re.compile(r"\b(?:don'?t|do not|doesn'?t|does not|never)\s*$", re.I)
RULE_SUBJECT = re.compile(r"\b(?:you|we)\s*$", re.I)

CUES = (  # (kind, pattern); the earliest cue in a sentence decides, ties go to the kind listed first
    ("ban", re.compile(
        r"^\W*(?:(?:also|and|but|so|just|and also),?\s+)?(?:please\s+)?(?:(?:don'?t|do not)(?!\s+(?:need|have)\s+to\b)|never|stop|"
        r"avoid)\b|"
        r"\b(?:you|we)\s+(?:must not|mustn'?t|should not|shouldn'?t|may not|can'?t|cannot|(?:don'?t|do not)(?!\s+need\b)"
        r"(?!\s+have\s+to\b)|never|"
        r"are not allowed to|aren'?t allowed to)\b|\b(?:not allowed|no longer|under no circumstances)\b|"
        r"\bplease (?:don'?t|do not|never)\b|\bmake sure (?:you )?(?:don'?t|do not|never|not)\b|"
        r"\bwithout (?:asking|checking with) me\b", re.I)),
    ("authorization", re.compile(
        r"(?<!\bif )\b(?:you may|you can|you're allowed|you are allowed|feel free|allowed to|(?:ok|okay|fine) (?:for you )?to|"
        r"permission|authori[sz]e|go ahead and)\b", re.I)),
    ("reporting", re.compile(
        r"\b(?:let me know|tell me|report|ping me|notify me|come to me|ask me|check with me|"
        r"keep me (?:posted|updated|informed)|update me)\b", re.I)),
    ("preference", re.compile(
        r"\b(?:prefer|preferably|i'?d like|i would like|i'?d rather|i would rather|rather than|instead of|"
        r"i want|i don'?t want|i do not want|i'?m (?:fine|ok|okay) with|i am (?:fine|ok|okay) with|"
        r"i'?m willing to|i am willing to|i don'?t care about|as long as|(?:i|we) (?:don'?t|do not) need(?!\s+to\b))\b", re.I)),
    ("must", re.compile(
        r"\b(?:must|make sure|be sure to|ensure|always|need to|needs to|have to|has to|should|remember to|"
        r"it'?s important|is required|are required|required to)\b|^\W*only\b|\b(?:you|we) (?:can|may|should) only\b|"
        r"\bonly (?:use|touch|change|edit|modify|run|commit|merge|push|work|ask|come|report|if|when)\b|"
        r"\bplease (?:use|keep|follow|stick to|leave|stay|write|name|put)\b", re.I)),
)
# A permission of free choice ("any command you want"), one that only says how to do something ("by running
# submit") and a consent ("go ahead and cancel it", any permission given in reply to the agent's question) grant
# nothing a memory must keep, unless a limit bounds them ("but never push", "only on staging", "once CI is green").
LIMIT = re.compile(r"\b(?:only|but|except|unless|as long as|provided|so long as|without|until|before|after|when|whenever|once|"
                   r"never|not|no)\b|n't\b", re.I)
FREE_CHOICE = re.compile(r"\b(?:any|anything|whatever|whichever|all)\b|\b(?:you|that you)\s+(?:want|need|like|wish)\b", re.I)
MEANS = re.compile(r"\bby\s+(?:\w+\s+)?\w+ing\b", re.I)
CHOICE = re.compile(r"^\s*(?:to\s+)?(?:go with|take|choose|pick|select|opt for|settle on)\b", re.I)
# A reporting cue is a standing rule when a condition says when to report ("let me know when CI is green", "ping me
# before touching X"); followed by what to tell ("let me know the departure time", "how much is left") it is a
# one-off question.
CONDITION = re.compile(r"^\s*(?:\w+\s+){0,1}(?:when|whenever|if|before|after|once|as soon as|in case|each time|every time|"
                       r"any time|anytime|should|unless|first)\b", re.I)
# A must cue with nothing after it is elided: "edit all the files you need to and run ..." says nothing is required.
ELIDED = re.compile(r"^\s*(?:[,.;:!?)]|and\b|or\b|$)", re.I)
# A request phrased "please <verb>" stays an instruction inside a question ("Could you please use card 1234?", "Could
# you please make sure the seats are together?").
POLITE = re.compile(r"^please\s", re.I)


def _is_question(sentence: str) -> bool:
    return sentence.rstrip().endswith("?")


def _holds(kind: str, sentence: str, m: re.Match[str], reply: bool) -> bool:
    """Whether a cue of `kind` at `m` makes `sentence` a standing rule (see LIMIT, CONDITION, ELIDED)."""
    after = sentence[m.end():]
    if kind == "authorization":   # a permission of free choice, of means or of consent holds only with a limit
        consent = reply or m.group().lower().startswith("go ahead")
        return bool(LIMIT.search(after)) or not (FREE_CHOICE.search(after) or MEANS.search(after) or consent)
    if kind == "reporting":
        return CONDITION.match(after) is not None and not _is_question(sentence)
    if reply and kind != "ban" and APPROVAL.search(after) and not LIMIT.search(after):
        return False   # "Yes, I'd like to proceed with the upgrade.": consent to what the agent proposed
    if kind == "must":
        if ELIDED.match(after):
            return False
        polite = POLITE.match(m.group()) or re.search(r"\bplease\s+$", sentence[:m.start()], re.I)
        return not _is_question(sentence) or polite is not None
    if kind == "preference":   # "I'd like to go with HAT052": a one-off choice among what was offered
        return not _is_question(sentence) and not CHOICE.match(after)
    return True


# Words of the cues themselves: they say what kind of rule it is, not what it is about.
CUE_WORDS = {"prefer", "preferably", "rather", "instead", "permission", "authorize", "authorise", "allowed", "report",
             "ensure", "required", "important", "remember", "sure", "free", "willing", "care", "avoid", "stop", "never",
             "always", "notify", "ping", "posted", "updated", "informed", "asking", "checking"}
REQUEST = re.compile(
    rf"^\W*(?:(?:also|and|now|then|next|finally|ok|okay)[,:]?\s+)?(?:please\s+)?(?:{WORK_VERBS})\b|\b(?:can|could|would) you\b|"
    r"\b(?:i|we) (?:need|want|would like|'d like)\b|\bi'd like\b|\bhelp me\b|\byour task\b|\bplease\b", re.I)
# A later message's task asks for a piece of work: an imperative, "can you <verb>", "I'd like to <verb>". "I need the
# fastest return trip" or "please proceed" says what the task in hand is to be, or approves it: no task of its own.
ACTION = re.compile(
    rf"^\W*(?:(?:also|and|now|then|next|finally|ok|okay|so|alright)[,:]?\s+)?(?:please\s+|let'?s\s+(?:also\s+)?)?"
    rf"(?:{WORK_VERBS})\b|"
    rf"\b(?:can|could|would|will) you\s+(?:also\s+|please\s+)*(?:help me\s+)?(?:{WORK_VERBS})\b|"
    rf"\b(?:i|we)(?:'d| would)?\s+(?:also\s+)?(?:like|want|wanted|need)\s+(?:you\s+)?to\s+(?:also\s+)?(?:{WORK_VERBS})\b",
    re.I)
# A later task that adds to what was asked says so ("also", "now ..."). One that does not is new only when it names
# nothing the user said before and does not answer the agent's question: otherwise it clarifies the task in hand
# ("I want to cancel the reservations IFOYYZ and NQNU5R" after "help me cancel a couple of reservations").
ADDITIVE = re.compile(r"\b(?:also|too|as well|additionally|in addition|another|one more|move on to)\b|"
                      r"^\W*(?:\w+,\s*)?(?:now|next|then)\b", re.I)
# A request that asks only for help or assistance with a thing, naming no work ("I need some help with my travel
# plans"), is a preamble: the task is the request that follows it.
HELP = re.compile(r"\b(?:help|assist|assistance)\b", re.I)
GERUND = re.compile(r"\b(?:with|in)\s+\w{3,}ing\b", re.I)


WORK = re.compile(rf"\b(?:{WORK_VERBS})\b", re.I)


def _work_verb(text: str) -> tuple[int, int] | None:
    """Where the verb of the work a request asks for stands in `text`: the last work verb of its ACTION ("I'd like to
    also change ..."), or None when it asks for none. Its object, its phrase and the task's name start there."""
    asked = ACTION.search(text)
    verbs = list(WORK.finditer(asked.group())) if asked else []
    return (asked.start() + verbs[-1].start(), asked.start() + verbs[-1].end()) if verbs else None


def _dependent(sentence: str) -> bool:
    """The work a request asks for is done to something said before: a pronoun or "that / this ..." in the four words
    after its verb (its object: "cancel all of these reservations"), not further on."""
    verb = _work_verb(sentence)
    if verb is None:
        return DEPENDENT.search(sentence) is not None
    return DEPENDENT.search(" ".join(sentence[verb[1]:].split()[:4])) is not None


def preamble(sentence: str) -> bool:
    return bool(HELP.search(sentence)) and not GERUND.search(sentence) and not WORK.search(sentence)


CLAUSE = U.SENTENCE   # the units' own sentence split, so keys chosen in one clause co-occur in one unit


def cue(sentence: str, reply: bool = False) -> tuple[str, re.Match[str]] | None:
    """The constraint kind of a sentence and where its cue is (the earliest cue that makes it a rule; on a tie, the
    first kind in CUES), or None when it carries none: a permission without a limit, a question asking for
    information, an elided "you need to" (`_holds`). `reply`: the sentence answers the agent's question."""
    best: tuple[int, int, str, re.Match[str]] | None = None
    for rank, (kind, pattern) in enumerate(CUES):
        for m in pattern.finditer(sentence):
            before = sentence[:m.start()]
            if kind == "must" and FIRST_PERSON.search(before):
                continue   # "I need to change my flight": the user's own request, not a rule
            if kind == "must" and NO_NEED.search(before):
                continue   # "you don't need to install packages": no rule at all
            if kind == "preference" and OWN_TASK.match(sentence[m.end():]):
                continue   # "I want to change my flight": the user's own task, not how it is to be done
            if kind == "preference" and ACTION.search(before):
                continue   # "I'd also like to change it to a nonstop one, preferably.": the request is a task
            if (kind == "must" and m.group().lower() in ("should", "must") and STATEMENT.match(sentence[m.end():])
                    and not RULE_SUBJECT.search(before)):
                continue   # "my profile should be under ...": a statement, not a rule
            if not _holds(kind, sentence, m, reply):
                continue
            if best is None or (m.start(), rank) < best[:2]:
                best = (m.start(), rank, kind, m)
            break
    return (best[2], best[3]) if best else None


def kind_of(sentence: str) -> str:
    found = cue(sentence)
    return found[0] if found else "must"


# ---------------------------------------------------------------- keys


TRIM = ".,;:!?()[]{}\"'`*<>“”‘’"


def _tokens(text: str) -> list[tuple[int, int, str]]:
    """(start, end, word) for each whitespace-separated token, its surrounding punctuation trimmed."""
    out = []
    for m in re.finditer(r"\S+", text):
        raw = m.group()
        lead = len(raw) - len(raw.lstrip(TRIM))
        word = raw.strip(TRIM)
        if word.endswith("'s") or word.endswith("’s"):
            word = word[:-2]
        if word:
            out.append((m.start() + lead, m.start() + lead + len(word), word))
    return out


def _shape(word: str, first: bool) -> int:
    """How much a token looks like an identifier: 3 path, 2 code-like, 1 number / acronym / name, 0 a word."""
    if not re.search(r"[A-Za-z0-9]", word) or NUMBER.match(word) and not word.isdigit():
        return 0                            # also "0.12s", "3.5%"
    if "/" in word or re.search(r"\w\.[A-Za-z]{1,5}$", word) and not re.fullmatch(r"(?:[a-z]\.){1,3}[a-z]?", word.lower()):
        return 3
    if re.search(r"[A-Za-z][0-9_#@:]|[0-9_#@:][A-Za-z]|[a-z][A-Z]|\w-\w", word):
        return 2
    if word.isdigit():
        return 1 if len(word) >= 3 else 0   # "7447" identifies; "11" matches anywhere
    if word.isupper() and len(word) >= 2 or word[:1].isupper() and not first:
        return 1
    return 0


def _word(word: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z][A-Za-z'’-]*", word)) and len(word) >= 3


def keys_of(sentence: str, most: int = 3, after: int | None = None, skip=lambda key: False) -> list[str]:
    """Identifiers (the most identifier-like two) and content words of one clause: never stop or filler
    words, never the cue's own words, never a word `skip` rejects (one the system prompt holds).
    `after`: the cue's end, whose next content word (the thing banned, allowed ...) comes first among
    the words, then the longest."""
    idents, words = [], []
    letters = re.findall(r"[A-Za-z]", sentence)
    shouting = len(letters) > 10 and sum(c.isupper() for c in letters) > 0.6 * len(letters)
    for i, (start, _, w) in enumerate(_tokens(sentence)):
        if stop_word(w) or w.casefold() in CUE_WORDS or len(w) < 2 or skip(w):
            continue
        shape = _shape(w.lower() if shouting and w.isalpha() else w, i == 0)
        if shape:
            idents.append((-shape, start, w))
        elif _word(w):
            words.append((start, w))
    chosen = [w for *_, w in sorted(idents)[:2]]
    if after is not None:
        nxt = next((w for start, w in words if start >= after), None)
        if nxt:
            chosen.append(nxt)
    chosen += [w for _, w in sorted(words, key=lambda x: (-len(x[1]), x[0]))]
    out: list[str] = []
    for w in chosen:
        n = normalize(w)
        if not any(n in normalize(o) or normalize(o) in n for o in out):
            out.append(w)
    return out[:most]


# ---------------------------------------------------------------- constraints and mission


def _quote(sentence: str, at: int) -> tuple[str, int]:
    """A quote of at most QUOTE_CHARS around position `at`, cut at word boundaries; (quote, offset)."""
    if len(sentence) <= QUOTE_CHARS:
        return sentence, 0
    start = max(0, at - QUOTE_CHARS // 3)
    if start:
        space = sentence.find(" ", start)
        start = space + 1 if 0 <= space < at else start
    piece = sentence[start:start + QUOTE_CHARS]
    if start + QUOTE_CHARS < len(sentence):
        piece = piece.rsplit(None, 1)[0]
    return piece.strip(), start + (len(piece) - len(piece.lstrip()))


def _clause(text: str, at: int) -> tuple[str, int]:
    """The clause (unit sentence) of `text` holding position `at`; (clause, its offset)."""
    pos = 0
    for part in CLAUSE.split(text):
        i = text.find(part, pos)
        if i <= at < i + len(part) + 1:
            return part, i
        pos = i + len(part)
    return text, 0


def _fit(text: str, keys: list[str], clause: str | None = None, skip=lambda key: False) -> list[str]:
    """Drop trailing keys until the rest co-occur in one unit of `text`. With `clause`, a set of
    identifiers only (which a bag of identifiers from dropped text would hold) gets the clause's
    first ordinary word in front, or is given up (the item then counts by its quote or text only)."""
    keys = list(keys)
    while keys and not U.cooccur(text, keys):
        keys.pop()
    if clause is not None and keys and not any(U.ordinary(k) for k in keys):
        word = next((w for w in keys_of(clause, most=20, skip=skip) if U.ordinary(w)), None)
        keys = _fit(text, [word, *keys]) if word else []
        if keys and not any(U.ordinary(k) for k in keys):
            keys = []
    return keys


# In a file of instructions every sentence is one: a rule needs no cue there when it is said as an imperative
# ("Keep the v1 client importable") or of every one of something ("Each service keeps its public API unchanged").
IMPERATIVE = re.compile(rf"^\W*(?:please\s+)?(?:{WORK_VERBS}|keep|leave|use|follow|stay|put|name|document|commit|push|"
                        r"stick|target)\b", re.I)
INVARIANT = re.compile(r"^\W*(?:each|every|all|no|none of|nothing|neither)\b", re.I)


# A heading governs the list under it: what a heading names as tips, notes or examples is advice, not a standing rule
# ("IMPORTANT TIPS:" then "1. Always start by ..."). A heading is a line of its own, a markdown heading or a short
# line ending in a colon; it governs the lines after it up to the next heading. A sentence that recommends ("we
# recommend that you ...") is advice wherever it stands.
HEADING = re.compile(r"^\s*(?:#{1,6}\s+(?P<md>.+?)|(?:\*\*)?(?P<colon>[^.!?:\n]{2,60}?)(?:\*\*)?:(?:\*\*)?)\s*$")
# A label that opens a line, before a colon, with the line's text after it: it says what that text is, as a heading does.
LABEL = re.compile(r"^\s*(?:\*\*)?(?P<label>[^.!?:\n]{2,60}?)(?:\*\*)?:(?:\*\*)?\s+(?P<rest>\S.*)$")
ADVICE_HEAD = re.compile(r"\b(?:tips?|hints?|recommendations?|suggestions?|notes?|examples?|advice|best practices)\b", re.I)
RECOMMEND = re.compile(r"\b(?:(?:we|i)\s+(?:would\s+|'d\s+)?(?:recommend|suggest|advise)|(?:is|are)\s+(?:recommended|"
                       r"suggested|advised))\b", re.I)


def advice(text: str) -> set[str]:
    """The own sentences of `text` that a heading names as advice governs (HEADING, ADVICE_HEAD); a label before a
    colon governs the rest of its line the same way ("NOTE ABOUT THE EDIT COMMAND: Indentation really matters!")."""
    governed, under = [], False
    for line in strip_harness(text).splitlines():
        head = HEADING.match(line)
        label = None if head else LABEL.match(line)
        if head:
            under = ADVICE_HEAD.search(head.group("md") or head.group("colon")) is not None
        elif under:
            governed.append(line)
        elif label and ADVICE_HEAD.search(label.group("label")):
            governed.append(line)
    return set(own_sentences("\n".join(governed))) if governed else set()


def constraints_of(ev: dict[str, Any], in_system=lambda term: False, reply: bool = False,
                   instructions: bool = False) -> list[dict[str, Any]]:
    """The cue-bearing sentences of one user message (at most MAX_CONSTRAINTS_PER_MESSAGE); a sentence
    the system prompt repeats is left out (it could never be lost). `reply`: the message answers the agent's
    question (a permission in it is consent, `cue`). `instructions`: a line of a prompt file, whose imperative and
    invariant sentences are rules too (IMPERATIVE, INVARIANT), a little less sure."""
    out = []
    tips = advice(ev["text"])
    for sentence in own_sentences(ev["text"]):
        if sentence in tips or RECOMMEND.search(sentence):
            continue
        found = cue(sentence, reply)
        if found is None and instructions and not _is_question(sentence):
            said = IMPERATIVE.match(sentence) or INVARIANT.match(sentence)
            found = ("must", said) if said else None
        if found is None:
            continue
        kind, m = found
        quote, off = _quote(sentence, m.start())
        if not quote or m.start() < off or m.end() > off + len(quote) or in_system(quote):
            continue
        clause, coff = _clause(quote, m.start() - off)
        after = max(0, m.end() - off - coff)
        keys = _fit(quote, keys_of(clause, after=after, skip=in_system), clause, in_system)
        sure = (CONFIDENCE[kind] - (0.15 if quote != sentence.strip() else 0) - (0.15 if not keys else 0)
                - (0.1 if cue(sentence, reply) is None else 0))
        item = {"id": f"k-{ev['id']}-{len(out) + 1}", "from": ev["id"], "kind": kind, "quote": quote,
                "confidence": round(sure, 2)}
        if keys:   # none when every content word is the system prompt's: then only the verbatim quote counts
            item["keys"] = keys
        out.append(item)
        if len(out) >= MAX_CONSTRAINTS_PER_MESSAGE:
            break
    return out


def _content(text: str) -> set[str]:
    """The stems of a text's content words and identifiers: what two items must share to say the same thing."""
    return {U.stem(w.lower()) if _word(w) else normalize(w) for w in keys_of(text, most=50)}


def distinct(items: list[dict[str, Any]], said=lambda x: x.get("quote") or x.get("text") or "") -> list[dict[str, Any]]:
    """`items` without restatements: an item whose content words all occur in one kept before it says it again
    ("you can write a python script and run it" after "... but you can write scripts and run them")."""
    kept: list[tuple[dict[str, Any], set[str]]] = []
    for x in items:
        words = _content(said(x))
        if words and any(words <= seen for _, seen in kept):
            continue
        kept.append((x, words))
    return [x for x, _ in kept]


PREPOSITIONS = re.compile(r"^(?:for|to|with|on|in|at|by|from|about|because|as|so|if|when|since|due)$", re.I)


def _acts_on(sentence: str) -> bool:
    """The work the sentence asks for has an object of its own right after its verb ("cancel flights that are more
    than 3 hours long"), not only a reason or a place ("cancel for personal reasons")."""
    verb = _work_verb(sentence)
    after = sentence[verb[1]:].split() if verb else []
    return bool(after) and not PREPOSITIONS.match(after[0].strip(",.;:!?"))


def mission_of(ev: dict[str, Any], in_system=lambda term: False, id: str = "m1",
               later: bool = False, specific: bool = False) -> dict[str, Any] | None:
    """The first request: the quoted task's title, else the first own sentence that asks for
    something, else the first sentence. `later`: a later message's task, only a sentence that asks for
    something and carries no constraint cue (that one is a constraint). `specific`: the first such sentence that
    names work of its own (not `_generic`, or acting on an object of its own, `_acts_on`: "I want to make changes to
    all my reservations." gives way to the sentence after it that says which)."""
    if later and specific:
        for s in own_sentences(ev["text"]):
            m = mission_of({**ev, "text": s}, in_system, id, later=True)
            if m and _acts_on(s) and U.cooccur(ev["text"], m["keys"]):
                return m
        return None
    text = ev["text"]
    title = None if later else task_title(text)
    sentences = own_sentences(text)
    if later:
        request = next((s for s in sentences if ACTION.search(s) and not cue(s)
                        and (ADDITIVE.search(s) or not _dependent(s))), None)   # "also ... it" adds work
    else:
        asks = [s for s in sentences if REQUEST.search(s)]
        request = title or next((s for s in asks if not preamble(s)), asks[0] if asks else None)
    sure = 0.9 if title else 0.8 if request else 0.4
    if request is None and not later:
        request = first_sentence(text)
    if not request:
        return None
    clause, _ = _clause(request, 0)
    if later:   # the task is the verb phrase of the work asked for: "add one checked bag", not "I remembered that"
        verb = _work_verb(clause)
        clause = clause[verb[0]:] if verb else clause
    keys = _fit(text, keys_of(clause, skip=in_system), clause, in_system)
    if later and keys:
        held = [u for u in U.units(text) if U.together(u, U.keys_of(keys))]
        if held and all(U.ended(u.scope) or U.goal_done(u.scope) for u in held):
            return None   # "once it is cancelled, can you book ...": said as done, never in force
        sure = 0.6   # a later task may be a passing remark; a person should look at it
    if keys:
        problem = _problem(text) if title else None   # a title names the topic; the issue says what is wrong
        said = f"{request} — {problem}" if problem and normalize(problem) not in normalize(request) else request
        return {"id": id, "from": ev["id"], "text": said, "keys": keys, "confidence": sure}
    if later:
        return None   # a later task without words of its own to keep is not worth scoring
    # every content word is the system prompt's: the text itself is the key, so it must be one unit
    return {"id": id, "from": ev["id"], "text": clause.strip(), "confidence": 0.5} if U.cooccur(text, [clause]) else None


# The sentence of an issue that says what is wrong: what is observed against what is expected ("Output is `344`, but
# `345` is correct", "expected 3 pages but got 2", "returns None instead of raising").
CONTRAST = re.compile(r"\bbut\b.*\b(?:correct|expected|should|supposed)\b|\bexpected\b.*\b(?:but|got|actual|instead)\b|"
                      r"\binstead of\b", re.I)


def _problem(text: str) -> str | None:
    """The sentence of the task a message quotes that says what is wrong (CONTRAST), if one does."""
    m = TASK_BLOCK.search(strip_harness(text))
    body = (m.group(2) or m.group(3) or "") if m else ""
    return next((s for s in own_sentences(body) if CONTRAST.search(s)), None)


# A file a message points the agent to ("Read TASK.md and do what it says", "@prompts/fix.md"): a name with a
# text-like extension, as the message writes it.
PROMPT_FILE = re.compile(r"(?<![\w/.-])@?((?:[\w.-]+/)*[\w.-]+\.(?:md|txt|rst|org|markdown|prompt))\b", re.I)
NUMBERED = re.compile(r"^\s*\d+[\t→]", re.M)    # a read tool's line numbers


def prompt_file(ev: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The tool result that shows a file of instructions the message points to ("Read TASK.md and do what it
    says", "@prompts/fix.md"), read by the agent before the user spoke again; None when there is none."""
    refs = [m.group(1) for m in PROMPT_FILE.finditer(strip_harness(ev["text"]))]
    if not refs:
        return None
    calls = {c["id"]: c for e in events for c in e.get("calls") or ()}
    start = next(i for i, e in enumerate(events) if e is ev)
    for e in events[start + 1:]:
        if e["role"] == "user" and substantive(e["text"]):
            return None                                  # the user spoke again before the agent read it
        call = calls.get(e.get("call") or "") if e["role"] == "tool" else None
        if call is None or not e["text"].strip():
            continue
        args = " ".join(str(v) for v in (call.get("args") or {}).values() if isinstance(v, (str, list)))
        if any(ref.lstrip("./") in args for ref in refs) and not _failure(e["text"], _command(call), None):
            return e
    return None


def _file_lines(read: dict[str, Any]) -> list[str]:
    """The lines of the file's own text: a read tool's line numbers and the file's headings left out, so a
    sentence never runs across a numbered line."""
    out = []
    for raw in read["text"].splitlines():
        num = NUMBERED.match(raw)
        body = raw[num.end():] if num else raw
        if body.strip() and not body.lstrip().startswith("#"):
            out.append(body)
    return out


def file_mission(read: dict[str, Any], in_system) -> dict[str, Any] | None:
    """The mission of a message that points to a file of instructions the agent then read: the request of that
    file (its first sentence that asks for something), from the tool result that shows it. The message itself
    ("Read TASK.md and do what it says. Really think hard about this.") says where the task is, not what it is."""
    for line in _file_lines(read):
        request = next((x for x in own_sentences(line) if REQUEST.search(x)), None)
        if request is None:
            continue
        clause, _ = _clause(request, 0)
        keys = _fit(read["text"], keys_of(clause, skip=in_system), clause, in_system)
        if keys:
            return {"id": "m1", "from": read["id"], "text": request.strip(), "keys": keys, "confidence": 0.75}
        return None
    return None


def file_constraints(read: dict[str, Any], in_system, mission: str = "") -> list[dict[str, Any]]:
    """The requirements of the prompt file the user pointed to, as constraints from the tool result that shows it
    (each line read as an instruction: `constraints_of(instructions=True)`), ids `k-<result>-<n>`; at most
    MAX_CONSTRAINTS_PER_MESSAGE x 2; the file's request (`mission`) is the mission, not a rule. A little less sure
    than the user's own words: a file holds more boilerplate than a message."""
    out: list[dict[str, Any]] = []
    for line in _file_lines(read):
        for c in constraints_of({"id": read["id"], "text": line}, in_system, instructions=True):
            if (len(out) >= 2 * MAX_CONSTRAINTS_PER_MESSAGE or any(c["quote"] == o["quote"] for o in out)
                    or c["quote"].strip() == mission.strip()):
                continue
            out.append({**c, "id": f"k-{read['id']}-{len(out) + 1}", "confidence": round(c["confidence"] - 0.05, 2)})
    return out


# A later message that approves what the agent proposed ("Please go ahead with the update.", "Can you confirm that
# works?") is no task of its own unless it names something (a flight, a file): it answers the agent's question.
APPROVAL = re.compile(r"\b(?:go ahead|proceed|confirm|hold on|get back to you|connect me|that works|sounds good)\b", re.I)


# A tool whose name leads with one of these verbs only looks (find_flights, run_tests): a call to it changes nothing.
INQUIRY_VERBS = {"find", "review", "investigate", "debug", "test", "run"}
# A user's message that calls the work off ("I'll hold off on making any changes", "never mind", "don't make any
# changes"): every task not done by then is withdrawn, neither open nor done.
WITHDRAW = re.compile(r"\b(?:hold off|never ?mind|forget (?:it|about it)|(?:do not|don't|won't) (?:make|do|go ahead with|"
                      r"proceed with) (?:any|the|those|these)? ?(?:changes?|it|that|them)\b)", re.I)


def _writes(call: dict[str, Any]) -> bool:
    """A call that changes something: an edit, or a tool whose name leads with a verb of work (update_reservation,
    book_reservation) that is no inquiry."""
    verb = re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", str(call.get("tool", "")).strip())[0].lower()
    return _is_edit(call) or (bool(re.fullmatch(WORK_VERBS, verb)) and verb not in INQUIRY_VERBS)


def _succeeded(events: list[dict[str, Any]], calls: dict[str, Any], first: int, last: int,
               idents: list[str]) -> str | None:
    """Where the first tool result in events[first:last] that shows a write call succeeded (`_writes`, no failure
    reported; on the task's object when the task names one, an identifier in the call's arguments) is reported: the
    user's next turn, else that result. `calls`: the session's calls by id."""
    for at in range(first, last):
        e = events[at]
        call = _call_of(e, calls)
        if call is None or not _writes(call) or _failure(e["text"], _command(call), None):
            continue
        args = _args_text(call)
        if not idents or any(U.mentions(args, k) for k in idents):
            # finished once the agent has reported it: at the user's next turn, else here
            return next((x["id"] for x in events[at + 1:] if x["role"] == "user"), e["id"])
    return None


def tasks_workstream(tasks: list[dict[str, Any]], events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The user's later tasks as one workstream, in the order given (at most MAX_TASKS, the most recent). An item's
    name is the task's words as its message writes them (`_item_name`). Its status follows the session, not the
    talk: it is done at the first later tool result that shows a write call succeeded (`_succeeded`) — on its object,
    anywhere after it, when it names one (a reservation, a file), else before the next task; the user moving on or
    the agent saying so is no proof. A task the user calls off first (WITHDRAW) is withdrawn: `done` there with
    `withdrawn` set, neither open nor finished. Any other is open."""
    kept, seen = [], set()
    for t in tasks:
        if APPROVAL.search(t["text"]) and not any(_shape(k, False) >= 1 for k in t["keys"]):
            continue
        name = _item_name(t["text"], t["keys"])
        if name and normalize(name) not in seen:
            seen.add(normalize(name))
            kept.append((t, name))
    kept = kept[-MAX_TASKS:]
    if not kept:
        return None
    pos = {e["id"]: i for i, e in enumerate(events)}
    calls = {c["id"]: c for e in events for c in e.get("calls") or ()}
    items = []
    for k, (t, name) in enumerate(kept):
        start = pos[t["from"]] + 1
        idents = [x for x in t["keys"] if _shape(x, False) >= 2]
        end = len(events) if idents or k + 1 == len(kept) else pos[kept[k + 1][0]["from"]]
        item: dict[str, Any] = {"id": name, "from": t["from"], "task": _verb_phrase(t["text"]) or name,
                                "confidence": t["confidence"]}
        done = _succeeded(events, calls, start, end, idents)
        off = next((e["id"] for e in events[start:pos[done] if done else len(events)]
                    if e["role"] == "user" and any(WITHDRAW.search(x) for x in own_sentences(e["text"]))), None)
        if off:
            item.update(done=off, withdrawn=True)
        elif done:
            item["done"] = done
        items.append(item)
    return {"id": "w-tasks", "from": kept[0][0]["from"], "title": "the user's later tasks", "items": items}


# Where a task's verb phrase ends: the clause's end, a condition or a courtesy after it ("if possible", "please").
PHRASE_END = re.compile(r"[.;:!?]|,\s|\s(?:if|when|unless|once|please|so that|since|because)\b|\s+-+\s", re.I)


def _verb_phrase(text: str, most: int = 20) -> str | None:
    """A task's name: the verb phrase of the work asked for, the verb with its object as the message writes them
    ("change my ticket to business class and add 2 checked bags", not "ticket": the whole request); None when it is not a run of two to
    `most` words."""
    verb = _work_verb(text)
    if verb is None:
        return None
    start = verb[0]
    on = re.match(r"move on to\s+", text[start:], re.I)   # "let's move on to changing ...": the work is what follows
    start += on.end() if on else 0
    end = PHRASE_END.search(text, start)
    words = text[start:end.start() if end else len(text)].split()
    return " ".join(words) if 2 <= len(words) <= most else None


def _item_name(text: str, keys: list[str]) -> str | None:
    """A whole-token name of the task the agent's later messages can write: its identifier (a flight, a file) when
    a key is one; else the shortest run of its sentence from one key to another in at most five words, widened
    over the names around it ("New York to the West Coast"); else its first key."""
    low = normalize(text)
    idents = [k for k in keys if _shape(k, False) >= 2]
    if idents or not keys:   # the one the sentence names first: what it acts on, before where
        return min(idents, key=lambda k: low.find(normalize(k)) % (len(low) + 1)) if idents else None
    spans = sorted((m.start(), m.end()) for k in keys for m in [U.mention(k).search(low)] if m)
    best = None
    for i, (a, _) in enumerate(spans):
        for _, b in spans[i + 1:]:
            if len(low[a:b].split()) <= 5 and (best is None or b - a < best[1] - best[0]):
                best = (a, b)
    if best is None or len(low) != len(text):   # offsets of the user's spelling differ: the key as it is
        return keys[0]
    a, b = best
    while (m := re.search(r"(?:^|\s)([A-Z][\w'’-]*)\s+$", text[:a])):
        a = m.start(1)
    while (m := re.match(r"\s+([A-Z][\w'’-]*)", text[b:])):
        b += m.end()
    return text[a:b]


# ---------------------------------------------------------------- facts: the artifact trail

PATH_ARGS = ("path", "file_path", "filepath", "filename", "file_name", "file", "target_file", "notebook_path",
             "absolute_path", "target")
EDIT_TOOLS = {"edit", "write", "multiedit", "notebookedit", "create", "insert", "editfile", "writefile", "createfile",
              "applypatch", "patch", "replace", "strreplace", "appendfile", "writetofile", "replaceinfile", "searchreplace",
              "fileedit", "filewrite", "append", "appendtofile", "overwrite", "overwritefile", "createnewfile"}
EDITOR_TOOLS = {"strreplaceeditor", "strreplacebasededittool", "texteditor", "editor", "fileeditor", "oheditor",
                "texteditor20250124", "texteditor20250429", "strreplaceeditor20250124"}
EDIT_COMMANDS = {"create", "str_replace", "insert", "write", "append", "edit", "overwrite"}
# A shell command that only reads or lists: its output quotes files, so only the shell's own errors count.
VIEWING = re.compile(r"^\s*(?:cd \S+ && )?(?:cat|head|tail|less|more|grep|egrep|rg|ag|ack|find|ls|tree|wc|nl|awk|"
                     r"sed -n|git (?:show|log|diff|grep|blame|status)|echo|printf|file|stat|which|type)\b")
_DONE = (r"(?:created|updated|edited|modified|written|saved|replaced|inserted|appended|applied|overwritten|changed|"
         r"deleted|removed)")
STATUS = re.compile(rf"\b(?:(?:has|have|had) been|was|were|is|are|got)\s+(?:successfully\s+)?{_DONE}\b(?:\s+successfully)?|"
                    rf"\b(?:[A-Za-z]+\s+)?{_DONE}\s+successfully\b|\bsuccessfully\s+{_DONE}\b|"
                    rf"\b(?:Text|File|Files|Changes?|Edits?|Patch)\s+{_DONE}\b|\bApplied \d+ edits?\b", re.I)
SHELL_ERR = re.compile(r"\b(command not found|No such file or directory|Permission denied|cannot access|can't cd to|"
                       r"Not a directory|Is a directory|cannot open|cannot stat|syntax error|not recognized as)\b", re.I)
EXCEPTION = re.compile(r"^\s*(?:E\s+)?(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception))(?::\s*(\S.*))?\s*$")
COMPILER = re.compile(r"^\S+?:\d+(?::\d+)?:\s*(?:fatal )?error(?:\[\w+\])?:\s*(\S.*)$", re.I)
ERROR_LINE = re.compile(r"^\s*(?:Error|ERROR|error|fatal|FATAL|E|npm ERR!)(?:\[\w+\])?(?::|\s)\s*(\S.*)$")
TOOL_ERROR = re.compile(r"<tool_use_error>\s*(.*?)\s*(?:</tool_use_error>|$)")
EDIT_ERROR = re.compile(r"\b(CMake Error|Unable to locate|(?i:could not (?:find|load|open|resolve)))\b")
# The agent misusing its editing tool (a replacement that matched nothing, a missing parameter): a fact about the
# call, not about the work; such a result gives no fact.
MISUSE = re.compile(r"\b(No replacement was performed|did not appear verbatim|Multiple occurrences|is required for "
                    r"command|Invalid `?\w+`? parameter)\b")
TEST_FAILED = re.compile(r"^\s*(?:FAILED|FAIL)\b\s*(\S.*)?$")
TROUBLE = re.compile(r"\b(errors occurred|Segmentation fault|segfault|core dumped|timed out|Error \d+|failed with|"
                     r"(?:[Tt]ests?|[Bb]uild|[Cc]ompilation|[Ii]nstallation|[Cc]ommand) failed|"
                     r"Traceback \(most recent call last\))\b")
TEST_SUMMARY = re.compile(r"\b([1-9]\d* failed(?:,? \d+ (?:passed|errors?|skipped|warnings?|xfailed|xpassed|deselected|"
                          r"total))+)")
# (priority, pattern): a line that reports a failure; the pattern's last group, when set, is the message.
FAILURES = ((6, EXCEPTION), (5, COMPILER), (5, ERROR_LINE), (5, TOOL_ERROR), (5, SHELL_ERR), (4, EDIT_ERROR),
            (4, TEST_FAILED), (3, TROUBLE), (3, TEST_SUMMARY))
PHRASED = (SHELL_ERR, EDIT_ERROR, TROUBLE, TEST_SUMMARY)   # their match is the phrase itself
NUMBER = re.compile(r"^[-+]?\d[\d.,:]*(?:%|ms|s|m|h|kb|mb|gb|x)?$", re.I)   # also durations and sizes: not identifiers
NEGATIONS = re.compile(r"^(?:not|no|never|cannot|can't|won't|didn't|doesn't|don't|isn't|aren't|wasn't|couldn't|unable)$", re.I)
TRAILING = {"a", "an", "the", "and", "or", "but", "nor", "of", "to", "in", "on", "at", "by", "for", "with", "from", "into",
            "is", "are", "was", "were", "be", "been", "as", "that", "this", "if", "so", "than", "then", "when", "which"}
AUXILIARIES = {"could", "can", "does", "did", "do", "is", "are", "was", "were", "has", "have", "had", "will", "would",
               "should", "must", "may", "might"}
TOOL_ERROR_TAG = re.compile(r"</?tool_use_error>")
CONTENT_LINE = re.compile(r"^\s*\d+(?:[:\t|]|\s{2,})")   # numbered lines: a file's content, not a report
FIELD_PROGRAM = re.compile(r"^\s*[\w./-]+:\s")           # "bash: ", "make: ", "ls: " — the program, not the object


def _tool(call: dict[str, Any]) -> str:
    return re.sub(r"[^a-z0-9]", "", str(call.get("tool", "")).lower())


def _is_edit(call: dict[str, Any]) -> bool:
    tool, args = _tool(call), call.get("args") or {}
    command = args.get("command")
    if tool in EDITOR_TOOLS or (isinstance(command, str) and "edit" in tool and tool not in EDIT_TOOLS):
        return command in EDIT_COMMANDS
    return tool in EDIT_TOOLS


def _command(call: dict[str, Any]) -> str | None:
    args = call.get("args") or {}
    for key in ("command", "cmd", "script", "input"):
        if isinstance(args.get(key), str) and not _is_edit(call) and _tool(call) not in EDITOR_TOOLS:
            return args[key]
    return None


def _edited_path(call: dict[str, Any], result: str) -> str | None:
    args = call.get("args") or {}
    for key in PATH_ARGS:
        if isinstance(args.get(key), str) and args[key].strip():
            return args[key].strip()
    for key in ("input", "patch", "diff", "content"):
        if isinstance(args.get(key), str):
            m = re.search(r"^\*\*\* (?:Update|Add) File: (\S+)|^\+\+\+ b/(\S+)", args[key], re.M)
            if m:
                return m.group(1) or m.group(2)
    m = re.search(r"\[File: ([^\s\]()]+)", result)
    return m.group(1) if m else None


def _tail(path: str, text: str) -> str | None:
    """The path as a key: its last two components when they appear in `text`, else its file name."""
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    low = normalize(text)
    for n in (2, 1):
        t = "/".join(parts[-n:])
        if t and normalize(t) in low:
            return t
    return None


def _same_file(a: str, b: str) -> bool:
    """Two spellings of one path: one's components end the other's ('reproduce.py', '/testbed/reproduce.py')."""
    pa, pb = ([p for p in x.replace("\\", "/").split("/") if p and p != "."] for x in (a, b))
    n = min(len(pa), len(pb))
    return n > 0 and pa[-n:] == pb[-n:]


def _lines(text: str) -> list[str]:
    """The result's report lines, each split into the units' sentences."""
    out = []
    for line in text.splitlines():
        if not line.strip() or CONTENT_LINE.match(line):
            continue
        parts = [p for p in CLAUSE.split(line.strip()) if p.strip()]
        out.extend(parts if len(parts) > 1 else [line.strip()])
    return out


descriptive = U.descriptive   # at least two ordinary words: what makes a fact more than a bag of identifiers


def _phrase(text: str, prefer: re.Pattern[str] | None = None, skip: Iterable[str] = ()) -> str | None:
    """A descriptive phrase of ordinary words in `text`: `prefer`'s match when it has one, else the run
    of ordinary words with the most content words (at most six words), trimmed of leading stop words
    (a negation stays: "could not load") and trailing function words."""
    if prefer is not None:
        m = prefer.search(text)
        if m and descriptive(m.group()):
            return m.group().strip()
    skipped = {normalize(s) for s in skip}
    runs: list[list[tuple[int, int, str]]] = [[]]
    for m in re.finditer(r"\S+", text):
        raw = m.group()
        word = raw.strip(TRIM)
        quoted = raw[:1] in "\"'`“‘<"                       # 'foo', `old_str`: an identifier, not a word
        if raw[:1] in "([{" and runs[-1]:
            runs.append([])                                  # "(or any of ...)" starts afresh
        number = bool(NUMBER.match(word)) and bool(runs[-1])   # inside a run: "expected 345 but got 344"
        if quoted or not (U.WORD.match(word) and normalize(word) not in skipped or number):
            runs.append([])
            continue
        start = m.start() + (len(raw) - len(raw.lstrip(TRIM)))
        runs[-1].append((start, start + len(word), word))
        if raw.rstrip(TRIM) != raw:
            runs.append([])   # punctuation after the word ends the run ("add up, total")
    best, score = None, (0, 0)
    for run in runs:
        lead = next((i for i, t in enumerate(run) if not stop_word(t[2]) or NEGATIONS.match(t[2])), len(run))
        if lead < len(run) and NEGATIONS.match(run[lead][2]) and lead and run[lead - 1][2].lower() in AUXILIARIES:
            lead -= 1   # "could not load", "does not exist": the negation is the point
        run = run[lead:][:6]
        while run and (run[-1][2].lower() in TRAILING or NUMBER.match(run[-1][2])):
            run = run[:-1]
        content = sum(not stop_word(w) and len(w) >= 3 for *_, w in run)
        if len(run) < 2 or not content:
            continue
        phrase = text[run[0][0]:run[-1][1]]
        if descriptive(phrase) and (content, len(run)) > score:
            best, score = phrase, (content, len(run))
    return best


def _identifier(line: str, skip: Iterable[str] = ()) -> str | None:
    """The most identifier-like token of a line (a path as its last two components), not the program
    name that opens a 'prog: message' line."""
    body = line[FIELD_PROGRAM.match(line).end():] if FIELD_PROGRAM.match(line) else line
    skipped = {normalize(s) for s in skip}
    best = None
    for i, (start, _, w) in enumerate(_tokens(body)):
        shape = _shape(w, True)
        if not shape or normalize(w) in skipped or stop_word(w) or re.match(r"(?i)(?:error|fatal|warning)\b", w):
            continue
        if "/" in w:
            parts = [p for p in w.split("/") if p]
            w = "/".join(parts[-2:]) if parts else w
            if not w or not re.search(r"[A-Za-z]", w):
                continue
        if best is None or shape > best[0]:
            best = (shape, w)
    return best[1] if best else None


def _edit_fact(call: dict[str, Any], text: str) -> tuple[str, list[str]] | None:
    path = _edited_path(call, text)
    tail = _tail(path, text) if path else None
    if not tail:
        return None
    lines = [ln for ln in _lines(text) if normalize(tail) in normalize(ln)]
    lines.sort(key=lambda ln: not STATUS.search(ln.replace(tail, " ")))
    for line in lines:
        phrase = _phrase(line.replace(tail, " " * len(tail)), STATUS, skip=re.split(r"[/._-]", tail))
        if phrase and STATUS.search(phrase):   # the line says the file changed; "(1998 lines total)" says nothing
            return path, [tail, phrase]
    return None


def _failures(text: str, command: str | None, tail: str | None) -> list[tuple[float, str, re.Match[str]]]:
    """Lines that report a failure, best first (higher priority, then later in the output), each with its
    rank and match; a line counts once, for its first matching pattern. A viewing command's output
    quotes files, so only the shell's own errors count there."""
    viewing = command is not None and VIEWING.match(command) is not None
    found = []
    for n, line in enumerate(_lines(text)):
        for prio, pattern in FAILURES:
            if viewing and pattern is not SHELL_ERR:
                continue
            m = pattern.search(line)
            if m is not None:
                found.append((prio + (0.5 if tail and normalize(tail) in normalize(line) else 0), n, line, m))
                break
    found.sort(key=lambda f: (-f[0], -f[1]))
    return [(rank, line, m) for rank, _, line, m in found]


# A name an error line quotes is what the error is about ('provided by "LLVM"', "package 'zlib'"), even when it looks
# like a word.
QUOTED_NAME = re.compile(r"[\"'`‘“]([A-Za-z][\w.+/:-]*)[\"'`’”]")


def _failure_keys(line: str, m: re.Match[str], tail: str | None) -> tuple[list[str], bool] | None:
    """Keys for one failure line: its object (the call's path, the exception, an identifier, else a name the line
    quotes or the program a shell could not find) and a descriptive phrase (the error's own words); None when the
    line has no such phrase. The flag says the object is named by its place in the line (an anchor, however
    ordinary it looks)."""
    line = TOOL_ERROR_TAG.sub(" ", line) if "tool_use_error>" in line else line
    m = m.re.search(line) or m
    ident = tail if tail and normalize(tail) in normalize(line) else None
    groups = [g for g in m.groups() if g] if m.groups() and m.re not in PHRASED else []
    message = groups[-1] if groups else ""
    if ident is None and m.re is EXCEPTION and m.group(1):
        ident = m.group(1)                                   # the exception's name
    if ident is None:
        ident = (_identifier(message) if message else None) or _identifier(line)
    named = False
    if (ident is None or _shape(ident, False) < 2) and (q := QUOTED_NAME.search(line)) and not stop_word(q.group(1)):
        ident, named = q.group(1), True
    if (ident is None or _shape(ident, False) < 2) and m.re is SHELL_ERR:   # "bash: ponyc: command not found"
        fields = [f.strip() for f in line[:m.start()].split(":") if f.strip()]
        if len(fields) >= 2 and re.fullmatch(r"[\w.+-]+", fields[-1]):
            ident, named = fields[-1], True
    skip = re.split(r"[/._:-]", ident) if ident else []
    phrase = None
    if m.re in PHRASED and descriptive(m.group(1)):
        phrase = m.group(1) if not stop_word(m.group(1)) else _phrase(line, skip=skip)   # "Could not find" says what?
    if phrase is None and message:
        phrase = _phrase(message, skip=skip)
    if phrase is None:
        phrase = _phrase(line, skip=skip)
    if not phrase:
        return None
    if ident and (normalize(ident) in normalize(phrase) or normalize(phrase) in normalize(ident)):
        ident, named = None, False
    return [k for k in (ident, phrase) if k], named


def _failure(text: str, command: str | None, tail: str | None) -> bool:
    return any(rank >= 3 for rank, _, _ in _failures(text, command, tail))


def _failure_fact(call: dict[str, Any], text: str, usable) -> list[str] | None:
    args = call.get("args") or {}
    path = _edited_path(call, text) if _is_edit(call) or any(k in args for k in PATH_ARGS) else None
    tail = _tail(path, text) if path else None
    for rank, line, m in _failures(text, _command(call), tail):
        if rank < 3:
            break
        found = _failure_keys(line, m, tail)
        if found and usable(found[0], text, found[1]):
            return found[0]
    return None


def facts_of(events: list[dict[str, Any]], system: str = "") -> list[dict[str, Any]]:
    """Files created or edited (the last edit of each) and calls whose result reports a failure, most
    recent first up to MAX_FACTS (edits up to MAX_EDITS), returned in event order."""
    calls = {c["id"]: c for ev in events for c in ev.get("calls") or ()}
    in_system = _mentioned(system)

    def usable(keys: list[str], text: str, named: bool = False) -> bool:
        return (any(descriptive(k) for k in keys) and (named or any(anchor(k) for k in keys))
                and not any(stop_word(k) or in_system(k) for k in keys) and U.cooccur(text, keys))

    edits: dict[str, tuple[int, dict[str, Any]]] = {}
    failures: dict[tuple[str, ...], tuple[int, dict[str, Any]]] = {}
    runs: dict[tuple[str, ...], tuple[frozenset[str], str]] = {}   # a failure's command signature and phrase (`_signature`)

    def made_now(path: str) -> None:
        """The agent made `path` (created or wrote it): a failure about it missing is history."""
        for nk in [k for k, (_, f) in failures.items() if "/" in f["keys"][0] and _same_file(path, f["keys"][0])]:
            del failures[nk]

    for pos, ev in enumerate(events):
        call = _call_of(ev, calls)
        if call is None:
            continue
        for gone in _paths(call, REMOVE):   # a file the agent deleted afterwards: its edit is history, not state
            for other in [p for p in edits if _same_file(p, gone)]:
                del edits[other]
        for made in _paths(call, MAKE):   # a path the agent created afterwards: "no such directory" is history
            made_now(made)
        text = ev["text"]
        if not text.strip() or MISUSE.search(text):
            continue
        sig = _signature(_command(call))
        if sig and not _failure(text, _command(call), None):
            for nk in [k for k, (s, _) in runs.items() if s & sig and k in failures]:
                del failures[nk]   # the same command later succeeds: the error was resolved, it is history
        keys, edit_key = None, None
        if _is_edit(call) and not _failure(text, None, None):
            found = _edit_fact(call, text)
            if found and usable(found[1], text):
                edit_key, keys = found
        else:
            keys = _failure_fact(call, text, usable)
        if not keys:
            continue
        fact = {"id": f"f-{ev['id']}", "from": ev["id"], "keys": keys,
                "confidence": 0.9 if edit_key is not None else 0.7}
        if edit_key is not None:
            for other in [p for p in edits if _same_file(p, edit_key)]:
                del edits[other]   # one fact per file: its last edit
            made_now(edit_key)   # a missing file the agent then wrote: "no such file" is history
            edits[edit_key] = (pos, fact)

        else:
            nk = U.keys_of(keys)
            phrase = normalize(keys[-1])
            for old in [k for k, (s, p) in runs.items() if s & sig and p == phrase and k != nk and k in failures]:
                del failures[old]   # the same command fails the same way elsewhere: the agent got past that one
            failures.pop(nk, None)
            failures[nk] = (pos, fact)
            runs[nk] = (sig, phrase)
            if _guess(call, keys, events[pos + 1:], calls):
                del failures[nk]
    kept = sorted(edits.values(), key=lambda x: x[0])[-MAX_EDITS:]
    room = MAX_FACTS - len(kept)
    kept += sorted(failures.values(), key=lambda x: x[0])[-room:] if room > 0 else []
    return [f for _, f in sorted(kept, key=lambda x: x[0])]


def _signature(command: str | None) -> frozenset[str]:
    """What a shell command runs, to tell when it is run again: the program of each segment that does work (not cd,
    export, echo ...; an env assignment and a path left out) with its subcommand when one follows ("apt-get install",
    "npx jest", "cmake", "make"). Two commands are the same run when they share one."""
    out = set()
    for seg in re.split(r"&&|\|\||[;|]", command or ""):
        words = [w for w in seg.split() if not re.fullmatch(r"\w+=\S*", w)]
        if not words or words[0] in SETUP:
            continue
        program = words[0].rstrip("/").rsplit("/", 1)[-1]
        sub = next((w for w in words[1:] if not w.startswith("-")), "")
        out.add(f"{program} {sub}" if re.fullmatch(r"[a-z][\w-]*", sub) else program)
    return frozenset(out)


SETUP = {"cd", "export", "echo", "printf", "mkdir", "rm", "touch", "set", "source", ".", "sleep", "true", "pushd", "popd"}


def _guess(call: dict[str, Any], keys: list[str], later: list[dict[str, Any]], calls: dict[str, Any]) -> bool:
    """A lookup (a viewing command) that fails on a path no later call names again: the agent's guess, trivial."""
    command = _command(call)
    if command is None or not VIEWING.match(command) or "/" not in keys[0]:
        return False
    said = re.compile(re.escape(keys[0]) + r"(?![\w.-])")
    for e in later:
        c = _call_of(e, calls)
        if c and said.search(_args_text(c)):
            return False
    return True


def _call_of(ev: dict[str, Any], calls: dict[str, Any]) -> dict[str, Any] | None:
    """The call a tool event answers (`calls`: call id -> call), else None."""
    return calls.get(ev.get("call") or "") if ev["role"] == "tool" else None


def _args_text(call: dict[str, Any]) -> str:
    """A call's argument values as one text, to look an identifier or a path up in."""
    return " ".join(str(v) for v in (call.get("args") or {}).values())


REMOVE = re.compile(r"(?:^|[;&|]\s*)(?:git\s+)?rm\s+((?:-\S+\s+)*)([^;&|]+)")


MAKE = re.compile(r"(?:^|[;&|]\s*)(?:mkdir|touch)\s+((?:-\S+\s+)*)([^;&|]+)")


def _paths(call: dict[str, Any], verb: re.Pattern[str]) -> list[str]:
    """The paths a shell command's `verb` (REMOVE: `rm a.py b.py`, `git rm -f x`; MAKE: `mkdir -p a/b`, `touch x`)
    deletes or creates, its flags left out."""
    command = _command(call) or ""
    return [p for m in verb.finditer(command) for p in m.group(2).split() if not p.startswith("-")]


def anchor(key: str) -> bool:
    """A key that says where or what exactly: a path, `file:line`, an identifier. An error message alone ("1 failed,
    11 passed") is not a fact: nothing in it says which test, file or call it was about."""
    return any(_shape(w, False) >= 2 for w in key.split())


def _mentioned(system: str):
    """Whether a term occurs as whole words in the system prompt: it is rebuilt for every request, so
    a key there could never be lost (the validator warns about such keys)."""
    text = normalize(system)

    def inside(term: str) -> bool:
        t = normalize(term)
        if not t or not text:
            return False
        left = r"\b" if t[0].isalnum() else ""
        right = r"\b" if t[-1].isalnum() else ""
        return re.search(left + re.escape(t) + right, text) is not None
    return inside


# ---------------------------------------------------------------- all of it


def _generic(mission: dict[str, Any]) -> bool:
    """A request that names nothing of its own: no identifier and at most one content word to key on ("I'd like to
    change my upcoming flight, please.")."""
    keys = mission.get("keys") or []
    return len(keys) <= 1 and not any(_shape(k, False) >= 1 for k in keys)


def _replies(events: list[dict[str, Any]]) -> set[str]:
    """The ids of the user's messages that answer the agent: each opens with an answer word ("Yes, ...") or follows a
    question the agent asked in its last message. One pass over the session."""
    out: set[str] = set()
    last = None     # the agent's last message with text so far
    for e in events:
        if e["role"] == "user" and (ANSWER.match(e["text"]) or last is not None and "?" in last["text"].strip()[-300:]):
            out.add(e["id"])
        elif e["role"] == "assistant" and e["text"].strip():
            last = e
    return out


def _chosen(quote: str) -> str | None:
    """The verb a constraint's cue governs ("please use ...", "I'd prefer to use ..."): what the user chose to do."""
    found = cue(quote)
    m = re.match(r"(?:[\w'’]+\s+){0,3}?(?:to|please)\s+([a-z]+)", quote[found[1].start():], re.I) if found else None
    return m.group(1).lower() if m else None


def _replaced(old: dict[str, Any], new: dict[str, Any], replies: set[str]) -> bool:
    """A choice the user gave in answer to the agent (a payment, an option) is a one-off, no standing rule: a later
    choice of the same doing about the same thing (a content word in common), given in answer too or said to be
    "instead", replaces it."""
    verb = _chosen(old["quote"])
    later = new["from"] in replies or re.search(r"\binstead\b", new["quote"], re.I) is not None
    one_off = old["from"] in replies or re.search(r"\binstead\b", new["quote"], re.I) is not None
    same = (_content(old["quote"]) & _content(new["quote"])) - {verb}   # of the same thing: a card, a certificate
    return (verb is not None and later and one_off and new["from"] != old["from"] and _chosen(new["quote"]) == verb
            and bool(same))


ANSWER = re.compile(r"^\W*(?:yes|yeah|yep|sure|ok|okay|no|nope|correct|right|exactly)\b", re.I)


def derive_truth(events: list[dict[str, Any]], system: str = "") -> dict[str, Any]:
    """Mission, the user's later tasks, constraints and facts of an imported session (see the module docstring)."""
    users = [ev for ev in events if ev["role"] == "user" and substantive(ev["text"])]
    in_system = _mentioned(system)
    truth: dict[str, Any] = {}
    read = prompt_file(users[0], events) if users else None
    mission = (read and file_mission(read, in_system)) or (mission_of(users[0], in_system) if users else None)
    start = 1
    if mission and not read and preamble(mission["text"]) and len(users) > 1:
        task = mission_of(users[1], in_system, "m1")
        if task and task["confidence"] >= 0.8 and not preamble(task["text"]):
            # "I need some help with my reservations." then "I need to cancel two of them.": the second asks
            mission, start = {**task, "confidence": 0.7}, 2
    said = None
    if mission and not read and _generic(mission):
        # "I'd like to change my upcoming flight." names no flight: the first later request that says which work is
        # the mission ("I want to change my outgoing flight to a nonstop one, and shift it to the next day.")
        # (one that names as little, "I would like to cancel for personal reasons.", is no more the mission)
        said = next((t for ev in users[start:] if (t := mission_of(ev, in_system, "m1", later=True, specific=True))),
                    None)
        mission = {**said, "confidence": 0.6} if said else mission
    if mission:
        truth["mission"] = [mission]
    replies = _replies(events)
    tasks = []
    for i, ev in enumerate(users[start:], start):
        if said and ev["id"] == said["from"]:
            continue
        task = mission_of(ev, in_system, f"m-{ev['id']}", later=True)
        if task and (ADDITIVE.search(task["text"]) or not (ev["id"] in replies or any(
                U.mentions("\n".join(u["text"] for u in users[:i]), k) for k in task["keys"]))):
            tasks.append(task)   # one that adds to the work, or is new and unasked for: not a clarification (ADDITIVE)
    stream = tasks_workstream(tasks, events)
    if stream:
        truth["workstreams"] = [stream]
    constraints = [c for ev in users for c in constraints_of(ev, in_system, ev["id"] in replies)]
    if read:   # the requirements of the prompt file the user pointed to are theirs too
        constraints += file_constraints(read, in_system, mission["text"] if mission else "")
    # one item per requirement: a restatement is left out, and so is the mission's own sentence ("I'd like to rent
    # a van" is the goal, not also a preference) unless it bans or asks for a report, which the goal does not hold
    constraints = distinct(constraints)
    constraints = [c for k, c in enumerate(constraints) if not any(_replaced(c, d, replies) for d in constraints[k + 1:])]
    goal = _content(mission["text"]) if mission else set()
    constraints = [c for c in constraints if c["kind"] in ("ban", "reporting") or not _content(c["quote"]) <= goal]
    if constraints:
        truth["constraints"] = constraints
    facts = facts_of(events, system)
    if facts:
        truth["facts"] = facts
    return truth


__all__ = ["derive_truth", "cue", "kind_of", "keys_of", "facts_of", "constraints_of", "mission_of", "CUES"]
