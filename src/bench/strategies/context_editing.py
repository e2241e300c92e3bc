"""Anthropic-style context editing (`clear_tool_uses_20250919`), done client-side, no model call.

Above `trigger` request tokens, every tool result older than the `keep` most
recent tool uses is replaced by a short placeholder (optionally the call's
arguments too), but only when that frees at least `clear_at_least` tokens,
because each clear rewrites the prompt and costs a cache write. When the
request exceeds the harness limit, old results are cleared whatever `trigger`
and `clear_at_least` say (recorded as `over_limit`), before any turn is dropped.
Cleared results stay cleared, so between clears the prompt prefix is stable. A
call keeps its (placeholder) result, so no call or result is ever orphaned.
When clearing cannot bring the request under the harness limit, the oldest
turns are dropped and the fallback is recorded.
"""
from __future__ import annotations

from typing import Sequence

from bench.harness.strategy import Compaction, Strategy

from bench.strategies.edits import check_share, fit, replace_results, tool_results, window_share

PLACEHOLDER = "[Old tool result cleared to save context]"


class ContextEditing(Strategy):
    def __init__(self, trigger: float | int = 0.5, keep: int = 3, clear_at_least: float | int = 0.05,
                 exclude_tools: Sequence[str] = (), clear_tool_inputs: bool = False,
                 placeholder: str = PLACEHOLDER):
        check_share(trigger, "trigger")
        check_share(clear_at_least, "clear_at_least")
        if not isinstance(keep, int) or keep < 0:
            raise ValueError(f"keep must be a whole number >= 0, got {keep!r}")
        if isinstance(exclude_tools, str) or not all(isinstance(t, str) for t in exclude_tools):
            raise ValueError(f"exclude_tools must be a list of tool names, got {exclude_tools!r}")
        if not placeholder.strip():
            raise ValueError("placeholder must not be empty")
        self.trigger_at, self.keep, self.clear_at_least_at = trigger, keep, clear_at_least
        self.exclude_tools = frozenset(exclude_tools)
        self.clear_tool_inputs = bool(clear_tool_inputs)
        self.placeholder = placeholder

    def trigger(self) -> int:
        return window_share(self.trigger_at, self.session.window, "trigger")

    def should_compact(self) -> bool:
        size = self.size()
        return size > self.trigger() or size > self.session.limit

    async def compact(self) -> Compaction | None:
        before = self.size()
        results = tool_results(self.messages)
        recent = {m.id for m in self.recent_uses()}
        cleared = [m.id for m in results if m.id not in recent and m.tool not in self.exclude_tools]
        comp = Compaction(before=before, after=before)
        # Over the harness limit, clearing comes before dropping whole turns (user messages
        # included), whatever trigger and clear_at_least say: they tune when a clear is worth
        # a cache write, not whether the request may lose the user's words instead.
        forced = before > self.session.limit
        if cleared and (before > self.trigger() or forced):
            saved = self.messages
            inputs = replace_results(self, set(cleared), lambda m: self.placeholder, self.clear_tool_inputs)
            freed = before - self.size()
            if forced or freed >= window_share(self.clear_at_least_at, self.session.window, "clear_at_least"):
                comp.after = self.size()
                comp.fields.update(cleared=cleared, inputs_cleared=inputs, freed=freed)
                if forced:
                    comp.fields["over_limit"] = True
            else:
                self.messages = saved     # too little to pay for the cache write: not applied
        fit(self, comp)
        return comp if "cleared" in comp.fields or comp.fallback else None

    def recent_uses(self):
        """The `keep` most recent tool uses (a result, cleared or not, stands for its call)."""
        uses = [m for m in self.messages if m.role == "tool"]
        return uses[-self.keep:] if self.keep else []
