"""The checkpoint as the agent's own recollection: one message, each part tagged.

Scorers tell the user's verbatim words (`memo`) from model-written text
(`mind`, `scene`) and harness framing (`frame`) by these tags, so every span
of the message belongs to exactly one part.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from bench.messages import Message, Part
from bench.strategy import Session

from .carry import Skill
from .mind import template
from .texts import block


@dataclass
class State:
    """The last checkpoint that was taken into use."""
    n: int = 0
    mind: str = field(default_factory=template)
    memo: dict[int, str] = field(default_factory=dict)   # record number -> verbatim entry
    scene: str = ""
    skills: list[Skill] = field(default_factory=list)


def recollection(session: Session, state: State, files: str, current: bool) -> Message:
    """`current`: user messages of the turn under way follow this message and win over it."""
    def frame(key: str) -> Part:
        return Part("frame", "\n\n" + block("recollection.md", key, user=session.user) + "\n")

    parts = [Part("frame", block("recollection.md", "intro", n=state.n, user=session.user))]
    parts += [frame("mind"), Part("mind", state.mind.strip())]
    if state.memo:
        parts += [frame("memo"), Part("memo", "\n\n".join(state.memo[k] for k in sorted(state.memo)))]
    if state.scene:
        parts += [frame("scene"), Part("scene", state.scene.strip())]
    if current:
        parts.append(Part("frame", "\n\n" + block("recollection.md", "current", user=session.user)))
    if state.skills:
        parts += [frame("skills"), Part("skills", "\n\n".join(f"#### {s.name}\n{s.text.strip()}"
                                                               for s in state.skills))]
    if files:
        parts += [frame("files"), Part("files", files)]
    return session.message(id=f"checkpoint-{state.n}", role="assistant", text="".join(p.text for p in parts),
                           tag="checkpoint", parts=parts)
