"""What the summarising strategies (naive, codex, openai_compact, hybrid) share: their prompt files,
one writer call under a budget, a writer request that fits the window, and which messages are the
user's own words.

A failed writer call is data, not an exception: the caller records it on its Compaction (`ok:
false`, `error`) and decides its own fallback, so one bad answer never ends a replay. So is an
answer that does not do the task (bench.harness.answers: cut at max_tokens, empty, a loop, a chat
reply or an echo that carries nothing of the conversation). An answer over its budget in the bench's
tokens, but not cut by the model, is cut to it and the cut listed as a problem.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bench.errors import ModelError
from bench.harness.answers import events, problem
from bench.harness.messages import Message
from bench.harness.strategy import Compaction, Session, Strategy, drop_oldest

from bench.strategies.edits import check_share, fit, window_share

PROMPTS = Path(__file__).parent / "prompts"


def prompt(name: str) -> str:
    """A prompt file next to the strategies (found relative to this module, wherever it is installed)."""
    return (PROMPTS / name).read_text(encoding="utf-8")


def is_user(m: Message) -> bool:
    """The human user's own message as the harness recorded it (record type `user`): never a
    background message, which reaches the model with the user role but is not the user's words,
    and never text a strategy wrote. A copy a strategy cut keeps the tag and holds only the user's
    words plus its cut note."""
    return m.tag == "user"


@dataclass
class Draft:
    """The writer's answer, or why there is none."""
    text: str = ""
    error: str | None = None
    budget: int = 0             # the answer's budget as asked
    problems: list[str] = field(default_factory=list)


async def draft(session: Session, messages: list[Message], instruction: Message, budget: int,
                purpose: str = "summary") -> Draft:
    """Ask the writer for one text of at most `budget` tokens about the system prompt plus `messages`."""
    try:
        reply = await session.writer.chat([session.system, *messages, instruction], max_tokens=budget,
                                          purpose=purpose)
    except ModelError as exc:
        return Draft(error=f"model failed: {exc}")
    text = reply.text.strip()
    if not text:
        return Draft(error="the writer returned no summary")
    why = problem(text, reply.finish, [m.text for m in messages], [session.system.text, instruction.text],
                  events(messages))
    if why:
        return Draft(error=f"not a summary: {why}")
    out = Draft(text=text, budget=budget)
    n = session.tok.count(text)
    if n > budget:
        out.problems.append(f"summary of {n} tokens exceeds its budget of {budget}: cut to it")
        out.text = session.tok.truncate(text, budget)
    return out


def writer_view(session: Session, messages: list[Message], instruction: Message,
                budget: int) -> tuple[list[Message], list[Message]]:
    """(sent, trimmed): what of `messages` the writer request can hold. The oldest whole turns stay
    out until the request leaves the window room for at least half the answer's budget, as Codex
    trims the oldest items of a compaction request the model refused as too long (the newest turn
    always goes)."""
    total = session.size([*messages, instruction])
    return drop_oldest(messages, total, session.window - max(1, budget // 2))


class Summarizing(Strategy):
    """A strategy that compacts at a trigger by asking the writer for one text under a budget
    (sizes: a share of the window up to 1, tokens above). By default the writer sees the whole
    context with the prompt file `PROMPT`, and `rebuild` says what the context becomes."""

    calls_writer = True
    trigger_name = "trigger"     # what the config calls the trigger, for its error messages
    PROMPT = ""

    def __init__(self, budget: float | int, trigger: float | int | None):
        check_share(budget, "budget")
        check_share(trigger, self.trigger_name)
        if not budget:
            raise ValueError("budget must be above 0")
        self.budget_at, self.trigger_at = budget, trigger

    def begin(self, session: Session) -> None:
        super().begin(session)
        self.rounds = 0

    def trigger(self) -> int:
        own = window_share(self.trigger_at, self.session.window, self.trigger_name)
        return self.session.limit if own is None else own

    def should_compact(self) -> bool:
        size = self.size()
        return size > self.trigger() or size > self.session.limit

    def budget(self) -> int:
        return max(1, window_share(self.budget_at, self.session.window, "budget"))

    def instruction(self, text: str, budget: int) -> Message:
        """The writer's instruction (a prompt file with `{budget}`), as the request's last message."""
        return self.session.message(id=f"summary-request-{self.rounds + 1}", role="user",
                                    text=text.replace("{budget}", str(budget)), tag="instruction")

    async def ask(self, text: str, messages: list[Message]) -> tuple[Draft, list[Message], list[Message]]:
        """(answer, sent, trimmed): the writer's answer about as much of `messages` as the window holds.
        Like a provider, the window bounds the answer too: with less room than the budget left after
        the request, the writer is asked for what fits (`answer.budget`)."""
        budget = self.budget()
        sent, trimmed = writer_view(self.session, messages, self.instruction(text, budget), budget)
        room = self.session.window - self.session.size([*sent, self.instruction(text, budget)])
        if room < budget:
            budget = max(1, room)
        instruction = self.instruction(text, budget)
        answer = await draft(self.session, sent, instruction, budget)
        answer.budget = budget
        return answer, sent, trimmed

    async def compact(self) -> Compaction | None:
        before = self.size()
        answer, sent, trimmed = await self.ask(self.PROMPT, self.messages)
        if answer.error:
            return self.failed(before, answer.error, trimmed=[m.id for m in trimmed])
        self.rounds += 1
        self.messages, fields = self.rebuild(answer.text)
        comp = Compaction(before, self.size(), text=answer.text, problems=answer.problems,
                          fields={"budget": answer.budget, "summarised": [m.id for m in sent],
                                  "trimmed": [m.id for m in trimmed], **fields})
        return fit(self, comp)

    def rebuild(self, text: str) -> tuple[list[Message], dict]:
        """(the new context, record fields) once the writer wrote `text`."""
        raise NotImplementedError

    def failed(self, before: int, error: str, pinned: int = 0, **fields) -> Compaction:
        """A failed attempt changes nothing; only a request that no longer fits loses its oldest turns."""
        return fit(self, Compaction(before, before, ok=False, error=error, fields=fields), pinned)
