"""compaction-bench: replay long agent sessions through compaction strategies and score what survives.

The public API is small and imported lazily, so `compaction-bench --help` and
offline paths never pay for litellm, pandas or matplotlib.
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_API = {
    "load_scenario": ("bench.loader", "load"),
    "Scenario": ("bench.scenario", "Scenario"),
    "Message": ("bench.messages", "Message"),
    "Strategy": ("bench.strategy", "Strategy"),
    "Session": ("bench.strategy", "Session"),
    "Compaction": ("bench.strategy", "Compaction"),
    "Model": ("bench.models.base", "Model"),
    "ModelConfig": ("bench.models.base", "ModelConfig"),
    "Reply": ("bench.models.base", "Reply"),
    "replay": ("bench.replay", "replay"),
    "load_results": ("bench.results", "load"),
}


def __getattr__(name: str) -> Any:
    if name in _API:
        module, attr = _API[name]
        return getattr(import_module(module), attr)
    raise AttributeError(f"module 'bench' has no attribute {name!r}")


__all__ = sorted(_API)
