"""The offline actor: a deterministic stand-in for the agent model at a continuation point, not an LLM.

It decides from the context it is given and nothing else (never the scenario's truth or script), the way a
careful agent would read its own history:
- a request it reads as the user's that names a command in backticks it has not run: a user-role message after
  its last turn with no `[Harness: ...]` marker, or a line that says someone asked it, with no source named and
  no refusal ("Dana asked me to run `...`", a list under "Open requests" in a summary): it runs it;
- the latest statement about the work: "all done" (then it stops), or what is next ("Next: #102", a label or
  heading that says what is next or current: "next: billing", "Next step: migrate users", a summary's
  "Current Work" or "Optional Next Step", a handoff's "Next steps" with the step on the line below; an item
  read past the step's verb counts where the context lists it, "orders, billing and users"): when no
  call has been made on that item since the statement, it starts it the way it started the item before
  (the first call made on the previous item, that item's name swapped for the new one);
- its own latest plan, a message of its own (or a summary) that says what it will do next and names the calls in
  backticks ("Next I'll run `pytest -k expiry`", "Plan: run `make lint`, then run `make test`"): the first
  step no later call has made, when no newer statement of the work stands;
- otherwise it goes on with the routine its own visible calls show: after a call like the last one, the
  follow-up seen most often (ties: the newest), on the same item (where the follow-up does not hold the
  earlier call's whole subject, the part in which the two subjects differ: `src/orders/client.ts` then
  `npm test -- orders` is followed, on `src/users/client.ts`, by `npm test -- users`).
A context that shows none of these gets no call. Its calls are only as good as what the context says:
that is what the next-action score measures.
"""
from __future__ import annotations

import re
from functools import lru_cache
from collections import Counter
from pathlib import Path
from typing import Any, Iterator, Sequence

from bench.harness.messages import MARKER, Message
from bench.models.offline import Turn
from bench.scenarios.model import Call, leaves as scalars
from bench.text import stop_word
from bench.units import DONE, ENDED_OBJECT, FUNCTION, NEGATION, NEXT as NEXT_MARKER

PROMPT = (Path(__file__).resolve().parent / "prompts" / "next.md").read_text(encoding="utf-8").strip()
OPENING = PROMPT.split("]", 1)[0] + "]"
NEXT = re.compile(r"\b(?:next(?: up| item| in the queue)?|moving on to|resuming|starting)\s*(?:is|:|-|with)?\s*"
                  r"`?(#?[A-Za-z0-9][\w./-]*\w)", re.I)
ALL_DONE = re.compile(r"\b(all (?:done|finished|complete)|everything is (?:done|finished|merged)|nothing (?:is )?left|"
                      r"task (?:is )?complete|work is complete|queue is (?:done|empty|finished))\b", re.I)
COMMAND = re.compile(r"`([^`\n]{3,200})`")
OPEN = re.compile(r"^\s*(?:#+\s*)?open requests\b", re.I)
ASKED = re.compile(r"\b(?:asked|asks|wants|requested) (?:me|us|you|that you)\b", re.I)
SOURCE = re.compile(r"\b(?:watch|cron|callback|session|bot|harness|relay)\b", re.I)   # the ask names who sent it
REFUSED = re.compile(r"\b(?:ignor\w*|declin\w*|refus\w*|not from|claims?|unconfirmed|did not)\b", re.I)
SUBJECTY = re.compile(r"[\d./_#-]")
PLAN = re.compile(r"\b(?:plan\b|next,? I(?:'ll| will)\b|then I(?:'ll| will)\b|"
                  r"after (?:that|this),? I(?:'ll| will)\b)", re.I)   # the words that open its own plan
# A label that opens its line or clause ("Next step:", "3. Current Work:", "**Next steps**", "## Next", "; next:"),
# and what follows it on its line (empty for a heading: its phrase is the next line with words).
LABEL = re.compile(r"(?:^|[;.]\s)[\s>#*\d.)-]*?((?:[A-Za-z][\w'-]*\s+){0,3}[A-Za-z][\w'-]*)\**\s*(:|\**\s*$)\**\s*(.*)$")
CLAUSE_END = re.compile(r"[,;(\[]|[.:](?:\s|$)|\s[—–-]\s|\b(?:then|and|or|but)\b")
SPEAKER = re.compile(r"^\W*[A-Za-z]\w*(?: \w+)?:(?:\s|$)")   # a line that opens with a label of its own ("Tool run:")
WORD = re.compile(r"[#/]?\w(?:[\w./@#:-]*\w)?")
VERB = re.compile(r"[A-Za-z][a-z]+")
STEP = re.compile(r"\b(run|read)\s+`([^`\n]{3,200})`", re.I)
STEP_ARG = {"run": "cmd", "read": "path"}


def offline_actor(messages: Sequence[Message], tools: list[dict] | None, max_tokens: int | None, tok: Any
                  ) -> Turn | None:
    """The player for the continuation prompt (`prompts/next.md`); None for any other request."""
    if not messages or not messages[-1].text.startswith(OPENING):
        return None
    context = [m for m in messages[:-1] if m.role != "system"]
    names = {t.get("function", t).get("name") for t in tools or ()}
    call = _asked(context, names) or _decide(context, names)
    if call is None:
        return Turn(text="All done: nothing is left that I can see.")
    return Turn(text="", calls=(Call("next-1", call[0], call[1]),))


def _asked(context: list[Message], tools: set) -> tuple[str, dict] | None:
    """The newest request it reads as someone's ask of it, for a command in backticks no later call has run: a
    line of a user-role message after its last turn (pending), or a line of any user-role message that says
    someone asked it ("Dana asked me to ...") or sits under "Open requests". A message whose first line is a
    source marker, a line with a marker, a line naming a source before the ask (a watch, a bot, a session) or
    refusing it is not such a request. It reads text only, as a model would: whose request it really was is
    what the context had to keep."""
    if "run" not in tools:
        return None
    last = max((i for i, m in enumerate(context) if m.role == "assistant"), default=-1)
    done = ""
    for i in range(len(context) - 1, -1, -1):
        m = context[i]
        if m.role == "assistant":
            done += _ran(m) + " "
        if m.role != "user":
            continue
        found = None
        for always, commands in _asks(m.text):
            if i > last or always:
                found = next((c for c in commands if c not in done), found)
        if found:
            return "run", {"cmd": found}
    return None


_RAN: dict[str, str] = {}


def _ran(m: Message) -> str:
    """The argument values of an agent message's calls, joined, once per message content (its hash covers its
    calls): every continuation point reads the calls of its whole context again."""
    got = _RAN.get(m.hash)
    if got is None:
        if len(_RAN) > 200_000:
            _RAN.clear()
        got = _RAN[m.hash] = " ".join(leaf for c in m.calls for leaf in scalars(c.args))
    return got


@lru_cache(maxsize=8192)
def _asks(text: str) -> tuple[tuple[bool, tuple[str, ...]], ...]:
    """The lines of a user-role message that could ask for a command, in order: (whether the line says someone
    asked, or sits under "Open requests" — an ask wherever the message stands —, its commands newest first).
    Nothing for a message that opens with a source marker; a line with a marker, or naming a source before the
    ask, or refusing it, is left out. Read once per text: it depends on nothing else."""
    if text.lstrip().startswith(MARKER) or MARKER in text.split("\n", 1)[0]:
        return ()
    out, heading = [], False
    for line in text.splitlines():
        heading = bool(OPEN.match(line)) or (heading and line.lstrip().startswith(("-", "*")))
        ask = ASKED.search(line)
        if MARKER in line or REFUSED.search(line) or (ask and SOURCE.search(line[:ask.start()])):
            continue
        commands = tuple(reversed(COMMAND.findall(line)))
        if commands:
            out.append((heading or bool(ask), commands))
    return tuple(out)


_SUBJECTS: dict[int, tuple[Any, str, tuple]] = {}
_FOLLOWS: dict[tuple[int, int], tuple[Any, Any, tuple]] = {}


def _known(call: Call) -> tuple[Any, str, tuple]:
    """(call, its subject, its shape with the subject abstracted), once per call object: the calls of a session
    are read again at every point."""
    got = _SUBJECTS.get(id(call))
    if got is None or got[0] is not call:
        if len(_SUBJECTS) > 200_000:
            _SUBJECTS.clear()
        s = subject(call.args)
        got = _SUBJECTS[id(call)] = (call, s, _shape(call, s))
    return got


def subject_of(call: Call) -> str:
    return _known(call)[1]


def _follow(c: Call, nxt: Call) -> tuple:
    """The follow-up `nxt` of call `c`, with `c`'s subject abstracted, once per pair of call objects."""
    got = _FOLLOWS.get((id(c), id(nxt)))
    if got is None or got[0] is not c or got[1] is not nxt:
        if len(_FOLLOWS) > 200_000:
            _FOLLOWS.clear()
        s = subject_of(c)
        key = (nxt.tool, repr(_swap(nxt.args, s, "\0")) if s else repr(nxt.args))
        got = _FOLLOWS[(id(c), id(nxt))] = (c, nxt, key)
    return got[2]


def subject(args: dict) -> str:
    """The item a call works on: its most specific argument value (a number, a path, a dotted name)."""
    leaves = [v for v in scalars(args, bools=False) if SUBJECTY.search(v) and len(v) >= 3 and " " not in v]
    return max(leaves, key=len) if leaves else ""


def _swap(value: Any, old: str, new: str) -> Any:
    if isinstance(value, dict):
        return {k: _swap(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_swap(v, old, new) for v in value]
    if str(value) == old:
        return int(new) if isinstance(value, int) and new.isdigit() else new
    if isinstance(value, str) and old and old in value:
        return value.replace(old, new)
    return value


def _shape(c: Call, item: str) -> tuple:
    return (c.tool, repr(sorted(_swap(c.args, item, "\0").items())) if item else repr(sorted(c.args.items())))


@lru_cache(maxsize=8192)
def statement(text: str) -> tuple[tuple[str, bool], ...]:
    """The latest statements of a text about the work, newest first, up to the first sure one: (the item said to
    be next or '' for "all done", sure). A label's step read past its verb ("Next step: migrate users") is not
    sure: the context must list the item (`listed`). A step said not to be taken or said done names nothing."""
    if text.lstrip().startswith(MARKER):
        return ()
    lines, found = text.splitlines(), []
    for k in range(len(lines) - 1, -1, -1):
        line = lines[k]
        labelled = _labelled(line, lines[k + 1:])
        nxt = [x for x in NEXT.findall(line) if SUBJECTY.search(x)]
        said = (labelled[0].lstrip("#"), labelled[1]) if labelled else (nxt[-1].lstrip("#"), True) if nxt else \
            ("", True) if ALL_DONE.search(line) else None
        if said is not None:
            found.append(said)
            if said[1]:
                break
    return tuple(found)


def _labelled(line: str, below: list[str]) -> tuple[str, bool] | None:
    """The item a next-marker label of the line names (`head` of the phrase after it on its line, or, for a
    heading, on the next line with words); None when the line has no such label."""
    m = LABEL.search(line)
    label = m.group(1).casefold() if m else ""
    if not NEXT_MARKER.search(label) or FUNCTION.intersection(label.split()):
        return None                                   # no marker, or a sentence ("Starting the auth cutover:")
    phrase = m.group(3) if m.group(2) == ":" else ""
    if not phrase.strip():
        if m.group(2) != ":" and not line.lstrip().startswith(("#", "*")):
            return None                               # a bare line of words is no heading
        phrase = next((x for x in below if x.strip()), "")
        if SPEAKER.match(phrase):
            return None                               # under it another label ("Assistant:"), not a step
    return head(phrase)


@lru_cache(maxsize=4096)
def head(phrase: str) -> tuple[str, bool] | None:
    """The item a step phrase names, and whether that is sure: its first clause's one word that is no function
    word ("billing", "#102": sure), or the one after its first word when that word may be the step's verb (a
    lower-case or capitalised word followed by its object: "migrate billing"; "Migrate the users service" has two
    words after it and names nothing): not sure, as a noun before it reads the same ("load test", "docs examples").
    None for a clause of several words ("POST /orders", "order number sequence": the item is the phrase, which
    calls do not name) or a phrase with a command in backticks (a plan: `steps` reads it)."""
    if "`" in phrase:
        return None
    clause = CLAUSE_END.split(re.sub(r"^[\s>*\d.)-]+", "", phrase), 1)[0]
    if NEGATION.search(clause.casefold()) or DONE.search(clause.casefold()):
        return None                   # a step said not to be taken, or said done ("Not switching", "load test done")
    words = WORD.findall(clause)
    content = [w for w in words if not stop_word(w) or w.isupper()]    # "GET" is an acronym, not a word of "get"
    if len(content) == 1:
        return content[0], True
    verb = (len(words) > 1 and VERB.fullmatch(words[0]) is not None
            and (not stop_word(words[1]) or ENDED_OBJECT.match(words[1].casefold()) is not None))
    content = [w for w in words[1:] if not stop_word(w) or w.isupper()] if verb else []
    return (content[0], False) if len(content) == 1 else None


@lru_cache(maxsize=4096)
def listed(text: str) -> frozenset[str]:
    """The one-word items a text lists: the elements of a list of three or more ("the orders, billing and users
    services": billing; "the orders" and "users services" are not one word alone), case-folded."""
    out = set()
    for part in re.split(r"[;:.!?](?:\s|$)|\n", text):
        pieces = re.split(r",\s*(?:and\s+|or\s+|then\s+)?|\s+(?:and|or|then)\s+", part)
        if len(pieces) < 3:
            continue
        for piece in pieces:
            words = WORD.findall(piece)
            if len(words) == 1 and not stop_word(words[0]):
                out.add(words[0].casefold())
    return frozenset(out)


@lru_cache(maxsize=4096)
def steps(text: str) -> tuple[tuple[str, str], ...]:
    """The calls a text plans, in order: (tool, argument) for each "run `...`" / "read `...`" from the first words
    that say what it will do next ("Plan:", "Next I'll", "then I'll") on; () for a text that plans nothing."""
    if MARKER in text.split("\n", 1)[0]:
        return ()
    start = PLAN.search(text)
    if start is None:
        return ()
    return tuple((tool.lower(), arg) for tool, arg in STEP.findall(text, start.start()))


def _planned(context: list[Message], tools: set) -> tuple[int, tuple[str, dict] | None] | None:
    """(position, call) of the newest message that plans calls: its first step no later call has made (None when
    every step is made); None when no message plans any."""
    for i in range(len(context) - 1, -1, -1):
        m = context[i]
        if m.role == "tool":
            continue
        planned = [(t, a) for t, a in steps(m.text) if t in tools or not tools]
        if not planned:
            continue
        made = {leaf.casefold() for m2 in context[i:] if m2.role == "assistant" for c in m2.calls
                for leaf in scalars(c.args)}
        todo = next(((t, a) for t, a in planned if a.casefold() not in made), None)
        return i, (todo[0], {STEP_ARG[todo[0]]: todo[1]}) if todo else None
    return None


def _decide(context: list[Message], tools: set | None = None) -> tuple[str, dict] | None:
    calls = [(i, c) for i, m in enumerate(context) if m.role == "assistant" for c in m.calls]
    said = _statements(context)
    status = next(said, None)                            # (position, "done" | item) of the latest statement
    plan = _planned(context, tools or set())
    if plan is not None and plan[1] is not None and (status is None or plan[0] >= status[0]):
        return plan[1]
    if status is not None:
        at, item = status
        if not item and not any(i > at for i, _ in calls):
            return None
        if item and not any(i >= at and names(item, c) for i, c in calls):
            # the item before it: the latest statement of another item
            prev = next(((i, x) for i, x in said if x and x.casefold() != item.casefold()), None)
            started = _start(calls, item, prev)
            if started is not None:
                return started
    if not calls:
        return None
    _, last = calls[-1]
    _, item, want = _known(last)
    follow: Counter = Counter()
    newest: dict[tuple, int] = {}
    for k in range(len(calls) - 1):
        c, nxt = calls[k][1], calls[k + 1][1]
        if c.tool != last.tool or _known(c)[2] != want:
            continue
        key = _follow(c, nxt)
        follow[key] += 1
        newest[key] = k
    if not follow:
        return None
    best = max(follow, key=lambda key: (follow[key], newest[key]))
    k = newest[best]
    prev, nxt = calls[k][1], calls[k + 1][1]
    s = subject_of(prev)
    if not s:
        return nxt.tool, dict(nxt.args)
    args = _swap(nxt.args, s, item)
    core = _core(s, item) if args == nxt.args else None
    if core is not None and names(core[0], nxt):
        args = _swap(nxt.args, *core)
    return nxt.tool, args


def _core(old: str, new: str) -> tuple[str, str] | None:
    """The parts in which two subjects differ, cut at non-word characters: ("orders", "users") for
    `src/orders/client.ts` and `src/users/client.ts`; None when either part is shorter than 3 characters or the
    old one recurs in its subject (`src/orders/orders.ts`: which "orders" a follow-up names is not known)."""
    a = 0
    while a < min(len(old), len(new)) and old[a] == new[a]:
        a += 1
    while a > 0 and (old[a - 1].isalnum() or old[a - 1] == "_"):
        a -= 1
    b = 0
    while b < min(len(old), len(new)) - a and old[-1 - b] == new[-1 - b]:
        b += 1
    while b > 0 and (old[-b].isalnum() or old[-b] == "_"):
        b -= 1
    x, y = old[a:len(old) - b], new[a:len(new) - b]
    return (x, y) if len(x) >= 3 and len(y) >= 3 and old.count(x) == 1 else None


def _statements(context: list[Message]) -> Iterator[tuple[int, str]]:
    """The context's statements about the work, newest first: (position, the item said to be next or ''); a
    statement that is not sure counts where the context lists its item."""
    known: frozenset[str] | None = None
    for i in range(len(context) - 1, -1, -1):
        m = context[i]
        if m.role == "tool":
            continue
        for item, sure in (x for p in reversed(m.segments()) for x in statement(p.text)):
            if not sure and known is None:
                known = frozenset().union(*(listed(c.text) for c in context))
            if sure or item.casefold() in known:
                yield i, item
                break


def names(item: str, call: Call) -> bool:
    """Whether a call works on `item`: an argument value that is the item, or holds it as a whole word
    ("axios" in "axios@6.34.0" or "node_modules/axios/CHANGELOG.md", "dedupe" in "job/export-dedupe"; not "axios" in
    "axios-retry")."""
    edge = _edges(item)
    return any(v == item or edge.search(v) for v in scalars(call.args, bools=False))


@lru_cache(maxsize=4096)
def _edges(item: str) -> re.Pattern:
    return re.compile(rf"(?<![\w.]){re.escape(item)}(?![\w-])", re.I)


def _start(calls: list[tuple[int, Call]], item: str, prev: tuple[int, str] | None = None) -> tuple[str, dict] | None:
    """The first call made on the previous item (the one the statement before said was next), that item's name
    swapped for `item`; without one, the first call made on the newest other item the calls show, where `item` is a
    name of the same kind as a call's subject (an id, a path: a plain word such as "Tests" would replace a path)."""
    if prev is not None:
        at, name = prev
        first = next((c for i, c in calls if i >= at and names(name, c)), None)
        if first is not None:
            return first.tool, _swap(first.args, name, item)
    if not SUBJECTY.search(item):
        return None
    firsts: dict[str, Call] = {}
    for _, c in calls:
        s = subject_of(c)
        if s and s.lstrip("#") != item:
            firsts.setdefault(s, c)
    if not firsts:
        return None
    s, c = list(firsts.items())[-1]
    return c.tool, _swap(c.args, s, item if not s.startswith("#") else "#" + item)
