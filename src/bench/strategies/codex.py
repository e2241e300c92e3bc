"""Codex CLI's compaction, as its open-source code (codex-rs/core/src/compact.rs) does it.

At the trigger (Codex: 90% of the window, the harness default here) the writer gets the whole
context plus a handoff prompt (prompts/codex.md) asking for a summary a model that resumes the
work can continue from. The new history is the initial context (the system prompt, which the
harness rebuilds), then the most recent user messages verbatim within `user_budget` tokens
(20,000, Codex's COMPACT_USER_MESSAGE_MAX_TOKENS), chosen newest first and put back in their
order, then the summary as a user message behind a fixed prefix (prompts/codex_prefix.md) that
says another model wrote it. The first message over the remaining budget is cut in the middle
(head and tail kept, a "…N tokens truncated…" note between) and nothing older is kept.

What a "user message" is decides what survives. Codex keeps user-role messages except the ones
its harness injects (AGENTS.md instructions, environment context: recognised by their tags) and
earlier summaries (recognised by the prefix). Here the harness says it on every message: only
record type `user` counts; background messages (watch, cron, ... with the user role on the wire)
are harness injections and go into the summary like the rest. Everything else — assistant
turns, tool output, background — survives only as far as the summary keeps it.

A writer request too big for the window loses its oldest turns first, as Codex drops the oldest
history item when the model refuses a compaction request as too long. A writer error or an
empty answer changes nothing (where Codex would install an empty summary); when the request
then no longer fits, or the kept messages plus the summary do not, the oldest turns are dropped
(recorded).
"""
from __future__ import annotations

from bench.harness.messages import Message, Part
from bench.strategies.edits import check_share, window_share
from bench.strategies.summary import Summarizing, is_user, prompt

PROMPT = prompt("codex.md")
PREFIX = prompt("codex_prefix.md").strip()


class Codex(Summarizing):
    PROMPT = PROMPT

    def __init__(self, user_budget: float | int = 20000, budget: float | int = 0.1,
                 trigger: float | int | None = None):
        super().__init__(budget, trigger)
        check_share(user_budget, "user_budget")
        self.user_budget_at = user_budget

    def rebuild(self, text: str) -> tuple[list[Message], dict]:
        kept, cut = self.recent_user_messages()
        summary = self.session.message(id=f"summary-{self.rounds}", role="user", text=f"{PREFIX}\n{text}",
                                       tag="summary", parts=(Part("frame", PREFIX + "\n"), Part("summary", text)))
        return [*kept, summary], {"summary_tokens": summary.tokens, "user_budget": self.user_tokens(),
                                  "kept": [m.id for m in kept], "cut": cut}

    def user_tokens(self) -> int:
        return window_share(self.user_budget_at, self.session.window, "user_budget")

    def recent_user_messages(self) -> tuple[list[Message], str | None]:
        """(kept, id of the one cut): the user's messages newest first while they fit the budget; the
        first one over it is cut in the middle to what is left, and nothing older is kept."""
        remaining, kept, cut = self.user_tokens(), [], None
        for m in reversed([m for m in self.messages if is_user(m)]):
            if remaining <= 0:
                break
            if m.tokens <= remaining:
                kept.append(m)
                remaining -= m.tokens
                continue
            kept.append(self.cut(m, remaining))
            cut = m.id
            break
        return kept[::-1], cut

    def cut(self, m: Message, limit: int) -> Message:
        """Codex's middle truncation: head and tail of the user's text within `limit` tokens with a
        note of how many tokens were left out between them. A message cut before is cut again from
        its full text in the record, so notes never nest."""
        tok = self.session.tok
        full = next((r for r in self.session.record if r.id == m.id), m) if m.parts else m
        keep = max(0, limit - tok.count(f"…{full.tokens} tokens truncated…"))
        head = tok.truncate(full.text, keep // 2)
        tail = tok.tail(full.text, keep - keep // 2)
        note = f"…{max(0, full.tokens - tok.count(head) - tok.count(tail))} tokens truncated…"
        parts = [p for p in (Part("user", head), Part("frame", note), Part("user", tail)) if p.text]
        return self.session.message(id=m.id, role=m.role, text="".join(p.text for p in parts), tag=m.tag,
                                    t=m.t, parts=parts)
