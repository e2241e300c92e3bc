"""Uncertainty of a run's means: bootstrap intervals, paired differences, verdicts, pass^k.

Why a bootstrap over scenarios: a strategy's score varies far more between kinds of session than
between repeats of one session, and the suite's scenarios are a sample of the sessions a user has.
Resampling scenarios (and, inside each, its repeats) says how much a mean would move on another
draw of both. Offline cells are deterministic, so with them every repeat is the same and the
interval comes from the scenarios alone.

The API is small and plain so the report and `compare` show the same figures:

- `interval(groups)`: the mean of every value and its 95% interval; `groups` holds one list of
  values per scenario (its repeats, windows).
- `paired_interval(groups)`: the same for the mean of `new - base` over (base, new) pairs, each pair
  one scenario and seed, so the noise both runs share cancels; `unpaired_interval` when the two runs
  share no seed (each scenario's repeats of either run resampled apart).
- `verdict(diff, higher_is_better)`: better, worse or tied (the interval holds 0).
- `pass_hat_k(passes)`: the share of probes passed in every repeat.

The resampling RNG has a fixed seed, so the same numbers give the same interval on every machine.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

LEVEL = 0.95
RESAMPLES = 2000
SEED = 14   # fixed: outputs are reproducible; any other seed moves the bounds only within noise
EPS = 1e-9


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    groups: int      # scenarios the values came from
    values: int      # values in all

    def holds(self, x: float) -> bool:
        return self.low - EPS <= x <= self.high + EPS

    def text(self, digits: int = 3) -> str:
        """`0.812 [0.780, 0.845]`; a degenerate interval (one value, or all equal) is just the mean."""
        if self.high - self.low < EPS:
            return f"{self.mean:.{digits}f}"
        return f"{self.mean:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"

    def as_dict(self) -> dict[str, float | int]:
        return {"mean": self.mean, "low": self.low, "high": self.high, "groups": self.groups, "values": self.values}


def _resampled_means(groups: list[list[float]], chosen, rng):
    """For each resample and each drawn group (`chosen`: resamples x draws of group indexes), the mean
    of that group's values drawn with replacement, and how many values it has."""
    import numpy as np

    flat = np.array([v for g in groups for v in g])
    sizes = np.array([len(g) for g in groups])
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    size = sizes[chosen]
    widest = int(sizes.max())
    pick = (rng.random((*chosen.shape, widest)) * size[..., None]).astype(int)
    used = np.arange(widest)[None, None, :] < size[..., None]
    idx = np.where(used, offsets[chosen][..., None] + pick, 0)
    return (flat[idx] * used).sum(axis=2) / size, size


def _bounds(stats, mean: float, level: float) -> tuple[float, float]:
    import numpy as np

    tail = (1 - level) / 2
    low, high = np.quantile(stats, [tail, 1 - tail])
    return min(float(low), mean), max(float(high), mean)


def interval(groups: Iterable[Sequence[float]], level: float = LEVEL, resamples: int = RESAMPLES,
             seed: int = SEED) -> Interval | None:
    """Two-stage bootstrap of the mean of all values: draw scenarios with replacement, then values inside
    each drawn scenario with replacement. None when there is no value."""
    import numpy as np

    kept = [g for g in ([float(v) for v in g] for g in groups) if g]
    if not kept:
        return None
    flat = [v for g in kept for v in g]
    mean = sum(flat) / len(flat)
    if max(flat) - min(flat) < EPS:
        return Interval(mean, mean, mean, len(kept), len(flat))
    rng = np.random.default_rng(seed)
    chosen = rng.integers(0, len(kept), size=(resamples, len(kept)))
    means, size = _resampled_means(kept, chosen, rng)
    stats = (means * size).sum(axis=1) / size.sum(axis=1)
    return Interval(mean, *_bounds(stats, mean, level), len(kept), len(flat))


def paired_interval(groups: Iterable[Sequence[tuple[float, float]]], **kw) -> Interval | None:
    """The interval of the mean of `new - base`, one (base, new) pair per scenario and seed: what both runs
    share (the scenario, the seed's draws) cancels."""
    return interval([[n - b for b, n in g] for g in groups], **kw)


def unpaired_interval(groups: Iterable[tuple[Sequence[float], Sequence[float]]], level: float = LEVEL,
                      resamples: int = RESAMPLES, seed: int = SEED) -> Interval | None:
    """The interval of `mean(new) - mean(base)` per scenario, averaged over scenarios, when the runs share
    no seed: scenarios are drawn together, each run's repeats inside them apart."""
    import numpy as np

    kept = [([float(v) for v in b], [float(v) for v in n]) for b, n in groups if len(b) and len(n)]
    if not kept:
        return None
    diffs = [sum(n) / len(n) - sum(b) / len(b) for b, n in kept]
    mean = sum(diffs) / len(diffs)
    values = sum(len(b) + len(n) for b, n in kept)
    if all(max(x) - min(x) < EPS for pair in kept for x in pair) and max(diffs) - min(diffs) < EPS:
        return Interval(mean, mean, mean, len(kept), values)
    rng = np.random.default_rng(seed)
    chosen = rng.integers(0, len(kept), size=(resamples, len(kept)))
    base, _ = _resampled_means([b for b, _ in kept], chosen, rng)
    new, _ = _resampled_means([n for _, n in kept], chosen, rng)
    stats = (new - base).mean(axis=1)
    return Interval(mean, *_bounds(stats, mean, level), len(kept), values)


def verdict(diff: Interval | None, higher_is_better: bool) -> str:
    """better / worse when the whole interval of `new - base` is on one side of 0, else tied."""
    if diff is None or diff.holds(0.0):
        return "tied"
    return "better" if (diff.low > 0) == higher_is_better else "worse"


def pass_hat_k(passes: dict[str, list[bool]]) -> float | None:
    """pass^k: a probe counts as kept only when it passed in all of its repeats. `passes` maps each
    answerable probe to its outcome per repeat; None when there is none."""
    if not passes:
        return None
    return sum(all(v) for v in passes.values()) / len(passes)


__all__ = ["Interval", "interval", "paired_interval", "unpaired_interval", "verdict", "pass_hat_k", "LEVEL", "RESAMPLES", "SEED"]
