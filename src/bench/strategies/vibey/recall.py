"""The checkpoint as the agent's own recollection: one message, each part tagged.

It is sent with the user role, as Claude Code sends its summary: providers
want the first message after the system prompt to be the user's, and an
assistant-role recollection followed by the tail's first assistant message
would put two assistant messages side by side. Its first line is a harness
source marker ([Harness: recollection]) and its text says it is the agent's
own recollection carried by the harness, in the first person, not the user's
words and not new instructions.

Scorers tell the user's verbatim words (`memo`) from model-written text
(`mind`, `scene`) and harness framing (`frame`) by these tags, so every span
of the message belongs to exactly one part.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from bench.harness.messages import Message, Part
from bench.harness.strategy import Session

from bench.strategies.vibey.carry import Skill
from bench.strategies.vibey.mind import template
from bench.strategies.vibey.texts import block


@dataclass
class State:
    """The last checkpoint that was taken into use."""
    n: int = 0
    mind: str = field(default_factory=template)
    memo: dict[int, str] = field(default_factory=dict)   # record number -> verbatim entry
    scene: str = ""
    skills: list[Skill] = field(default_factory=list)


def recollection(session: Session, state: State, files: str, since: int | None) -> Message:
    """`since`: the record number where the user's latest messages (the current request) start; they are
    in the context after this message and win over it."""
    def frame(key: str) -> Part:
        return Part("frame", "\n\n" + block("recollection.md", key, user=session.user) + "\n")

    parts = [Part("frame", block("recollection.md", "intro", n=state.n, user=session.user,
                                 session=session.scenario))]
    parts += [frame("mind"), Part("mind", state.mind.strip())]
    if state.memo:
        parts += [frame("memo"), Part("memo", "\n\n".join(state.memo[k] for k in sorted(state.memo)))]
    if state.scene:
        parts += [frame("scene"), Part("scene", state.scene.strip())]
    if since is not None:
        parts.append(Part("frame", "\n\n" + block("recollection.md", "current", user=session.user, number=since)))
    if state.skills:
        parts += [frame("skills"), Part("skills", "\n\n".join(f"#### {s.name}\n{s.text.strip()}"
                                                               for s in state.skills))]
    if files:
        parts += [frame("files"), Part("files", files)]
    return session.message(id=f"checkpoint-{state.n}", role="user", text="".join(p.text for p in parts),
                           tag="checkpoint", parts=parts)
