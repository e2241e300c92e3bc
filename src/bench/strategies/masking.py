"""Observation masking: SWE-agent's `LastNObservations`, the "Complexity Trap" baseline.

The last `keep` tool outputs stay verbatim; every older one becomes
``Old environment output: (N lines omitted)``, N being the output's line count.
It runs before every request, not at a threshold: the study found this simple
rule about as good as LLM summaries at half the cost. `polling` > 1 moves the
masking window in steps of that many outputs (as SWE-agent's option does), so
the prompt prefix, and with it the provider's cache, survives several requests.
A compaction is recorded only when something new was masked; if the masked
context still exceeds the harness limit, the oldest turns are dropped (recorded).
"""
from __future__ import annotations

from bench.harness.messages import Message
from bench.harness.strategy import Compaction, Strategy

from bench.strategies.edits import fit, replace_results, tool_results


def masked_text(msg: Message) -> str:
    return f"Old environment output: ({len(msg.text.splitlines())} lines omitted)"


class Masking(Strategy):
    def __init__(self, keep: int = 10, polling: int = 1):
        if not isinstance(keep, int) or keep < 0:
            raise ValueError(f"keep must be a whole number >= 0, got {keep!r}")
        if not isinstance(polling, int) or polling < 1:
            raise ValueError(f"polling must be a whole number >= 1, got {polling!r}")
        self.keep, self.polling = keep, polling

    def should_compact(self) -> bool:
        return bool(self.due()) or self.size() > self.session.limit

    def due(self) -> list[Message]:
        """Outputs to mask now: all but the newest `keep`, the boundary moving `polling` at a time."""
        outputs = [m for m in self.messages if m.role == "tool"]
        masked = max(0, (len(outputs) // self.polling) * self.polling - self.keep)
        fresh = {m.id for m in tool_results(self.messages)}
        return [m for m in outputs[:masked] if m.id in fresh]

    def mask(self) -> Compaction:
        """The masking step alone, before any fallback (hybrid builds on it)."""
        before = self.size()
        due = self.due()
        comp = Compaction(before=before, after=before)
        if due:
            replace_results(self, {m.id for m in due}, masked_text)
            comp.after = self.size()
            comp.fields.update(masked=[m.id for m in due], lines={m.id: len(m.text.splitlines()) for m in due})
        return comp

    async def compact(self) -> Compaction | None:
        comp = fit(self, self.mask())
        return comp if "masked" in comp.fields or comp.fallback else None
