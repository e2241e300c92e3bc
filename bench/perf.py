"""Replay speed benchmark: `python -m bench.perf` prints figures (targets live here, not in tests).

Targets (issue 2): replaying 4x the events costs at most 5x the time, and the
4,000-event replay of `truncate` (32k window) takes at most 3x the floor, the
time to tokenize every event of that session once. Also `--help` under 1 s.
"""
from __future__ import annotations

import argparse
import asyncio
import io
import random
import subprocess
import sys
import time

from . import loader
from .replay import ReplayOptions, replay
from .scenario import Scenario
from .tokens import Tokenizer

WORDS = ("retry backoff cache index migration schema rollback deploy lint flaky test timeout queue "
         "review merge branch commit release config parser token window summary request header").split()


def synthetic(n_events: int, window: int = 32_000, seed: int = 0) -> Scenario:
    """A session of about `n_events` events: user turns, tool calls with sizeable outputs, background pings."""
    rng = random.Random(seed)

    def text(n: int) -> str:
        return " ".join(f"{rng.choice(WORDS)}{rng.randrange(1000)}" for _ in range(n))

    events: list[dict] = [{"id": "u0", "role": "user", "text": "Work through the queue. " + text(30)}]
    i = 0
    while len(events) < n_events:
        i += 1
        events.append({"id": f"a{i}", "role": "assistant", "text": text(20),
                       "calls": [{"id": f"c{i}", "tool": "run", "args": {"step": i}}]})
        events.append({"id": f"r{i}", "role": "tool", "call": f"c{i}",
                       "text": "\n".join(text(12) for _ in range(rng.randrange(5, 40)))})
        if i % 10 == 0:
            events.append({"id": f"b{i}", "role": "background", "source": "cron", "text": text(15)})
        if i % 25 == 0:
            events.append({"id": f"u{i}", "role": "user", "text": text(25)})
    events.append({"id": "final", "role": "assistant", "text": "done"})
    return loader.from_events(events, id=f"perf-{n_events}", window=window)


def floor_seconds(s: Scenario, encoding: str) -> float:
    """Tokenize every event once with a cold cache: the least any replay must do."""
    tok = Tokenizer(encoding)
    started = time.perf_counter()
    for e in s.events:
        tok.count(e.text)
    return time.perf_counter() - started


def replay_seconds(s: Scenario, strategy_name: str, encoding: str) -> tuple[float, int]:
    from strategies.full import Full
    from strategies.truncate import Truncate

    from .models.offline import OfflineModel

    strategy = {"truncate": Truncate, "full": Full}[strategy_name]()
    strategy.name = strategy_name
    tok = Tokenizer(encoding)  # cold cache: replay pays for its own tokenizing
    started = time.perf_counter()
    stats = asyncio.run(replay(s, strategy, OfflineModel(), tok, ReplayOptions(window=s.window),
                               io.StringIO(), io.StringIO(), "perf"))
    return time.perf_counter() - started, stats.compactions


def help_seconds() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "bench.cli", "--help"], capture_output=True, check=True)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.perf", description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs=2, default=[1000, 4000], metavar=("SMALL", "LARGE"))
    p.add_argument("--strategy", default="truncate", choices=["truncate", "full"])
    p.add_argument("--encoding", default="o200k_base")
    a = p.parse_args(argv)
    small, large = (synthetic(n) for n in a.sizes)
    Tokenizer(a.encoding).count("warm up tiktoken")  # load the encoding outside every timing
    floor = floor_seconds(large, a.encoding)
    t_small, c_small = replay_seconds(small, a.strategy, a.encoding)
    t_large, c_large = replay_seconds(large, a.strategy, a.encoding)
    growth = t_large / t_small
    ratio = t_large / floor
    print(f"replay {a.strategy}, 32k window, {len(small.events)} events: {t_small:.3f} s ({c_small} compactions)")
    print(f"replay {a.strategy}, 32k window, {len(large.events)} events: {t_large:.3f} s ({c_large} compactions)")
    print(f"tokenize-once floor, {len(large.events)} events: {floor:.3f} s")
    print(f"growth for {len(large.events) / len(small.events):.1f}x events: {growth:.2f}x (target <= 5x)")
    print(f"large replay / floor: {ratio:.2f}x (target <= 3x)")
    h = help_seconds()
    print(f"compaction-bench --help: {h:.3f} s (target < 1 s)")
    return 0 if growth <= 5 and ratio <= 3 and h < 1 else 1


if __name__ == "__main__":
    sys.exit(main())
