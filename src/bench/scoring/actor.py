"""The offline actor: a deterministic stand-in for the agent model at a continuation point, not an LLM.

It decides from the context it is given and nothing else (never the scenario's truth or script), the way a
careful agent would read its own history:
- a request it reads as the user's that names a command in backticks it has not run: a user-role message after
  its last turn with no `[Harness: ...]` marker, or a line that says someone asked it, with no source named and
  no refusal ("Dana asked me to run `...`", a list under "Open requests" in a summary): it runs it;
- the latest statement about the work: "all done" (then it stops), or what is next ("Next: #102"): when no
  call has been made on that item since the statement, it starts it the way it started the item before
  (the first call made on the previous item, that item's name swapped for the new one);
- its own latest plan, a message of its own (or a summary) that says what it will do next and names the calls in
  backticks ("Next I'll run `pytest -k expiry`", "Plan: run `make lint`, then run `make test`"): the first
  step no later call has made, when no newer statement of the work stands;
- otherwise it goes on with the routine its own visible calls show: after a call like the last one, the
  follow-up seen most often (ties: the newest), on the same item.
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
def statement(text: str) -> str | None:
    """The latest statement of a text about the work: the item said to be next, '' for "all done", None."""
    if text.lstrip().startswith(MARKER):
        return None
    for line in reversed(text.splitlines()):
        nxt = [x for x in NEXT.findall(line) if SUBJECTY.search(x)]
        if nxt:
            return nxt[-1].lstrip("#")
        if ALL_DONE.search(line):
            return ""
    return None


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
    return nxt.tool, (_swap(nxt.args, s, item) if s else dict(nxt.args))


def _statements(context: list[Message]) -> Iterator[tuple[int, str]]:
    """The context's statements about the work, newest first: (position, the item said to be next or '')."""
    for i in range(len(context) - 1, -1, -1):
        m = context[i]
        if m.role == "tool":
            continue
        said = next((x for x in map(statement, (p.text for p in reversed(m.segments()))) if x is not None), None)
        if said is not None:
            yield i, said


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
    swapped for `item`; without one, the first call made on the newest other item the calls show."""
    if prev is not None:
        at, name = prev
        first = next((c for i, c in calls if i >= at and names(name, c)), None)
        if first is not None:
            return first.tool, _swap(first.args, name, item)
    firsts: dict[str, Call] = {}
    for _, c in calls:
        s = subject_of(c)
        if s and s.lstrip("#") != item:
            firsts.setdefault(s, c)
    if not firsts:
        return None
    s, c = list(firsts.items())[-1]
    return c.tool, _swap(c.args, s, item if not s.startswith("#") else "#" + item)
