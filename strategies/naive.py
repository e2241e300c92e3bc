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

from pathlib import Path

from bench.errors import ModelError
from bench.messages import Message
from bench.strategy import Compaction, Session, Strategy, turn_units

from .edits import check_share, fit, window_share

PROMPT = (Path(__file__).parent / "prompts" / "naive.md").read_text(encoding="utf-8")


class Naive(Strategy):
    calls_writer = True

    def __init__(self, budget: float | int = 0.1, keep_last: int = 0, trigger: float | int | None = None):
        check_share(budget, "budget")
        check_share(trigger, "trigger")
        if not budget:
            raise ValueError("budget must be above 0")
        if not isinstance(keep_last, int) or keep_last < 0:
            raise ValueError(f"keep_last must be a whole number >= 0, got {keep_last!r}")
        self.budget_at, self.keep_last, self.trigger_at = budget, keep_last, trigger

    def begin(self, session: Session) -> None:
        super().begin(session)
        self.rounds = 0

    def trigger(self) -> int:
        own = window_share(self.trigger_at, self.session.window, "trigger")
        return self.session.limit if own is None else own

    def should_compact(self) -> bool:
        size = self.size()
        return size > self.trigger() or size > self.session.limit

    def budget(self) -> int:
        return max(1, window_share(self.budget_at, self.session.window, "budget"))

    async def compact(self) -> Compaction | None:
        before, budget, tok = self.size(), self.budget(), self.session.tok
        pinned = int(bool(self.messages) and self.messages[0].tag == "summary")
        instruction = self.session.message(id=f"summary-request-{self.rounds + 1}", role="user",
                                           text=PROMPT.replace("{budget}", str(budget)), tag="instruction")
        head, tail = self.split(instruction, budget)
        if len(head) <= pinned:   # only the previous summary could go: nothing to do unless it overflows
            if before <= self.session.limit:
                return None
            return fit(self, Compaction(before, before, ok=False, error="nothing new to summarise"), pinned)
        try:
            reply = await self.session.writer.chat([self.session.system, *head, instruction], max_tokens=budget,
                                                   purpose="summary")
        except ModelError as exc:
            return fit(self, Compaction(before, before, ok=False, error=f"model failed: {exc}"), pinned)
        text = reply.text.strip()
        if not text:
            return fit(self, Compaction(before, before, ok=False, error="the writer returned no summary"), pinned)
        problems = []
        if tok.count(text) > budget:
            problems.append(f"summary of {tok.count(text)} tokens exceeds its budget of {budget}: cut to it")
            text = tok.truncate(text, budget)
        self.rounds += 1
        summary = self.session.message(id=f"summary-{self.rounds}", role="user", text=text, tag="summary")
        self.messages = [summary, *tail]
        comp = Compaction(before, self.size(), text=text, problems=problems,
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
