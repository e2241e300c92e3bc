"""A writer answer under named headings: how it is asked for, read back, and obtained.

claude_code, anchored and handoff all ask the writer for text under fixed headings (their own
prompt files name them). The format block (prompts/format.md) is the same for all three, so one
reader here and one offline player (offline.py) serve them; each strategy decides what a missing
section means for it. An answer with none of the headings asked for is garbled: the strategy
records a failure, exactly as for a writer error or an empty answer. So is an answer that does not
do the task (bench.harness.answers): cut at max_tokens, a loop, "None." under every heading, or
sections that carry nothing of the conversation (a chat reply, the instruction echoed).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from bench.errors import ModelError
from bench.harness import answers
from bench.harness.messages import Message, Part
from bench.harness.strategy import Session, Strategy, turn_units
from bench.tokens import PER_MESSAGE

PROMPTS = Path(__file__).parent / "prompts"
FORMAT = (PROMPTS / "format.md").read_text(encoding="utf-8").strip()
CUE = FORMAT.splitlines()[0]                 # the first line says: an answer in sections follows
CURRENT = (PROMPTS / "current.md").read_text(encoding="utf-8").strip()
FOCUS = (PROMPTS / "focus.md").read_text(encoding="utf-8").strip()
OPEN, CLOSE = "<current-sections>", "</current-sections>"
HEADING = re.compile(r"^\s{0,3}#{1,4}\s+(.+?)\s*#*\s*$")
NONE = "None."
# What an LLM writes around its sections: a scratchpad to drop, a wrapper to open.
ANALYSIS = re.compile(r"<analysis>.*?(</analysis>|$)", re.S | re.I)
WRAPPER = re.compile(r"<summary>(.*?)(</summary>|$)", re.S | re.I)


class Failed(Exception):
    """The writer gave nothing usable: an error, an empty or garbled answer, no room to ask."""


@dataclass
class Answer:
    text: str                                  # the answer as kept (scratchpad dropped, cut to budget)
    sections: dict[str, str]                   # heading -> body, in the order asked, found ones only
    problems: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)   # ids not sent: the request would not fit


def headings(template: str) -> list[str]:
    """The `## ` lines of a prompt's section list, in order."""
    return [m.group(1) for line in template.splitlines() if (m := HEADING.match(line)) and line.lstrip().startswith("## ")]


def block(names: list[str], budget: int, *, current: dict[str, str] | None = None, focus: str | None = None) -> str:
    """The format block that ends an instruction: the headings, optionally the sections so far and a focus."""
    out = [FORMAT.replace("{headings}", "\n".join(f"## {n}" for n in names)).replace("{budget}", str(budget))]
    if current is not None:
        out += ["", CURRENT, OPEN, render(current, names), CLOSE]
    if focus:
        out += ["", FOCUS.replace("{focus}", focus.strip())]
    return "\n".join(out)


def key(name: str) -> str:
    """A heading as compared: case, numbering ("1."), emphasis and punctuation ignored."""
    name = re.sub(r"^\s*(\d+[.)]\s*)", "", name)
    return re.sub(r"[^a-z0-9]+", " ", name.lower()).strip()


def clean(text: str) -> str:
    """The answer without its scratchpad; the inside of a <summary> wrapper when there is one."""
    text = ANALYSIS.sub("", text)
    wrapped = WRAPPER.search(text)
    return (wrapped.group(1) if wrapped else text).strip()


def parse(text: str, names: list[str]) -> tuple[dict[str, str], list[str]]:
    """(sections found, problems). Text under an unknown heading stays with the section before it."""
    wanted = {key(n): n for n in names}
    found: dict[str, list[str]] = {}
    current: str | None = None
    problems: list[str] = []
    for line in text.splitlines():
        m = HEADING.match(line)
        if m and key(m.group(1)) in wanted:
            current = wanted[key(m.group(1))]
            if current in found:
                problems.append(f"section {current!r} given twice: the parts are joined")
            found.setdefault(current, [])
            continue
        if current is not None:
            found[current].append(line)
    missing = [n for n in names if n not in found]
    if missing and found:
        problems.append("missing sections: " + ", ".join(repr(n) for n in missing))
    return {n: "\n".join(found[n]).strip() for n in names if n in found}, problems


def framed(session: Session, *, id: str, tag: str, frame: str, body: str, part: str | None = None) -> Message:
    """A strategy-made user-role message: the harness's frame (tagged `frame`), then `body` tagged `part`
    (default: the message's tag), so scorers tell the harness's wording from the writer's."""
    head = frame.rstrip() + "\n\n"
    return session.message(id=id, role="user", text=head + body, tag=tag,
                           parts=(Part("frame", head), Part(part or tag, body)))


def render(sections: dict[str, str], names: list[str]) -> str:
    return "\n\n".join(f"## {n}\n{sections.get(n) or NONE}" for n in names)


def empty(body: str | None) -> bool:
    return not body or key(body) in ("", "none", "n a", "nothing")


async def ask(strategy: Strategy, inputs: list[Message], instruction: Message, budget: int, names: list[str],
              purpose: str, pinned: int = 0) -> Answer:
    """One writer call: system prompt, `inputs`, `instruction`, with max_tokens = `budget`. The oldest
    whole turns of `inputs` (never its first `pinned` messages: an earlier summary) stay out when the
    request plus the budget would not fit the window.
    Raises Failed for a writer error, an empty answer, or one with none of `names` as a heading."""
    session = strategy.session
    head, inputs = inputs[:pinned], inputs[pinned:]
    units = turn_units(inputs)
    start, size = 0, session.size([*head, *inputs, instruction])
    while start < len(units) and size + budget > session.window:
        size -= sum(m.tokens + PER_MESSAGE for m in units[start])
        start += 1
    if size + budget > session.window:
        raise Failed("the writer request does not fit the window even without the conversation")
    sent = head + [m for u in units[start:] for m in u]
    left_out = [m.id for u in units[:start] for m in u]
    try:
        reply = await session.writer.chat([session.system, *sent, instruction], max_tokens=budget, purpose=purpose)
    except ModelError as exc:
        raise Failed(f"model failed: {exc}") from exc
    text = clean(reply.text)
    if not text:
        raise Failed("the writer returned no text")
    if answers.cut(reply.finish):
        raise Failed("not an answer: the answer was cut at max_tokens (finish: length)")
    if answers.loops(text, [m.text for m in sent]):
        raise Failed("not an answer: the answer is a repetition loop")
    problems = []
    tok = session.tok
    if tok.count(text) > budget:
        problems.append(f"answer of {tok.count(text)} tokens exceeds its budget of {budget}: cut to it")
        text = tok.truncate(text, budget)
    sections, found = parse(text, names)
    if not sections:
        raise Failed("garbled answer: none of the sections asked for (" + ", ".join(names) + ")")
    bodies = [b for b in sections.values() if not empty(b)]
    if not bodies:
        raise Failed("not an answer: every section is empty")
    # what the answer is about is the conversation sent and the sections so far (<current-sections>), which
    # a merge carries on; but a merge that adds nothing of its span merged nothing
    current, template = _split_current(instruction.text)
    body, exclude, span = "\n".join(bodies), [session.system.text, template], [m.text for m in sent]
    if not answers.carries(body, [*current, *span], exclude) or (current and not answers.carries(body, span, exclude, 1)):
        raise Failed("not an answer: the sections carry nothing of the conversation (a chat reply, an echo of the "
                     "instruction, or invented text)")
    return Answer(text=text, sections=sections, problems=problems + found, left_out=left_out)


def _split_current(instruction: str) -> tuple[list[str], str]:
    """([the sections so far], the rest of the instruction, their tags included)."""
    start, end = instruction.find(OPEN), instruction.rfind(CLOSE)
    if start < 0 or end < start:
        return [], instruction
    return [instruction[start + len(OPEN):end]], instruction[:start + len(OPEN)] + instruction[end:]
