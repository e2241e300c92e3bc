"""compaction-bench: replay long agent sessions through compaction strategies and score what survives.

The public API is small and imported lazily, so `compaction-bench --help` and
offline paths never pay for litellm, pandas or matplotlib.
"""
from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import Any

__version__ = "0.1.0"
# Where the package's data lives (conf/, scenarios/, examples/): the same folder in a checkout and an install.
HOME = Path(__file__).resolve().parent

_API = {
    "load_scenario": ("bench.scenarios.loader", "load"),
    "Scenario": ("bench.scenarios.model", "Scenario"),
    "Message": ("bench.harness.messages", "Message"),
    "Strategy": ("bench.strategy", "Strategy"),
    "Session": ("bench.strategy", "Session"),
    "Compaction": ("bench.strategy", "Compaction"),
    "Model": ("bench.harness.model", "Model"),
    "ModelConfig": ("bench.harness.model", "ModelConfig"),
    "Reply": ("bench.harness.model", "Reply"),
    "replay": ("bench.harness.replay", "replay"),
    "load_results": ("bench.results.store", "load"),
}


def __getattr__(name: str) -> Any:
    if name in _API:
        module, attr = _API[name]
        return getattr(import_module(module), attr)
    raise AttributeError(f"module 'bench' has no attribute {name!r}")


__all__ = sorted(_API)
