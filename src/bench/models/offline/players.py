"""How a strategy or scorer teaches the offline model a task it cannot guess.

The offline model has built-in behaviour for summaries and questions. A task with its own protocol
(the Vibey checkpoint turn's tool calls, a judge's grade format) is taught by a *player*: a function
that looks at the request exactly as an LLM would receive it (messages, tool definitions, the reply
budget) and either answers it or returns None to pass. Nothing registers itself: a strategy lists its
players in `offline_players`, the run hands them to the cell's offline writer (`Model.teach`), and the
scorer teaches its offline judge the same way.

    def checkpoint(messages, tools, max_tokens, tok):
        if not tools or "edit_mind" not in {t["function"]["name"] for t in tools}:
            return None
        return Turn(calls=(Call("c1", "edit_mind", {...}),))

    class MyStrategy(Strategy):
        offline_players = (checkpoint,)

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


def play(messages: Sequence[Message], tools: list[dict] | None, max_tokens: int | None, tok: Tokenizer,
         players: Sequence[Player]) -> Turn | None:
    """The first Turn a player gives, newest player first; None when all pass."""
    for player in reversed(players):
        turn = player(messages, tools, max_tokens, tok)
        if turn is not None:
            return turn
    return None
