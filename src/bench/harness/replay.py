"""The replay engine (DESIGN §3): one request per assistant event.

Events are rendered once into messages (tokens counted once each), handed to
the strategy in order, and before each assistant event the strategy may
compact; the request it then produces is logged as a delta. The assistant
event's text and calls are the scripted output. Writer calls made during a
compaction are logged as requests of kind ``compaction`` on the same log, so
a checkpoint turn that shares the agent's prefix shows up as a small delta.
"""
from __future__ import annotations

import json
import time
from operator import attrgetter
from dataclasses import asdict, dataclass
from typing import Any, Awaitable, Callable, Sequence, TextIO

from bench.errors import ModelError
from bench.harness.answers import assess
from bench.harness.logs import RequestLog
from bench.harness.messages import CONTENT, FIELDS, Message, common_prefix, remake, render_all, system_message
from bench.harness.model import Model, Reply
from bench.scenarios.model import Scenario
from bench.harness.strategy import Compaction, Session, Strategy, default_reserve, trigger_limit
from bench.tokens import Tokenizer

# A cache-warming request (what an idle compaction installed, sent once so the provider caches it) asks for one
# token: a provider will not answer with none.
WARM_OUTPUT = 1
_CONTENT = attrgetter(*(f for f in CONTENT if f != "calls"))


@dataclass
class ReplayStats:
    events: int = 0
    requests: int = 0
    compactions: int = 0
    compaction_failures: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    compaction_input_tokens: int = 0
    compaction_output_tokens: int = 0
    overflows: int = 0
    fallbacks: int = 0          # compactions that took a fallback (drop-oldest, mechanical step, ...)
    model_calls: int = 0
    wall_s: float = 0.0


@dataclass
class ReplayOptions:
    window: int
    markers: bool = True
    reserve_output: int | None = None   # None: scaled to the window (strategy.default_reserve)
    margin: int | None = None

    def __post_init__(self) -> None:
        reserve, margin = default_reserve(self.window)
        if self.reserve_output is None:
            self.reserve_output = reserve
        if self.margin is None:
            self.margin = margin


class Seal:
    """The harness's own copy of every message a strategy hands back. A request is sized, logged and
    scored from these copies, made by `bench.harness.messages.make` from the message's content (its parts must
    join to its text), never from the token count or hash a strategy's object carries. A message whose
    count or hash is not its content's — edited, or the harness's own object tampered with — fails the
    cell, naming it: a strategy cannot make a request look smaller than it is, or show the scorers
    words the model never reads. (Arguments of tool calls are keyed by their tuple; they are not
    retention text.)"""

    def __init__(self, tok: Tokenizer):
        self.tok = tok
        self.copies: dict[tuple, Message] = {}
        self.kept: list[Any] = []           # the calls tuples keyed by id, kept alive so ids are not reused
        self.last: dict[str, tuple[list[Message], list[Message]]] = {}   # lane -> (what came in, copies)

    @staticmethod
    def _key(m: Message) -> tuple:
        """A message's content (`make`'s arguments); its calls by identity, as their arguments are dicts."""
        return (_CONTENT(m), id(m.calls))

    def trust(self, messages: Sequence[Message]) -> None:
        """Copies of messages the harness itself has just made from their content (the rendered
        events), taken before any strategy holds them, without counting and hashing them again."""
        for m in messages:
            key = self._key(m)
            if key not in self.copies:
                self.copies[key] = Message(*(getattr(m, f) for f in FIELDS))
                self.kept.append(m.calls)

    def own(self, messages: Sequence[Message], lane: str = "") -> list[Message]:
        """The copies of a request's messages. The head a request shares with the lane's previous
        request (the agent's, or the writer's), the very same objects, reuses their copies: whatever a
        strategy does to an object it already handed over, the copy made then is what is sized,
        logged and scored."""
        prev_in, prev_out = self.last.get(lane, ([], []))
        messages = list(messages)
        n = common_prefix(prev_in, messages)
        out = prev_out[:n] + self._copies(messages[n:])
        self.last[lane] = (messages, out)
        return out

    def _copies(self, messages: Sequence[Message]) -> list[Message]:
        out = []
        for m in messages:
            key = self._key(m)
            ref = self.copies.get(key)
            if ref is None:
                ref = self.copies[key] = remake(self.tok, m)
                self.kept.append(m.calls)
            if (m.tokens, m.hash) != (ref.tokens, ref.hash):
                raise ValueError(f"message {m.id}: it claims {m.tokens} tokens and hash {m.hash}, but its content "
                                 f"has {ref.tokens} and {ref.hash} (make messages with session.message or "
                                 "bench.harness.messages.make / retext; never edit tokens or hash)")
            out.append(ref)
        return out


class LoggedModel(Model):
    """Wraps the writer so every call is logged and attributed to the compaction under way."""

    def __init__(self, inner: Model, log: RequestLog, tok: Tokenizer, stats: ReplayStats, seal: Seal | None = None):
        self.inner, self.log, self.tok, self.stats = inner, log, tok, stats
        self.seal = seal or Seal(tok)
        self.name = inner.name
        self.calls: list[dict[str, Any]] = []
        self.t = 0.0

    async def chat(self, messages: Sequence[Message], *, tools: list[dict] | None = None,
                   max_tokens: int | None = None, purpose: str = "") -> Reply:
        msgs = self.seal.own(messages, "writer")
        size = self.tok.size_of(msgs)
        if tools:
            size += self.tok.count(json.dumps(tools, sort_keys=True))
        call: dict[str, Any] = {"purpose": purpose, "request_tokens": size}
        self.stats.model_calls += 1
        try:
            reply = await self.inner.chat(msgs, tools=tools, max_tokens=max_tokens, purpose=purpose)
        except ModelError as exc:
            call["error"] = str(exc)
            self.calls.append(call)
            self.log.write(msgs, kind="compaction", tokens=size, t=self.t, purpose=purpose, error=str(exc))
            raise
        call.update(asdict(reply.usage), cached=reply.cached, retries=reply.retries,
                    latency_s=round(reply.latency_s, 3), model=reply.model or self.name, finish=reply.finish)
        if reply.calls:
            call["tool_calls"] = len(reply.calls)
        else:                 # a final answer: does it do a writer task at all? (whatever the strategy decides)
            why = assess(msgs, reply.text, reply.finish)
            if why:
                call["non_answer"] = why
        if reply.notes:
            call["stress"] = list(reply.notes)
        self.calls.append(call)
        self.stats.compaction_input_tokens += reply.usage.input_tokens
        self.stats.compaction_output_tokens += reply.usage.output_tokens
        self.log.write(msgs, kind="compaction", tokens=size, t=self.t, purpose=purpose,
                       usage=asdict(reply.usage), cached=reply.cached, tools=len(tools or ()))
        return reply

    def take_calls(self) -> list[dict[str, Any]]:
        calls, self.calls = self.calls, []
        return calls


async def replay(scenario: Scenario, strategy: Strategy, writer: Model, tok: Tokenizer,
                 opts: ReplayOptions, requests_fh: TextIO, compactions_fh: TextIO, cell: str) -> ReplayStats:
    started = time.perf_counter()
    stats = ReplayStats(events=len(scenario.events))
    record = render_all(tok, scenario, opts.markers)
    system = system_message(tok, scenario)
    verbatim = {m.id: m.hash for m in record}
    verbatim["system"] = system.hash
    log = RequestLog(requests_fh, cell, verbatim)
    seal = Seal(tok)
    seal.trust([system, *record])
    # the offline writer plays the strategy's own protocols (a checkpoint turn); an LLM reads the request
    logged = LoggedModel(writer.teach(strategy.offline_players), log, tok, stats, seal)
    session = Session(scenario=scenario.id, user=scenario.user, window=opts.window, system=system, tok=tok,
                      writer=logged, limit=trigger_limit(opts.window, opts.reserve_output, opts.margin),
                      reserve_output=opts.reserve_output, margin=opts.margin, recorded=scenario.compactions)
    strategy.begin(session)
    last = None
    try:
        for msg, event in zip(record, scenario.events):
            quiet = strategy.idle_after
            if quiet is not None and last is not None and event.t - last > quiet:
                logged.t = last + quiet
                comp = await _compact(strategy, strategy.idle)
                if comp is not None:
                    comp.fields["idle"] = True
                    _log_compaction(compactions_fh, cell, strategy, event.id, logged.t, log.count, comp,
                                    logged.take_calls(), stats)
                    if comp.ok and strategy.warm_min is not None:   # cache what it installed for the return
                        ctx = seal.own([system, *strategy.context()])
                        if (size := tok.size_of(ctx)) >= strategy.warm_min:
                            log.write(ctx, kind="warm", tokens=size, t=logged.t, output_tokens=WARM_OUTPUT)
            last = event.t
            if event.role == "assistant":
                logged.t = event.t
                comp = await _compact(strategy, strategy.prepare)
                if comp is not None:
                    _log_compaction(compactions_fh, cell, strategy, event.id, event.t, log.count, comp,
                                    logged.take_calls(), stats)
                ctx = seal.own([system, *strategy.context()])
                size = tok.size_of(ctx)
                over = size + msg.tokens > opts.window   # the reply must fit too: a provider counts both
                stats.requests += 1
                stats.input_tokens += size
                stats.output_tokens += msg.tokens
                stats.overflows += over
                log.write(ctx, kind="agent", tokens=size, event=event.id, t=event.t, output_tokens=msg.tokens,
                          **({"over": True} if over else {}))
            session.record.append(msg)
            strategy.add(msg)
    finally:
        await strategy.end()
    stats.wall_s = time.perf_counter() - started
    return stats


async def _compact(strategy: Strategy, step: Callable[[], Awaitable[Compaction | None]]) -> Compaction | None:
    """`step` is the strategy's prepare() or idle(): a writer that keeps failing is a failed compaction,
    never a failed run."""
    try:
        return await step()
    except ModelError as exc:
        size = strategy.size()
        return Compaction(before=size, after=size, ok=False, error=f"model failed: {exc}")


def _log_compaction(fh: TextIO, cell: str, strategy: Strategy, event: str, t: float, request: int,
                    comp: Compaction, calls: list[dict[str, Any]], stats: ReplayStats) -> None:
    if comp.ok:
        stats.compactions += 1
    else:
        stats.compaction_failures += 1
    stats.fallbacks += bool(comp.fallback)
    rec = {"cell": cell, "n": stats.compactions + stats.compaction_failures - 1, "strategy": strategy.name,
           "event": event, "t": t, "request": request, "ok": comp.ok, "before": comp.before,
           "after": comp.after, "calls": calls, "text": comp.text, "problems": comp.problems,
           "repairs": comp.repairs, "fallback": comp.fallback, "error": comp.error, **comp.fields}
    fh.write(json.dumps(rec, ensure_ascii=False, default=str) + "\n")


__all__ = ["replay", "ReplayOptions", "ReplayStats", "LoggedModel"]
