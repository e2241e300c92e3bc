"""The Vibey checkpoint strategy: mind, memo and scene (seed 000).

Importing the package teaches the offline model the checkpoint turn, so
`writer.model=offline` plays it through the same tools an LLM uses.
"""
from __future__ import annotations

from bench.strategies.vibey.strategy import Vibey

try:
    from bench.models.offline import register_player
except ImportError:   # a bench without the player hook: only LLM writers can checkpoint
    register_player = None

if register_player is not None:
    from bench.strategies.vibey.offline import play

    register_player(play)

__all__ = ["Vibey"]
