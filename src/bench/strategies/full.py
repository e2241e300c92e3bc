"""Oracle baseline: the model sees everything, whatever the window says.

The harness flags each request that overflows the window (``over`` in
requests.jsonl), so `full` shows what an infinite window would have kept. The run's
configuration (`oracles:` in conf/config.yaml), not this class, makes it the oracle: a strategy
cannot declare itself one.
"""
from __future__ import annotations

from bench.harness.strategy import Strategy


class Full(Strategy):
    def should_compact(self) -> bool:
        return False
