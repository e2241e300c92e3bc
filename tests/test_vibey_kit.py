"""Shared helpers for the Vibey tests: sessions built from scenario dicts, replays, scripted writers.

Kept in a test_ module so pytest's import path finds it; it holds one smoke test of its own.
"""
from __future__ import annotations

import asyncio
import io
import json
from typing import Any, Callable

from bench.scenarios import loader
from bench.harness.model import Model, Reply
from bench.models.offline import OfflineModel
from bench.harness.messages import Message, render_all, system_message
from bench.harness.replay import ReplayOptions, replay
from bench.scenarios.model import Call, Scenario
from bench.harness.strategy import Session, default_reserve, trigger_limit
from bench.tokens import tokenizer
from bench.strategies.vibey import Vibey

TOK = tokenizer()


def scenario(events: list[dict], *, window: int = 32_000, user: str = "Dana",
             system: str = "You are a coding agent in the acme/api repository.") -> Scenario:
    return loader.from_events(events, window=window, user=user, system=system)


def filler(n_words: int, seed: str = "x") -> str:
    """Tool output of roughly n_words tokens that never looks like an error or a reference."""
    return " ".join(f"{seed}{i % 97}" for i in range(n_words))


def long_session(turns: int = 40, words: int = 400, *, window: int = 32_000, extra: dict[int, list[dict]] | None = None
                 ) -> Scenario:
    """A PR queue worked through turn by turn, big tool outputs, a few user rules on the way."""
    events: list[dict] = [{"id": "u1", "role": "user", "text": "Please review the open PRs #101 to #160 oldest to "
                           "newest. Only come to me when a PR needs my sign-off. Never merge anything that "
                           "touches billing/."}]
    for i in range(turns):
        pr = 101 + i
        for e in (extra or {}).get(i, []):
            events.append(e)
        events.append({"id": f"a{i}", "role": "assistant", "text": f"Reviewing #{pr} next.",
                       "calls": [{"id": f"c{i}", "tool": "gh_pr_view", "args": {"number": pr}}]})
        events.append({"id": f"r{i}", "role": "tool", "call": f"c{i}", "text": f"#{pr} diff\n" + filler(words)})
    events.append({"id": "end", "role": "assistant", "text": "Done for now."})
    return scenario(events, window=window)


def run(s: Scenario, strategy: Vibey | None = None, writer: Model | None = None, window: int | None = None,
        markers: bool = True) -> tuple[Any, list[dict], list[dict], Vibey]:
    strategy = strategy or Vibey()
    strategy.name = "vibey"
    rq, cp = io.StringIO(), io.StringIO()
    stats = asyncio.run(replay(s, strategy, writer or OfflineModel(tok=TOK, players=Vibey.offline_players), TOK,
                               ReplayOptions(window=window or s.window, markers=markers), rq, cp, "cell"))
    reqs = [json.loads(x) for x in rq.getvalue().splitlines()]
    comps = [json.loads(x) for x in cp.getvalue().splitlines()]
    return stats, reqs, comps, strategy


class Scripted(Model):
    """A writer that answers each request with `script(messages, tools, n)` (n counts calls from 0)."""
    name = "scripted"

    def __init__(self, script: Callable[[list, list | None, int], Reply]):
        self.script, self.n, self.seen = script, 0, []

    async def chat(self, messages, *, tools=None, max_tokens=None, purpose=""):
        self.seen.append((list(messages), tools, purpose))
        reply = self.script(list(messages), tools, self.n)
        self.n += 1
        return reply


class Wrapped(Model):
    """The offline writer with a hook that may rewrite each reply (a writer that misbehaves on purpose)."""
    name = "wrapped"

    def __init__(self, change: Callable[[Reply, list], Reply]):
        self.inner, self.change, self.seen = OfflineModel(tok=TOK, players=Vibey.offline_players), change, []

    async def chat(self, messages, *, tools=None, max_tokens=None, purpose=""):
        self.seen.append((list(messages), tools, purpose))
        reply = await self.inner.chat(messages, tools=tools, max_tokens=max_tokens, purpose=purpose)
        return self.change(reply, list(messages))


def manual(s: Scenario, writer: Model | None = None, strategy: Vibey | None = None, window: int | None = None
           ) -> tuple[Vibey, list[Message]]:
    """A strategy begun on a session of `s` with nothing added yet, and the rendered record to feed it."""
    window = window or s.window
    reserve, margin = default_reserve(window)
    session = Session(scenario=s.id, user=s.user, window=window, system=system_message(TOK, s), tok=TOK,
                      writer=writer or OfflineModel(tok=TOK, players=Vibey.offline_players), limit=trigger_limit(window, reserve, margin),
                      reserve_output=reserve, margin=margin)
    strategy = strategy or Vibey()
    strategy.begin(session)
    return strategy, render_all(TOK, s)


def feed(strategy: Vibey, messages: list[Message]) -> None:
    for m in messages:
        strategy.session.record.append(m)
        strategy.add(m)


def compact(strategy: Vibey):
    return asyncio.run(strategy.compact())


SCENE = ("<checkpoint>\nCurrent step: reviewing #134 (W1). Progress: #101-#133 done. Waiting for: nothing. "
         "Next step: #135, as Dana asked: \"review the open PRs oldest to newest\". Pitfalls: none. "
         "References: gh pr view 134.\n</checkpoint>")


def steps(*plays: list[Call] | str) -> Scripted:
    """A writer that plays these in order, one per call: a list of calls (a round) or an answer text.
    The last one repeats."""
    def script(messages, tools, n):
        play = plays[min(n, len(plays) - 1)]
        return Reply(text=play) if isinstance(play, str) else Reply(text="", calls=tuple(play))
    return Scripted(script)


def call(tool: str, **args: Any) -> Call:
    return Call(f"k-{tool}-{abs(hash(json.dumps(args, sort_keys=True))) % 10_000}", tool, args)


def test_long_session_checkpoints_with_the_offline_writer():
    stats, reqs, comps, _ = run(long_session())
    assert comps and all(c["ok"] and not c["fallback"] for c in comps), comps
    assert stats.overflows == 0
