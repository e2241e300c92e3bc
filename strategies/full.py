"""Oracle baseline: the model sees everything, whatever the window says.

The harness flags each request that overflows the window (``over`` in
requests.jsonl), so `full` shows what an infinite window would have kept.
"""
from __future__ import annotations

from bench.strategy import Strategy


class Full(Strategy):
    oracle = True

    def should_compact(self) -> bool:
        return False
