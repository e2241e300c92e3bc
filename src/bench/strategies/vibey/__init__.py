"""The Vibey checkpoint strategy: mind, memo and scene (seed 000).

`Vibey.offline_players` teaches the offline writer the checkpoint turn, so `writer.model=offline`
plays it through the same tools an LLM uses.
"""
from __future__ import annotations

from bench.strategies.vibey.strategy import Vibey

__all__ = ["Vibey"]
