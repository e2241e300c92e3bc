"""Naive rewrite-summary: the common approach the seeds criticise, kept as the baseline.

At the trigger the writer gets the previous summary plus every message since,
with a generic "summarise everything so far" instruction (prompts/naive.md) and
no special care for constraints or provenance; its answer replaces the whole
history as one user-role message tagged ``summary``. The last `keep_last`
messages may stay verbatim (whole turns only, so a call keeps its result).
Each summary is thus a summary of a summary: what drifts or is dropped once is
gone for good, which is exactly what the scorers should see.

The writer request is the agent's own prefix (system prompt, then the context)
plus the instruction, so a provider cache can serve it. If it would not fit the
window together with the summary's budget, the newest turns stay verbatim
instead of going to the writer. A failed or empty summary changes nothing; if
the request then no longer fits, the oldest turns are dropped (recorded).
"""
from __future__ import annotations

from bench.harness.messages import Message
from bench.harness.strategy import Compaction, turn_units

from bench.strategies.edits import fit
from bench.strategies.summary import Summarizing, draft, prompt

PROMPT = prompt("naive.md")


class Naive(Summarizing):
    def __init__(self, budget: float | int = 0.1, keep_last: int = 0, trigger: float | int | None = None):
        super().__init__(budget, trigger)
        if not isinstance(keep_last, int) or keep_last < 0:
            raise ValueError(f"keep_last must be a whole number >= 0, got {keep_last!r}")
        self.keep_last = keep_last

    async def compact(self) -> Compaction | None:
        before, budget = self.size(), self.budget()
        pinned = int(bool(self.messages) and self.messages[0].tag == "summary")
        instruction = self.instruction(PROMPT, budget)
        head, tail = self.split(instruction, budget)
        if len(head) <= pinned:   # only the previous summary could go: nothing to do unless it overflows
            if before <= self.session.limit:
                return None
            return self.failed(before, "nothing new to summarise", pinned)
        answer = await draft(self.session, head, instruction, budget)
        if answer.error:
            return self.failed(before, answer.error, pinned)
        text = answer.text
        self.rounds += 1
        summary = self.session.message(id=f"summary-{self.rounds}", role="user", text=text, tag="summary")
        self.messages = [summary, *tail]
        comp = Compaction(before, self.size(), text=text, problems=answer.problems,
                          fields={"budget": budget, "summary_tokens": summary.tokens,
                                  "summarised": [m.id for m in head], "verbatim": [m.id for m in tail]})
        return fit(self, comp, pinned=1)

    def split(self, instruction: Message, budget: int) -> tuple[list[Message], list[Message]]:
        """(to summarise, kept verbatim): the last `keep_last` messages in whole turns stay, and
        more stay while the writer request plus the summary would overflow the window."""
        units = turn_units(self.messages)
        n, kept = len(units), 0
        while n > 0 and kept + len(units[n - 1]) <= self.keep_last:
            kept += len(units[n - 1])
            n -= 1
        head = [m for u in units[:n] for m in u]
        while n > 1 and self.session.size([*head, instruction]) + budget > self.session.window:
            n -= 1
            head = head[:len(head) - len(units[n])]
        return head, [m for u in units[n:] for m in u]
