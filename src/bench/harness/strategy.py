"""The strategy protocol: the one surface a compaction strategy implements.

The harness owns the record (every message, in order) and asks the strategy,
before each request, for the context the model sees. A strategy keeps its own
context list, appends what arrives, and compacts when its trigger says so. It
reports each compaction as a `Compaction`; the harness adds where and when,
the writer calls it made, and logs it. A strategy never sees a scenario's truth.

Writing one (see strategies/truncate.py for the shortest example)::

    class Mine(Strategy):
        async def compact(self) -> Compaction:
            before = self.size()
            ...  # rewrite self.messages, maybe via `await self.session.writer.chat(...)`
            return Compaction(before=before, after=self.size(), text="...")

and point Hydra at it: ``strategies=[mine] +strategy.mine._target_=my_pkg.Mine``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from bench.harness.messages import Message, Part, make
from bench.harness.model import Model
from bench.scenarios.model import RecordedCompaction
from bench.tokens import PER_MESSAGE, Tokenizer, default_reserve, trigger_limit


@dataclass
class Session:
    """What the harness gives a strategy for one replay."""
    scenario: str
    user: str                   # the human user's display name
    window: int
    system: Message
    tok: Tokenizer
    writer: Model               # logged: every call is recorded as a compaction request
    limit: int                  # default trigger: min(0.9 window, window - reserve_output - margin)
    reserve_output: int
    margin: int
    record: list[Message] = field(default_factory=list)   # every message so far, in order (harness-owned)
    # The source harness's own compactions, when the scenario is an imported session that has them: part of the
    # record (what that harness did), like the events, never the truth. Only `recorded` reads them.
    recorded: tuple[RecordedCompaction, ...] = ()

    def message(self, *, id: str, role: str, text: str, tag: str, parts: Iterable[Part] = (), **kw: Any) -> Message:
        """A strategy-made message, counted and hashed like every other."""
        return make(self.tok, id=id, role=role, text=text, tag=tag, parts=parts, **kw)

    def size(self, messages: Iterable[Message]) -> int:
        """Tokens of a request made of the system prompt plus `messages`."""
        return self.tok.size_of(messages) + self.system.tokens + PER_MESSAGE


@dataclass
class Compaction:
    """One compaction as the strategy reports it (DESIGN §3 logs)."""
    before: int                     # request tokens before
    after: int                      # request tokens after
    ok: bool = True                 # False: nothing changed (the attempt failed)
    text: str | None = None         # what the strategy produced: summary, checkpoint...
    problems: list[str] = field(default_factory=list)   # validation problems found
    repairs: int = 0                # repair requests sent
    fallback: str | None = None     # the fallback taken, if any
    error: str | None = None        # why it failed
    fields: dict[str, Any] = field(default_factory=dict)  # strategy-specific (mind, memo, scene...)


class Strategy:
    """Base class; the default context is every message, the default never compacts."""

    name: str = ""
    # True for a strategy that asks the writer model for text: with the `offline` writer, the run
    # (config `stress:`) also replays it under stress profiles, to show how much it depends on a
    # faithful writer. Strategies that never call the writer (truncate, masking ...) leave it False.
    calls_writer: bool = False
    # How the offline writer plays a writer task of this strategy's own protocol (a checkpoint turn's tool
    # calls, answers under named headings): bench.models.offline.players. The run hands them to the
    # cell's writer (`Model.teach`); an LLM writer ignores them.
    offline_players: tuple = ()
    # True for a strategy that replays the source harness's recorded compactions (`Session.recorded`): the run
    # refuses a scenario without them, in one line, before anything runs.
    needs_recorded: bool = False
    # The run's `trigger_at` for this strategy (a share of the window up to 1, tokens above; set by the runner
    # from the config, which refuses a value later than the strategy's own trigger): compaction may only come
    # earlier than the strategy's default, never later, so no request passes the model's input limit.
    earlier: float | int | None = None
    # Seconds of quiet after which the strategy compacts while the session waits (Claude Code's idle
    # compaction, before the prompt cache expires): when the next event comes later than that, the harness
    # calls `idle()` at that moment, before the event is recorded. None: never.
    idle_after: float | None = None
    # After an idle compaction the harness sends what it installed once (a `warm` request), so the provider caches
    # that prefix for the user's return, when it is at least this many tokens (the cache's minimum: a shorter
    # prefix is never cached, and the request would be paid for nothing). None: never.
    warm_min: int | None = None

    def begin(self, session: Session) -> None:
        self.session = session
        self.messages: list[Message] = []

    def add(self, msg: Message) -> None:
        """A new message entered the record (user, tool, background, or the agent's own output)."""
        self.messages.append(msg)

    def context(self) -> list[Message]:
        """What follows the system prompt in the next request."""
        return self.messages

    def size(self, messages: Iterable[Message] | None = None) -> int:
        return self.session.size(self.context() if messages is None else messages)

    def trigger(self) -> int:
        """Request size above which this strategy compacts."""
        return self.session.limit

    def should_compact(self) -> bool:
        return self.size() > self.trigger()

    def early(self) -> int | None:
        """The `trigger_at` in tokens for this session's window, or None."""
        at = self.earlier
        return None if at is None else int(at * self.session.window) if at <= 1 else int(at)

    async def prepare(self) -> Compaction | None:
        """Called before every request; compacts when the trigger (or an earlier `trigger_at`) says so."""
        early = self.early()
        if self.should_compact() or (early is not None and self.size() > early):
            return await self.compact()
        return None

    async def compact(self) -> Compaction | None:
        return None

    async def idle(self) -> Compaction | None:
        """The session has been quiet for `idle_after` seconds; a compaction now runs while nobody waits."""
        return None

    async def end(self) -> None:
        """The replay is over, finished or failed: release what `begin` or `prepare` took (a process, a
        server). Called exactly once per `begin`; it must not raise."""


def drop_oldest(messages: list[Message], total: int, limit: int) -> tuple[list[Message], list[Message]]:
    """Drop whole turns from the front until the request (now `total` tokens) fits `limit`.

    An assistant message and the tool results answering its calls leave
    together, so no call or result is ever orphaned. The newest turn always
    stays. Returns (kept, dropped).
    """
    units = turn_units(messages)
    i = 0
    while i < len(units) - 1 and total > limit:
        total -= sum(m.tokens + PER_MESSAGE for m in units[i])
        i += 1
    gone = {id(m) for unit in units[:i] for m in unit}
    return [m for m in messages if id(m) not in gone], [m for m in messages if id(m) in gone]


def turn_units(messages: list[Message]) -> list[list[Message]]:
    """Group messages so that each assistant message travels with its tool results."""
    units: list[list[Message]] = []
    owner: dict[str, list[Message]] = {}
    for m in messages:
        if m.role == "tool" and m.call_id in owner:
            owner[m.call_id].append(m)
            continue
        unit = [m]
        units.append(unit)
        for c in m.calls:
            owner[c.id] = unit
    return units


__all__ = ["Session", "Compaction", "Strategy", "trigger_limit", "default_reserve", "drop_oldest", "turn_units"]
