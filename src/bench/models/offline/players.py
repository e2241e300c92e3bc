"""How a strategy or scorer teaches the offline model a task it cannot guess.

The offline model has built-in behaviour for summaries and questions. A task
with its own protocol (the Vibey checkpoint turn's tool calls, a judge's grade
format) is taught by registering a *player*: a function that looks at the
request exactly as an LLM would receive it (messages, tool definitions, the
reply budget) and either answers it or returns None to pass. bench/ never
names a strategy: the strategy's own module registers its player on import.

    from bench.models.offline import Turn, register_player

    @register_player
    def checkpoint(messages, tools, max_tokens, tok):
        if not tools or "edit_mind" not in {t["function"]["name"] for t in tools}:
            return None
        return Turn(calls=(Call("c1", "edit_mind", {...}),))

Players are tried newest first; the first Turn wins.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from bench.harness.messages import Message
from bench.scenarios.model import Call
from bench.tokens import Tokenizer


@dataclass
class Turn:
    """What the offline model decides to answer: text, tool calls, or both."""
    text: str = ""
    calls: tuple[Call, ...] = ()


Player = Callable[[Sequence[Message], "list[dict] | None", "int | None", Tokenizer], "Turn | None"]

_PLAYERS: list[Player] = []


def _same(a: Player, b: Player) -> bool:
    """A re-imported module registers a new function object for the same player."""
    return a is b or (getattr(a, "__module__", None), getattr(a, "__qualname__", None)) == \
        (getattr(b, "__module__", None), getattr(b, "__qualname__", None)) and hasattr(a, "__qualname__")


def register_player(player: Player) -> Player:
    """Register `player` (usable as a decorator); a re-registration replaces the old one."""
    _PLAYERS[:] = [p for p in _PLAYERS if not _same(p, player)]
    _PLAYERS.append(player)
    return player


def unregister_player(player: Player) -> None:
    _PLAYERS[:] = [p for p in _PLAYERS if not _same(p, player)]


def play(messages: Sequence[Message], tools: list[dict] | None, max_tokens: int | None,
         tok: Tokenizer) -> Turn | None:
    """The first Turn a registered player gives, newest player first; None when all pass."""
    for player in reversed(list(_PLAYERS)):
        turn = player(messages, tools, max_tokens, tok)
        if turn is not None:
            return turn
    return None
