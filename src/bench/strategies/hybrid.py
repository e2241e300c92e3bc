"""Observation masking first, an LLM summary only when masking is not enough: the hybrid that
"The Complexity Trap" (Lindenbauer et al., 2025) found cheapest (7% below masking, 11% below
summaries alone, at a slightly higher solve rate).

Before every request the tool outputs older than the newest `keep` are masked exactly as
`masking` does it (this class is that strategy plus one step). Only when the masked request
still exceeds the trigger does the writer summarise the older part, the study's LLM-Summary:
the user's opening message stays, the previous summary and every turn since it but the newest
`keep_turns` go to the writer, unmasked (the study passes the unmasked context to the
summariser), with a state-summary prompt (prompts/hybrid.md); the context becomes the opening
message, the new summary, and those newest turns as masking left them. Fewer than `keep_turns`
stay when they alone would not fit under the trigger next to the summary.

The study triggers the summary every N = 43 turns, the point where masked contexts reached
about 30k tokens; a harness that knows token counts triggers on them instead. Outputs that do
not fit the writer's window unmasked are sent masked (oldest first), and turns that do not fit
even so are left out (oldest first). A writer error or an empty answer keeps the masked context
(`ok: false`, `error`); whatever still exceeds the harness limit loses its oldest turns, never
the opening message or the summary (recorded).
"""
from __future__ import annotations

from bench.harness.messages import Message
from bench.harness.strategy import Compaction, turn_units

from bench.strategies.edits import DROP_TARGET, fit
from bench.strategies.masking import Masking
from bench.strategies.summary import Summarizing, is_user, prompt

PROMPT = prompt("hybrid.md")


class Hybrid(Masking, Summarizing):
    def __init__(self, keep: int = 10, polling: int = 1, keep_turns: int = 10, budget: float | int = 0.1,
                 trigger: float | int | None = None):
        Masking.__init__(self, keep, polling)
        Summarizing.__init__(self, budget, trigger)
        if not isinstance(keep_turns, int) or keep_turns < 1:
            raise ValueError(f"keep_turns must be a whole number >= 1, got {keep_turns!r}")
        self.keep_turns = keep_turns

    def should_compact(self) -> bool:
        return bool(self.due()) or self.size() > min(self.trigger(), self.session.limit)

    async def compact(self) -> Compaction | None:
        comp = self.mask()
        if self.size() > self.trigger():
            await self.summarise(comp)
        fit(self, comp, pinned=len(self.pinned()))
        return comp if "masked" in comp.fields or comp.text or comp.error or comp.fallback else None

    def pinned(self) -> list[Message]:
        """The user's opening message (the task, never summarised away) and the current summary."""
        head = self.messages[:1]
        if not (head and is_user(head[0]) and self.session.record and head[0].id == self.session.record[0].id):
            head = []
        if len(self.messages) > len(head) and self.messages[len(head)].tag == "summary":
            head = self.messages[:len(head) + 1]
        return head

    async def summarise(self, comp: Compaction) -> None:
        pinned = self.pinned()
        older, tail = self.split(pinned)
        if not older:
            return
        sent, masked = self.unmasked([*pinned, *older], self.instruction(PROMPT, self.budget()))
        answer, sent, trimmed = await self.ask(PROMPT, sent)
        comp.fields.update(summarised=[m.id for m in older], sent_masked=masked, trimmed=[m.id for m in trimmed])
        if answer.error:
            comp.ok, comp.error = False, answer.error
            return
        self.rounds += 1
        summary = self.session.message(id=f"summary-{self.rounds}", role="user", text=answer.text, tag="summary")
        opening = [m for m in pinned if m.tag != "summary"]
        self.messages = [*opening, summary, *tail]
        comp.after, comp.text = self.size(), answer.text
        comp.problems.extend(answer.problems)
        comp.fields.update(budget=answer.budget, summary_tokens=summary.tokens, verbatim=[m.id for m in tail])

    def split(self, pinned: list[Message]) -> tuple[list[Message], list[Message]]:
        """(older, tail): the newest `keep_turns` whole turns stay, fewer when they alone would leave
        the context over the trigger next to a summary of the full budget."""
        units = turn_units(self.messages[len(pinned):])
        n = max(0, len(units) - self.keep_turns)
        opening = [m for m in pinned if m.tag != "summary"]
        room = int(DROP_TARGET * self.trigger()) - self.budget()
        while n < len(units) - 1 and self.session.size([*opening, *(m for u in units[n:] for m in u)]) > room:
            n += 1
        return [m for u in units[:n] for m in u], [m for u in units[n:] for m in u]

    def unmasked(self, messages: list[Message], instruction: Message) -> tuple[list[Message], list[str]]:
        """The messages with each masked output restored from the record, as long as the writer
        request still fits the window with its budget; the oldest stay masked when it would not."""
        full = {m.id: m for m in self.session.record if m.role == "tool"}
        out = [full.get(m.id, m) if m.tag == "placeholder" else m for m in messages]
        total = self.session.size([*out, instruction]) + self.budget()
        masked: list[str] = []
        for i, (m, was) in enumerate(zip(out, messages)):
            if total <= self.session.window:
                break
            if m is not was:
                total -= m.tokens - was.tokens
                out[i] = was
                masked.append(m.id)
        return out, masked
