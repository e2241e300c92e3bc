"""The gate's thresholds: how much worse a metric may get before `compare` fails, from a gate file
(`--gate gate.yaml`) and flags.

A threshold is the largest allowed worsening: a drop for a metric where higher is better, a rise for
leakage, stale constraints, revived rejected options and overflow. It applies to every cell and to
the strategy's mean alike, since a regression that hits one kind of session is how compaction
regressions arrive. A scenario tag can hold its scenarios to their own thresholds (the tighter
wins). Cost and cache hit rate are gated only when the gate names them; cost's threshold is
relative (0.1: ten percent dearer), the rest are absolute.

    max_drop: 0.02              # every quality metric (default 0.02)
    metrics:                    # per metric
      constraint_fidelity: 0.01
      cost_usd: 0.10
    tags:                       # per scenario tag (scenarios.csv of the runs says which has which)
      injection: {provenance_leakage: 0}
    noise_aware: false          # fail only where the drop is also outside its 95% interval
    all_cells: false            # every cell of BASE must be in NEW (default: those of its scenarios and strategies)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.errors import BadInput
from bench.scoring.metrics import COUNTS, GATED, OPTIONAL
from bench.parsing import line_map, parse

DEFAULT_MAX_DROP = 0.02
KEYS = ("max_drop", "metrics", "tags", "noise_aware", "all_cells")


@dataclass
class Gate:
    max_drop: float = DEFAULT_MAX_DROP
    metrics: dict[str, float] = field(default_factory=dict)
    tags: dict[str, dict[str, float]] = field(default_factory=dict)
    noise_aware: bool = False
    all_cells: bool = False

    def threshold(self, metric: str, tags: set[str] = frozenset()) -> float | None:
        """The allowed worsening of `metric` in a cell with these scenario tags (no tags: a mean); None
        when the metric is not gated."""
        found = [t[metric] for tag, t in self.tags.items() if tag in tags and metric in t]
        if metric in self.metrics:
            found.append(self.metrics[metric])
        elif metric in COUNTS:
            found.append(0.0)
        elif metric not in OPTIONAL:
            found.append(self.max_drop)
        return min(found) if found else None

    def gated(self) -> list[str]:
        return [m for m in GATED if self.threshold(m) is not None or any(m in t for t in self.tags.values())]

    def as_dict(self) -> dict[str, Any]:
        return {"max_drop": self.max_drop, "metrics": self.metrics, "tags": self.tags,
                "noise_aware": self.noise_aware, "all_cells": self.all_cells}


def _number(value: Any, where: str, problems: list[str]) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value < 0:
        problems.append(f"{where}: must be a number >= 0, got {value!r}")
        return None
    return float(value)


def load(path: Path) -> Gate:
    """A gate file; BadInput with one line per problem, each naming the file, line and key."""

    data, text = parse(path)
    lines = line_map(text, path.suffix == ".json")
    problems: list[str] = []

    def at(*key: Any) -> str:
        """`gate.yaml:7: tags.injection.leakage`: the file, the key's line, the key."""
        while key and tuple(key) not in lines:
            key = key[:-1]
        line = lines.get(tuple(key))
        return f"{path}:{line}: " if line else f"{path}: "

    def thresholds(value: Any, *key: str) -> dict[str, float]:
        name = ".".join(key)
        if not isinstance(value, dict):
            problems.append(f"{at(*key)}{name}: must be a mapping of metric: threshold, got {value!r}")
            return {}
        out = {}
        for metric, x in value.items():
            if metric not in GATED:
                problems.append(f"{at(*key, metric)}{name}.{metric}: unknown metric (gated metrics: "
                                f"{', '.join(GATED)})")
            elif (n := _number(x, f"{at(*key, metric)}{name}.{metric}", problems)) is not None:
                out[str(metric)] = n
        return out

    if not isinstance(data, dict):
        raise BadInput(f"{path}: a gate file is a mapping ({', '.join(KEYS)}), got a {type(data).__name__}")
    gate = Gate()
    for key, value in data.items():
        if key not in KEYS:
            problems.append(f"{at(key)}{key}: unknown key (known: {', '.join(KEYS)})")
        elif key == "max_drop":
            x = _number(value, f"{at(key)}max_drop", problems)
            gate.max_drop = gate.max_drop if x is None else x
        elif key == "metrics":
            gate.metrics = thresholds(value, "metrics")
        elif key == "tags":
            if not isinstance(value, dict):
                problems.append(f"{at(key)}tags: must be a mapping of tag: {{metric: threshold}}, got {value!r}")
            else:
                gate.tags = {str(tag): thresholds(ts, "tags", str(tag)) for tag, ts in value.items()}
        elif not isinstance(value, bool):
            problems.append(f"{at(key)}{key}: must be true or false, got {value!r}")
        else:
            setattr(gate, key, value)
    if problems:
        raise BadInput(problems)
    return gate


def parse_flag(text: str, flag: str) -> tuple[str | None, str, float]:
    """`--threshold METRIC=X` or `TAG:METRIC=X` -> (tag, metric, X); BadInput naming the flag."""
    lhs, eq, value = text.partition("=")
    tag, colon, metric = lhs.rpartition(":")
    try:
        x = float(value)
    except ValueError:
        x = -1.0
    if not eq or metric not in GATED or x < 0 or x != x:
        what = (f"unknown metric '{metric}' (gated metrics: {', '.join(GATED)})" if eq and metric not in GATED
                else "a threshold is a number >= 0" if eq else "not METRIC=X or TAG:METRIC=X")
        raise BadInput(f"{flag} {text}: {what}")
    return (tag if colon else None), metric, x


__all__ = ["Gate", "load", "parse_flag", "DEFAULT_MAX_DROP"]
