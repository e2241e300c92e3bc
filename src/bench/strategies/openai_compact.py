"""The OpenAI Responses API's compaction (`/responses/compact`, or `context_management` with a
`compact_threshold`), as its documentation describes it: past the threshold every user message
of the input is kept and everything else — assistant messages, tool calls and results, earlier
compaction items — is replaced by one compaction item the model wrote. The item is opaque
(encrypted) to the client; the next request is the kept user messages, then the item, then what
comes after.

Offline the item is the writer's answer to prompts/openai_compact.md, tagged `compaction`: the
scorers read it as model-written text, never as the user's words. It goes out with the assistant
role, since it is the model's own state, not something the user said.

"User messages" are decided the only way the API can: by wire role (`keep: role`, the default).
The harness sends background messages (watch, cron, another session ...) with the user role, so
the API keeps them word for word like the user's own; behind their `[Harness: <source>]` marker
they remain labelled, but a harness without markers (`markers=false`) hands them on as plain
user text, and the scorers count that as the leak it is. `keep: user` keeps only record type
`user` (the harness knows what the API does not) and lets background go into the item.

Nothing bounds the kept messages, as nothing in the documentation does: when they alone no
longer fit, the oldest turns are dropped (recorded). A writer request too big for the window
loses its oldest turns first; a writer error or an empty answer changes nothing.
"""
from __future__ import annotations

from bench.harness.messages import Message

from bench.strategies.summary import Summarizing, is_user, prompt

PROMPT = prompt("openai_compact.md")
ITEM = "compaction"
KEEP = ("role", "user")


class OpenAICompact(Summarizing):
    trigger_name = "compact_threshold"
    PROMPT = PROMPT

    def __init__(self, compact_threshold: float | int | None = None, budget: float | int = 0.1,
                 keep: str = "role"):
        super().__init__(budget, compact_threshold)
        if keep not in KEEP:
            raise ValueError(f"keep must be one of {', '.join(KEEP)}, got {keep!r}")
        self.keep = keep

    def kept(self, m: Message) -> bool:
        """A message the compaction keeps verbatim: a user-role input message (`role`), or only the
        human user's own (`user`); an earlier compaction item is never one."""
        if m.tag == ITEM:
            return False
        return m.role == "user" if self.keep == "role" else is_user(m)

    def rebuild(self, text: str) -> tuple[list[Message], dict]:
        kept = [m for m in self.messages if self.kept(m)]
        item = self.session.message(id=f"compaction-{self.rounds}", role="assistant", text=text, tag=ITEM)
        return [*kept, item], {"item_tokens": item.tokens, "kept": [m.id for m in kept],
                               "background_kept": [m.id for m in kept if not is_user(m)]}
