"""Anchored iterative summarisation, as Factory describes theirs: a persistent summary, merged, never rewritten.

The summary has fixed sections (session intent, file modifications, decisions made, next steps;
prompts/anchored.md). When the context passes the fill line (`fill`, Factory's T_max) the oldest
turns leave until the newest ones left fit `retain` (T_retained), and only that newly dropped span
goes to the writer, with the sections as they stand, to be merged in. The writer never sees the
old messages again, and a section the answer leaves out, or empties, keeps what it held: the
summary is updated, not regenerated, so what one merge misses the next cannot take away.

A writer error, an empty or garbled answer is a failed compaction: nothing changes while the request
fits, and when it does not the oldest turns are dropped unsummarised (recorded).
"""
from __future__ import annotations

from pathlib import Path

from bench.harness.messages import Message
from bench.harness.strategy import Compaction, Session, Strategy, turn_units
from bench.tokens import PER_MESSAGE

from bench.strategies import sectioned
from bench.strategies.edits import check_share, fit, window_share

PROMPTS = Path(__file__).parent / "prompts"
PROMPT = (PROMPTS / "anchored.md").read_text(encoding="utf-8").strip()
FRAME = (PROMPTS / "anchored_frame.md").read_text(encoding="utf-8").strip()
SECTIONS = sectioned.headings(PROMPT)


class Anchored(Strategy):
    calls_writer = True
    offline_players = (sectioned.offline_play,)
    PROMPT, FRAME, SECTIONS = PROMPT, FRAME, SECTIONS

    def __init__(self, fill: float | int | None = None, retain: float | int = 0.4, budget: float | int = 0.1):
        for name, value in (("fill", fill), ("retain", retain), ("budget", budget)):
            check_share(value, name)
        if not budget or not retain:
            raise ValueError("budget and retain must be above 0")
        self.fill_at, self.retain_at, self.budget_at = fill, retain, budget

    def begin(self, session: Session) -> None:
        super().begin(session)
        self.rounds = 0
        self.sections: dict[str, str] = {}

    def trigger(self) -> int:
        own = window_share(self.fill_at, self.session.window, "fill")
        return self.session.limit if own is None else min(own, self.session.limit)

    def budget(self) -> int:
        return max(1, window_share(self.budget_at, self.session.window, "budget"))

    async def compact(self) -> Compaction | None:
        before, budget = self.size(), self.budget()
        pinned = len(self.head())
        instruction = self.session.message(
            id=f"merge-request-{self.rounds + 1}", role="user", tag="instruction",
            text=self.PROMPT + "\n\n" + sectioned.block(self.SECTIONS, budget, current=self.sections))
        span, tail = self.split(self.messages[pinned:], instruction, budget)
        if not span:
            if before <= self.session.limit:
                return None
            return fit(self, Compaction(before, before, ok=False, error="nothing old enough to merge"), pinned)
        try:
            answer = await sectioned.ask(self, span, instruction, budget, self.SECTIONS, "summary")
        except sectioned.Failed as exc:
            return fit(self, Compaction(before, before, ok=False, error=str(exc)), pinned)
        problems = list(answer.problems)
        merged = {}
        for name in self.SECTIONS:
            new, old = answer.sections.get(name), self.sections.get(name)
            if sectioned.empty(new) and not sectioned.empty(old):
                problems.append(f"section {name!r} came back {'empty' if name in answer.sections else 'missing'}: "
                                "its earlier points are kept")
                new = old
            merged[name] = new or ""
        self.sections = merged
        self.rounds += 1
        text = sectioned.render(merged, self.SECTIONS)
        summary = sectioned.framed(self.session, id=f"summary-{self.rounds}", tag="summary", frame=self.FRAME,
                                   body=text)
        carried = self.carried(summary)
        self.messages = [*carried, *tail]
        comp = Compaction(before, self.size(), text=text, problems=problems,
                          fields={"budget": budget, "summary_tokens": summary.tokens,
                                  "merged": [m.id for m in span if m.id not in set(answer.left_out)],
                                  "left_out": answer.left_out, "verbatim": [m.id for m in tail]})
        return fit(self, comp, pinned=len(carried))

    def head(self) -> list[Message]:
        """The leading messages this strategy put there (the summary): never merged, never dropped."""
        n = int(bool(self.messages) and self.messages[0].tag == "summary")
        return self.messages[:n]

    def carried(self, summary: Message) -> list[Message]:
        """What leads the context after a merge: here the summary alone."""
        return [summary]

    def split(self, messages: list[Message], instruction: Message, budget: int) -> tuple[list[Message], list[Message]]:
        """(the span to merge, the tail kept verbatim): the newest whole turns within `retain` stay
        (the newest always); more stay when the merge request would not fit the window."""
        retain = window_share(self.retain_at, self.session.window, "retain")
        units = turn_units(messages)
        n, kept = len(units), 0
        while n > 1 and kept + (cost := sum(m.tokens + PER_MESSAGE for m in units[n - 1])) <= retain:
            kept += cost
            n -= 1
        if n == len(units):    # even the newest turn is over `retain`: it stays anyway
            n -= 1
        span = [m for u in units[:n] for m in u]
        size = self.session.size([*span, instruction])
        while n > 0 and size + budget > self.session.window:
            n -= 1
            size -= sum(m.tokens + PER_MESSAGE for m in units[n])
        return [m for u in units[:n] for m in u], [m for u in units[n:] for m in u]
