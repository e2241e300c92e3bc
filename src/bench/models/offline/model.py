"""The deterministic, network-free model every role defaults to.

It answers from the request alone, the way an LLM would: a player it was taught
(see players.py) for a protocol it cannot guess, else an extractive summary when
the request asks for one, else the most relevant sentence for the question.
`purpose` is never consulted. Usage is the tiktoken count of what it read
(messages plus the tool definitions) and wrote, so token columns of offline
runs are meaningful.
"""
from __future__ import annotations

import json
import time
from typing import Iterable, Sequence

from bench.harness.messages import Message, calls_text
from bench.tokens import Tokenizer, tokenizer
from bench.harness.model import Model, ModelConfig, Reply, Usage
from bench.models.offline import extract, stress, tasks
from bench.models.offline.players import Player, Turn, play

DEFAULT_BUDGET = (64, 4096)   # summary budget bounds when the request gives none: 10% of input


class OfflineModel(Model):
    """`offline`, or with `cfg.model = "offline:NAME"` the same writer under a stress profile
    (stress.py): its answer, text and tool calls, transformed the way LLM writers err."""

    name = "offline"

    def __init__(self, cfg: ModelConfig | None = None, tok: Tokenizer | None = None, players: Iterable[Player] = ()):
        self.cfg = cfg or ModelConfig()
        self.tok = tok or tokenizer()
        self.players = tuple(players)
        self.profile = stress.profile(self.cfg.model.split(":", 1)[1]) if ":" in self.cfg.model else None
        self.name = self.cfg.model if self.profile else "offline"

    def teach(self, players: Iterable[Player]) -> "OfflineModel":
        """The same model that also plays `players` (the newest first), for one cell's strategy or a judge."""
        new = tuple(p for p in players if p not in self.players)
        return OfflineModel(self.cfg, self.tok, self.players + new) if new else self

    async def chat(self, messages: Sequence[Message], *, tools: list[dict] | None = None,
                   max_tokens: int | None = None, purpose: str = "") -> Reply:
        started = time.perf_counter()
        msgs = list(messages)
        limit = max_tokens or self.cfg.max_tokens
        read = read_tokens(msgs, tools, self.tok)
        turn = play(msgs, tools, limit, self.tok, self.players) or builtin(msgs, limit, read, self.tok)
        notes: tuple[dict, ...] = ()
        if self.profile is not None:
            s = stress.begin(self.profile, msgs, self.cfg.seed)
            text, calls = stress.apply(s, turn.text, turn.calls, limit, self.tok.count)
            turn, notes = Turn(text=text, calls=calls), tuple(s.notes)
        text, finish = turn.text, "tool_calls" if turn.calls else "stop"
        if limit and self.tok.count(text) > limit:   # an LLM is cut at max_tokens too
            text, finish = self.tok.truncate(text, limit), "length"
        wrote = self.tok.count(text) + (self.tok.count(calls_text(turn.calls)) if turn.calls else 0)
        return Reply(text=text, calls=tuple(turn.calls), usage=Usage(input_tokens=read, output_tokens=wrote),
                     model=self.name, finish=finish, latency_s=time.perf_counter() - started, notes=notes)


def read_tokens(messages: Sequence[Message], tools: list[dict] | None, tok: Tokenizer) -> int:
    """Input tokens as the harness counts a request, plus the tool definitions' JSON."""
    n = tok.size_of(messages)
    return n + (tok.count(json.dumps(tools, sort_keys=True)) if tools else 0)


def builtin(messages: list[Message], limit: int | None, read: int, tok: Tokenizer) -> Turn:
    """Summary when asked for one; another writer task (tasks.py: a checkpoint, every constraint on one line,
    named sections) in the form asked; otherwise an extracted answer to the last message."""
    if not messages:
        return Turn(text="")
    body = [m for m in messages if m.role != "system"]
    if extract.wants_summary(messages):
        if body and body[-1] is messages[-1] and extract.ASKS_SUMMARY.search(messages[-1].text):
            body = body[:-1]      # the instruction itself is not summarised
        budget = limit or max(DEFAULT_BUDGET[0], min(DEFAULT_BUDGET[1], read // 10))
        return Turn(text=extract.summary(body, budget, tok))
    task = tasks.read(messages[-1].text) if messages[-1].role == "user" and len(body) > 1 else None
    if task is not None:      # a checkpoint, a list of every constraint, one line, named sections ...
        budget = limit or max(DEFAULT_BUDGET[0], min(DEFAULT_BUDGET[1], read // 10))
        return Turn(text=tasks.write(task, body[:-1], budget, tok))
    question = extract.strip_marker(messages[-1].text)
    return Turn(text=extract.answer(messages[:-1], question, limit, tok))
