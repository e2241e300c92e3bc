"""An ordered work queue: the shape most long sessions share (PRs, services, endpoints, packages).

Sizing is by budget, not by item count: each item's work runs until the
session reaches its share of the target, so one generator yields a 16k-window
scenario or a 1M-token one from the same templates.
"""
from __future__ import annotations

from typing import Callable

from bench.scenarios.generators.builder import Script

Work = Callable[[int, str, int], str]   # (position, item id, token budget to reach) -> event that finishes it


def run(s: Script, items: list[str], work: Work, target: int, *, hooks: dict[int, list[Callable[[], None]]] | None = None,
        probes: int = 4, noun: str = "item", why: str = "the queue order") -> list[tuple[str, str]]:
    """Work through `items` in order; returns (item, done event) pairs and adds continuation probes."""
    hooks = hooks or {}
    at = {len(items) * (k + 1) // (probes + 1) for k in range(probes)}
    done = []
    for i, ref in enumerate(items):
        for hook in hooks.get(i, ()):
            hook()
        end = work(i, ref, target * (i + 1) // len(items))
        done.append((ref, end))
        if i + 1 < len(items):
            says_next(s, end, items[i + 1])
        if i in at and i + 1 < len(items):
            nxt = items[i + 1]
            s.probe(f"p-next-{i + 1}", end, "continuation", f"Which {noun} do you work on next?", [nxt], [f"{ref} next"],
                    f"Names {nxt} as the next {noun} ({why}); {ref} is finished.")
    return done


def says_next(s: Script, end: str, nxt: str) -> None:
    """The event that finishes an item also says which one comes next, as an agent working through a
    queue does (so the record itself shows the position, and "what next?" has an answer in it)."""
    if "next" not in s.text(end).lower():
        s.amend(end, f" Next: {nxt}.")


def pad(s: Script, until: int, step: Callable[[], object], most: int = 200) -> None:
    """Repeat `step` (one more look at logs, one more test run) until the session reaches `until` tokens."""
    for _ in range(most):
        if s.tokens() >= until:
            return
        step()


def at_fraction(n: int, fraction: float) -> int:
    return min(n - 1, max(0, int(n * fraction)))
