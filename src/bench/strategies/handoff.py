"""Handoff: a new session instead of compaction (Amp's replacement for its /compact).

At the trigger the writer, given the whole context, drafts a handoff for the agent of a new session
(goal, decisions and their reasons, progress, next step, pitfalls; prompts/handoff.md). The new
session's context is the system prompt, that handoff and the user's latest request copied verbatim
from the record; nothing else comes along: no recent turns, no tool output, no earlier user message.
It is the smallest context after a compaction of the built-in strategies, and the scores show what
that costs: whatever the handoff does not restate is gone.

A writer error, an empty or garbled answer is a failed handoff: the session goes on while the
request fits, and when it does not the oldest turns are dropped (recorded).
"""
from __future__ import annotations

from pathlib import Path

from bench.harness.messages import Message
from bench.harness.strategy import Compaction

from bench.strategies import sectioned
from bench.strategies.edits import fit, window_share
from bench.strategies.summary import Summarizing

PROMPTS = Path(__file__).parent / "prompts"
PROMPT = (PROMPTS / "handoff.md").read_text(encoding="utf-8").strip()
FRAME = (PROMPTS / "handoff_frame.md").read_text(encoding="utf-8").strip()
SECTIONS = sectioned.headings(PROMPT)


class Handoff(Summarizing):
    """Summarizing's trigger and budget; its own compaction (a sectioned handoff, not a summary)."""
    offline_players = (sectioned.offline_play,)

    def __init__(self, trigger: float | int | None = None, budget: float | int = 0.05):
        super().__init__(budget, trigger)

    def trigger(self) -> int:
        own = window_share(self.trigger_at, self.session.window, "trigger")
        return self.session.limit if own is None else min(own, self.session.limit)

    async def compact(self) -> Compaction | None:
        before, budget = self.size(), self.budget()
        pinned = int(bool(self.messages) and self.messages[0].tag == "handoff")
        request = self.latest_request()
        if all(m.tag == "handoff" or m is request for m in self.messages):
            return fit(self, Compaction(before, before, ok=False, error="nothing new to hand off"), pinned)
        instruction = self.session.message(id=f"handoff-request-{self.rounds + 1}", role="user", tag="instruction",
                                           text=PROMPT + "\n\n" + sectioned.block(SECTIONS, budget))
        try:
            answer = await sectioned.ask(self, self.messages, instruction, budget, SECTIONS, "handoff", pinned=pinned)
        except sectioned.Failed as exc:
            return fit(self, Compaction(before, before, ok=False, error=str(exc)), pinned)
        self.rounds += 1
        text = sectioned.render(answer.sections, SECTIONS)
        doc = sectioned.framed(self.session, id=f"handoff-{self.rounds}", tag="handoff", frame=FRAME, body=text)
        self.messages = [doc, *([request] if request is not None else [])]
        comp = Compaction(before, self.size(), text=text, problems=answer.problems,
                          fields={"budget": budget, "handoff_tokens": doc.tokens, "left_out": answer.left_out,
                                  "user_request": request.id if request is not None else None})
        return fit(self, comp, pinned=1)

    def latest_request(self) -> Message | None:
        """The user's latest message, as the record holds it (background messages are not the user's)."""
        return next((m for m in reversed(self.session.record) if m.tag == "user"), None)
