"""A starter compaction strategy: summarise the older turns, keep the newest ones verbatim.

compaction-bench calls `prepare()` before every request; the base class calls `compact()` when the
request would pass the trigger. Change `compact()` to try your own design, then run the suite and
the gate (see the commands `compaction-bench init` printed).
"""
from bench.errors import ModelError
from bench.strategy import Compaction, Strategy, drop_oldest, turn_units

ASK = ("Summarise the conversation above for the agent that will continue it, in at most {budget} "
       "tokens: the user's goals and constraints in their own words, decisions and why, facts found "
       "(paths, ids, numbers), what is done and what comes next.")


class MySummary(Strategy):
    calls_writer = True          # the run replays it under the writer stress profiles too

    def __init__(self, budget: int = 600, keep_last: int = 4):
        self.budget, self.keep_last = budget, keep_last

    def begin(self, session):
        super().begin(session)
        self.rounds = 0

    async def compact(self):
        before = self.size()
        units = turn_units(self.messages)             # an assistant turn travels with its tool results
        cut = max(0, len(units) - self.keep_last)
        old = [m for u in units[:cut] for m in u]
        recent = [m for u in units[cut:] for m in u]
        if not old:
            return None
        ask = self.session.message(id=f"ask-{self.rounds}", role="user", tag="instruction",
                                   text=ASK.format(budget=self.budget))
        try:
            reply = await self.session.writer.chat([self.session.system, *old, ask], max_tokens=self.budget,
                                                   purpose="summary")
        except ModelError as exc:
            return Compaction(before, before, ok=False, error=f"writer failed: {exc}")
        if not reply.text.strip():
            return Compaction(before, before, ok=False, error="the writer wrote no summary")
        self.rounds += 1
        summary = self.session.message(id=f"summary-{self.rounds}", role="user", tag="summary",
                                       text=reply.text.strip())
        self.messages = [summary, *recent]
        if self.size() > self.trigger():              # the recent turns alone are too big: drop the oldest
            self.messages, _ = drop_oldest(self.messages, self.size(), self.trigger())
        return Compaction(before=before, after=self.size(), text=summary.text)
