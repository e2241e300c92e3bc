"""Dollar cost from litellm's bundled price map, read as JSON so offline runs never import litellm.

The arithmetic follows litellm's own: the uncached part of the input at the input
rate, cache reads at the cache-read rate, cache writes at the cache-write rate
(the input rate where the map has none), output at the output rate.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

from bench.scoring.cache_sim import Profile
from bench.env import cost_map_path
from bench.errors import BadInput


@dataclass(frozen=True)
class Rates:
    """USD per token."""
    model: str
    input: float
    output: float
    cache_read: float
    cache_write: float


@lru_cache(maxsize=1)
def cost_map() -> dict:
    path = cost_map_path()
    if path is None:
        raise BadInput("price.model: litellm's bundled cost map was not found (is litellm installed?)")
    return json.loads(path.read_text(encoding="utf-8"))


def find(model: str) -> tuple[str, dict]:
    """The map entry for a litellm model string: exact, then without or with its provider prefix."""
    prices = cost_map()
    tail = model.split("/", 1)[1] if "/" in model else model
    for key in (model, tail, *(k for k in prices if k.endswith("/" + tail))):
        entry = prices.get(key)
        if isinstance(entry, dict) and "input_cost_per_token" in entry:
            return key, entry
    raise BadInput(f"price.model: '{model}' is not in litellm's bundled cost map")


def rates(model: str, profile: Profile) -> Rates:
    """Rates for `model`; cache rates fall back on the profile's multipliers of the input rate."""
    key, e = find(model)
    base = float(e.get("input_cost_per_token") or 0.0)
    read = e.get("cache_read_input_token_cost")
    one_hour = profile.ttl_s >= 3600 and profile.mode == "breakpoints"
    write = e.get("cache_creation_input_token_cost_above_1hr" if one_hour else "cache_creation_input_token_cost")
    if write is None:
        write = base * profile.write_multiplier if profile.write_multiplier else base
    return Rates(key, base, float(e.get("output_cost_per_token") or 0.0),
                 float(read) if read is not None else base * profile.read_multiplier, float(write))


def cost(r: Rates, input_tokens: int, cache_read: int = 0, cache_write: int = 0, output_tokens: int = 0) -> float:
    """`input_tokens` is the whole prompt, reads and writes included."""
    uncached = max(0, input_tokens - cache_read - cache_write)
    return uncached * r.input + cache_read * r.cache_read + cache_write * r.cache_write + output_tokens * r.output


__all__ = ["Rates", "rates", "cost", "find", "cost_map"]
