"""memory_file: the seed 001 practice of keeping what must survive in files, re-read after every compaction.

Two files a person can read. The rules file (`memory.rules_file`) holds the user's standing rules and
what they asked to remember, copied from their messages by the harness, with its own budget and an
announced cut. The progress file (workstreams, progress, decisions with reasons, next step) is kept
like anchored's summary: at each compaction the writer merges only the span that leaves the context
into it, and a section it drops keeps its earlier points. After a compaction the context is the
rules file, the progress file and the newest turns; between compactions both stay where they are,
so the prompt prefix (and the provider cache) is stable.
"""
from __future__ import annotations

from bench.harness.messages import Message
from bench.harness.strategy import Compaction
from bench.strategies import sectioned
from bench.strategies.anchored import Anchored
from bench.strategies.edits import check_share, window_share
from bench.strategies.memory import rules_file
from bench.strategies.summary import prompt

PROMPT = prompt("progress.md").strip()
FRAME = prompt("progress_frame.md").strip()


class MemoryFile(Anchored):
    PROMPT, FRAME, SECTIONS = PROMPT, FRAME, sectioned.headings(PROMPT)

    def __init__(self, fill: float | int | None = None, retain: float | int = 0.3, budget: float | int = 0.1,
                 rules_budget: float | int = 0.1):
        super().__init__(fill, retain, budget)
        check_share(rules_budget, "rules_budget")
        if not rules_budget:
            raise ValueError("rules_budget must be above 0")
        self.rules_at = rules_budget
        self.cut: list[int] = []

    def head(self) -> list[Message]:
        n = 0
        while n < len(self.messages) and n < 2 and self.messages[n].tag in ("memory", "summary"):
            n += 1
        return self.messages[:n]

    def carried(self, summary: Message) -> list[Message]:
        budget = max(1, window_share(self.rules_at, self.session.window, "rules_budget"))
        rules, self.cut = rules_file(self.session, f"memory-{self.rounds}", budget)
        return [rules, summary]

    async def compact(self) -> Compaction | None:
        comp = await super().compact()
        if comp is not None and comp.ok:
            comp.fields["rules_cut"] = self.cut
        return comp
