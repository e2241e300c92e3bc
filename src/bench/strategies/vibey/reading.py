"""How the offline writer reads a conversation: plain-text cues, no scenario truth.

Everything here works on what an LLM would see in the checkpoint request:
who said what (a `[Harness: ...]` first line marks a non-human source), the
assistant's narration and tool calls, and tool output. The cues are simple
and deterministic; they aim at what the seed asks a checkpoint to keep.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache

from bench.harness.messages import MARKER, Message

SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
FULL_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
LIST = re.compile(r":\s+((?:(?!:\s).)+?)\.?$")      # after the last ": "
ORDER = re.compile(r",?\s*(in (that|this|the given) order|oldest to newest|one (at a time|by one))\b.*$", re.I)
CONTINUE = re.compile(r"^\W*(ok(ay)?|yes|yep|sure|go on|continue|carry on|keep going|proceed|next|thanks?( you)?|"
                      r"sounds good|go ahead|do it|lgtm|great|done)\W*$", re.I)
WITHDRAW = re.compile(r"\b(forget (what|about|that)|never mind|scratch that|ignore (what|my)|cancel|withdraw|"
                      r"no longer|don't bother|disregard|drop the)\b", re.I)
RULE = re.compile(r"\b(never|don't|do not|must|only|always|avoid|without|before|ask me|come to me|keep|may|"
                  r"allowed|cannot|can't|prefer|rather|instead|stop|not|no one|nobody|make sure)\b", re.I)
AGREE = re.compile(r"\b(only come to me|come to me|ask me|tell me|page me|ping me|report|notify|sign-?off|you may|you can|"
                   r"allowed to|without asking|don't ask|do not ask|up to you|yourself|approval)\b", re.I)
BAN = re.compile(r"\b(never|do not|don't|must not|no one|avoid)\b|^no\s", re.I)
MUST = re.compile(r"\b(must|keep the|always|make sure|has to|have to|strictly|until I (confirm|say))\b", re.I)
DIRECTION = re.compile(r"\b(new (task|goal)|from now on|switch to|change of plan|instead|now (please|let's|I want)|"
                       r"also (please|add|do|review|fix)|after that|next,? (please|let's))\b", re.I)
DECIDE = re.compile(r"\b(because|so that|since|rather than|instead of|as it|which means|due to|we keep|we use|"
                    r"decided|go with|stick with|not propose)\b", re.I)
LESSON = re.compile(r"\b(comes from|came from|not from|root cause|turned out|the cause|lesson|was wrong)\b", re.I)
WAIT = re.compile(r"\b(wait(ing)? (for|on)|pending|needs? (your|my|her|his|their) sign-?off|until|scheduled|"
                  r"in the background|blocked)\b", re.I)
ERROR = re.compile(r"(error|fail|timeout|timed out|exception|warn|deprecated|denied|not found|cannot|refused|"
                   r"panic|traceback)", re.I)
DONE = re.compile(r"\b(all (\w+ )*(done|reviewed|fixed|finished|complete[d]?|merged))\b", re.I)
ITEM = re.compile(r"#\d+|\b[\w./-]+\.(?:ts|tsx|js|jsx|py|go|rs|java|rb|md|ya?ml|json|c|h|cpp|sql|sh|toml|txt)\b")
RANGE = re.compile(r"#(\d+)\s*(?:to|through|-|–|\.\.)\s*#?(\d+)")
REF = re.compile(r"[\w.-]*/[\w./-]+(?::\d+)?|\b[\w-]+\.(?:ts|tsx|js|py|go|rs|md|ya?ml|json|sql|sh|toml)(?::\d+)?\b|"
                 r"#\d+|\b[0-9a-f]{7,40}\b")


def is_user(m: Message) -> bool:
    """The human user's own message: user role without a harness source line."""
    return m.role == "user" and not m.text.startswith(MARKER)


def source(m: Message) -> str:
    """Who a message is from, as the request shows it: 'the watch message', 'me', the user."""
    if m.role == "assistant":
        return "me"
    if m.role == "user" and m.text.startswith(MARKER):
        return f"the {m.text[len(MARKER):].split(']', 1)[0].strip()} message (not the user)"
    return "the user" if m.role == "user" else f"the {m.tool or 'tool'} output"


def sentences(text: str, clauses: bool = True) -> list[str]:
    """Sentences; with `clauses`, parts joined by ';' count as sentences too."""
    split = SENTENCE if clauses else FULL_SENTENCE
    return [s.strip() for s in split.split(text) if s and len(s.strip()) > 2]


def stems(text: str) -> set[str]:
    """Distinctive word stems (first five letters of longer words), for matching a withdrawal to its target."""
    return {w[:5] for w in re.findall(r"[\w./#-]{5,}", text.lower())} - {"about", "forge", "ignor", "never",
                                                                         "scrat", "withd", "cance", "disre"}


def withdrawn(msg: object, later: list[Message]) -> bool:
    """Whether a later user message takes back most of what `msg` says ("forget what I said about X")."""
    parts = [stems(s) for s in sentences(getattr(msg, "text", ""))]
    for m in later:
        if not is_user(m):
            continue
        for clause in (s for s in sentences(m.text) if WITHDRAW.search(s)):
            target = stems(clause)
            need = min(2, len(target))
            hit = sum(1 for p in parts if need and len(p & target) >= need)
            if parts and hit * 2 >= len(parts):
                return True
    return False


def items(text: str) -> list[str]:
    """Queue items a goal names, in order: a list after a colon, #101 to #106, file names, #ids."""
    listed = LIST.search(text)
    if listed:
        body = ORDER.sub("", listed.group(1))
        parts = [p.strip(" .") for p in re.split(r"\s*;\s*|,\s*(?:and\s+)?|\s+and\s+", body)]
        if len(parts) >= 3 and all(1 <= len(p.split()) <= 6 for p in parts):
            return parts
    out: list[str] = []
    for m in RANGE.finditer(text):
        a, b = int(m.group(1)), int(m.group(2))
        if 0 < b - a <= 60:
            out += [f"#{i}" for i in range(a, b + 1)]
    for m in ITEM.finditer(text):
        if m.group(0) not in out:
            out.append(m.group(0))
    return out


def said(m: Message) -> str:
    """What an assistant message says and does: text plus call arguments (numbers as #ids)."""
    args = " ".join(json.dumps(c.args, sort_keys=True) for c in m.calls)
    nums = " ".join(f"#{n}" for n in re.findall(r'"(?:number|pr|id|issue)": (\d+)', args))
    return f"{m.text} {args} {nums}"


@dataclass
class Progress:
    items: list[str]
    done: list[str] = field(default_factory=list)
    current: str | None = None

    @property
    def next(self) -> str | None:
        rest = [i for i in self.items if i not in self.done and i != self.current]
        return rest[0] if rest else None


def progress(queue: list[str], assistant: list[Message], start: str | None) -> Progress:
    """Where a queue stands: the furthest item the agent works on; earlier ones are done."""
    pos = queue.index(start) if start in queue else -1
    finished = False
    for m in assistant:
        text = said(m)
        hits = [queue.index(i) for i in queue if re.search(re.escape(i) + r"(?![\w/:])", text)]
        if hits:
            pos = max(pos, max(hits))
        if DONE.search(m.text) and hits:
            finished = True
    if finished:
        return Progress(queue, list(queue), None)
    if pos < 0:
        return Progress(queue)
    return Progress(queue, queue[:pos], queue[pos])


def refs(messages: list[Message]) -> list[str]:
    """Exact references, most recent first: paths, ids, commits, commands."""
    out: list[str] = []
    for m in reversed(messages):
        for c in m.calls:
            for key in ("cmd", "command"):
                if isinstance(c.args.get(key), str):
                    out.append(f"`{c.args[key]}`")
        out += refs_in(m.text)
    seen: set[str] = set()
    return [r for r in out if not (r in seen or seen.add(r)) and len(r) > 3]


def mentioned(messages: list[Message]) -> set[str]:
    """File:line references the user or the agent wrote themselves: the details they care about."""
    return {r.rsplit("/", 1)[-1] for m in messages if m.role == "assistant" or is_user(m)
            for r in refs_in(m.text) if LINE_REF.search(r)}


# A checkpoint request holds the whole conversation, and consecutive ones share nearly all of it (one
# worker runs every cell of a scenario): what these read of one message is worked out once per text.
LINE_REF = re.compile(r"\.\w+:\d+$")


@lru_cache(maxsize=1 << 14)
def refs_in(text: str) -> tuple[str, ...]:
    """REF's matches in `text`, in order."""
    return tuple(REF.findall(text))


@lru_cache(maxsize=1 << 14)
def output_lines(text: str) -> tuple[tuple[str, str, bool], ...]:
    """A tool output's lines: (the line, its first 200 characters stripped, whether it shows an error)."""
    return tuple((line, line.strip()[:200], ERROR.search(line) is not None) for line in text.splitlines())


def pitfalls(messages: list[Message], n: int = 5) -> list[str]:
    """Tool output lines, verbatim, most recent first: those at a place someone named, then error lines."""
    named, errors = mentioned(messages), []
    out: list[str] = []
    kept, erred = set(), set()        # out's and errors' lines, for the membership tests
    for m in reversed(messages):
        if m.role != "tool":
            continue
        here = [ref for ref in named if ref in m.text]     # a line names only what its message names
        for line, text, error in output_lines(m.text):
            if here and any(ref in line for ref in here) and text not in kept:
                out.append(text)
                kept.add(text)
            elif error and text not in erred:
                errors.append(text)
                erred.add(text)
    return out[:n] + [e for e in errors if e not in kept][:n]


def recalled_pitfalls(recollection: str) -> list[str]:
    """The pitfall lines of the previous scene, so a detail outlives the output it came from."""
    scene = recollection.split("### Scene", 1)[-1] if "### Scene" in recollection else ""
    block = scene.split("Pitfalls:", 1)[-1].split("References:", 1)[0] if "Pitfalls:" in scene else ""
    return [x[2:].strip() for x in block.splitlines() if x.startswith("- ")]
