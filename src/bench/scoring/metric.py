"""One metric's declaration, made once next to the scorer that computes it.

Every place that lists metrics — summary.csv's columns, the gate's directions and defaults, repeats.csv,
the console and report tables, the audit, the viewer, the docs' column tables — reads these fields
through `bench.scoring.metrics`, so adding a metric is its scorer plus one declaration (and the docs
lines tests/test_docs.py asks for), and no list elsewhere can fall out of step with it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

DIRECTIONS = ("higher", "lower", "count", "info")   # count: requests over the window; any rise fails
GATING = ("always", "named", "never")               # named: only when a gate names it
AGGREGATES = ("mean", "count", "total", "share")

# Where a metric shows besides summary.csv (and, when gated always, the report's score tables).
CONSOLE = "console"         # the per-cell table a run prints (results.store.format_table)
HEADLINE = "headline"       # the report's first table, its findings and the console's headline
ROBUSTNESS = "robustness"   # the report's drop under the writer stress profiles
TOKENS = "tokens"           # the report's tokens-and-cost table
CELLS = "cells"             # the report's all-cells table, after the scores
COMPARE = "compare"         # compare's table of means, never gated
VIEWS = (CONSOLE, HEADLINE, ROBUSTNESS, TOKENS, CELLS, COMPARE)
SCORE_VIEWS = frozenset({CONSOLE, HEADLINE, ROBUSTNESS})


@dataclass(frozen=True)
class Metric:
    """`aggregate` says how a cell's value is made: the mean over agent requests of the mean over the
    items in force (mean), or of their number (count); a total over the cell (total); a ratio of two
    totals (share). `gloss` is the few words a report caption puts after the label; `verdict` the
    viewer's word for an item a lower-is-better metric finds (leaked, stale, ...)."""
    column: str                 # summary.csv
    direction: str              # higher | lower | count | info
    meaning: str                # one line for the docs' column tables
    name: str = ""              # metric in checks.csv, for a metric scored item by item
    label: str = ""             # report headers (default: short)
    short: str = ""             # audit and narrow tables (default: column)
    gloss: str = ""
    gated: str = ""             # always | named | never (default: always, never for info)
    audited: bool = False       # `scenarios audit` compares the adversaries with the oracle on it
    aggregate: str = "mean"
    relative: bool = False      # a gate threshold is a share of the base value
    verdict: str = ""
    views: frozenset[str] | None = None   # default: SCORE_VIEWS for a score, none for info

    def __post_init__(self) -> None:
        info = self.direction == "info"
        short = self.short or self.column
        views = (frozenset() if info else SCORE_VIEWS) if self.views is None else frozenset(self.views)
        for k, v in {"short": short, "label": self.label or short, "views": views,
                     "gated": self.gated or ("never" if info else "always")}.items():
            object.__setattr__(self, k, v)
        bad = [] if self.direction in DIRECTIONS else [f"direction {self.direction!r}"]
        if self.gated not in GATING or (info and self.gated != "never"):
            bad.append(f"gated {self.gated!r}")
        if self.aggregate not in AGGREGATES:
            bad.append(f"aggregate {self.aggregate!r}")
        bad += [f"view {v!r}" for v in sorted(views - set(VIEWS))]
        if bad:
            raise ValueError(f"metric {self.column}: bad {', '.join(bad)}")

    @property
    def higher(self) -> bool:
        return self.direction == "higher"


@dataclass(frozen=True)
class Family:
    """One scorer's metrics, in summary.csv's column order. `scorer(cell)`, for a scorer `score_cell`
    does not drive itself, gives an object fed the cell's agent and compaction requests in order
    (`add(request)`, a `harness.logs.LoggedRequest`) whose `columns()` are the cell's values; the
    built-in families share the Judge's reading and the probe calls, so score_cell drives them itself."""
    metrics: tuple[Metric, ...]
    scorer: Callable[[Any], Any] | None = None
