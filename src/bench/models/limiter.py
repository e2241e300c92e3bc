"""An adaptive bound on the calls in flight per provider account (DESIGN §5, docs/models.md "Limiter").

Why adaptive: a provider limits an account (a key at an endpoint), not a model or a cell, and says
how much it serves only by refusing. A fixed bound is either too low (a sweep crawls at one call in
flight) or too high (a storm of 429s, each one retried). So, as TCP does with a network: a window
that starts small (`start`) and grows while calls succeed and every slot is used — by one per
success up to the last cut's half (slow start), then by about one per window — up to `in_flight`. A
rate-limit episode halves it once: a 429 of a call sent before the last cut belongs to the episode
that cut already answered, so a burst of 429s from calls that were all in flight is one cut, not one
per call. Every 429 holds all calls of the account until the longest wait the provider named
(Retry-After, x-ratelimit-reset-*, anthropic-ratelimit-*-reset) has passed, and at least `cooldown`
(a model's `max_wait` caps a named wait, as it caps its own waits between tries, and says so).
A transient error (5xx, a timeout, a dropped connection) says nothing about the limit: it pauses
growth for `pause` seconds and cuts nothing.

Shards on one key either take their share of `in_flight` (the default: the shares sum to it) or,
with `shared=DIR` on a filesystem they all see, draw from one budget kept in a locked file there
(`budget.py`). The key itself never appears anywhere: an account is the endpoint plus a hash.
"""
from __future__ import annotations

import asyncio
import hashlib
import heapq
import itertools
import math
import time
import weakref
from datetime import datetime
from email.utils import parsedate_to_datetime
from dataclasses import dataclass, field
from typing import Any

from bench.models.budget import SharedBudget

OK, RATE_LIMITED, TRANSIENT, FATAL = "ok", "rate_limited", "transient", "fatal"


@dataclass(frozen=True)
class Limits:
    """The run's `limits:` block (conf/config.yaml); `min` is the least value a run accepts."""
    in_flight: int = field(default=8, metadata={"min": 1})      # the most calls in flight per account
    start: int = field(default=2, metadata={"min": 1})          # slow start's first window
    cooldown: float = field(default=1.0, metadata={"min": 0})   # least hold after a 429 that names no wait
    pause: float = field(default=5.0, metadata={"min": 0})      # no growth this long after a transient error
    cells: int | None = field(default=None, metadata={"min": 1})      # real-model cells at once; null: 4 x in_flight
    shared: str | None = field(default=None, metadata={"what": "a directory path"})  # one budget for all shards


def account(base: str, secrets: list[str]) -> str:
    """Who a provider counts calls against: the endpoint (api_base, else the provider) and a hash of
    the key(s) in use, never the key."""
    digest = hashlib.sha256("\0".join(secrets).encode()).hexdigest()[:12] if secrets else "nokey"
    return f"{base}#{digest}"


def share(total: int, spec: tuple[int, int] | None) -> int:
    """Shard I of N's part of `total` calls in flight: the parts of all N sum to `total` (0 when N > total)."""
    if spec is None:
        return total
    i, n = spec
    return total // n + (1 if i <= total % n else 0)


@dataclass
class LimiterStats:
    calls: int = 0
    rate_limited: int = 0       # 429s answered
    cuts: int = 0               # rate-limit episodes (one cut each)
    transient: int = 0
    peak: int = 0               # most calls in flight at once
    held_s: float = 0.0         # time calls waited for a slot or a cooldown, summed over calls


class Limiter:
    """One account's window. Use `async with limiter.slot() as ticket:` around one HTTP request and set
    `ticket.outcome` (and `ticket.wait`, the provider's named wait in seconds) before it ends."""

    def __init__(self, name: str, limits: Limits, ceiling: int, budget: SharedBudget | None = None):
        self.name, self.limits, self.ceiling, self.budget = name, limits, max(1, ceiling), budget
        self.window = float(min(limits.start, self.ceiling))
        self.threshold = float(self.ceiling)    # slow start ends here (half the window at the last cut)
        self.active = 0
        self.epoch = 0                          # cuts so far; a call sent in an older epoch is part of its episode
        self.taken = 0                          # slots handed out so far
        self.filled = -1                        # `taken` when every slot of the window was last in use
        self.until = 0.0                        # time.monotonic() before which nothing is sent
        self.calm = 0.0                         # no growth before this
        self.stats = LimiterStats()
        # waiters as a heap of [slots the asking task was given before, arrival, future, task]: a free slot goes to
        # the task (a cell) served least so far, so cells that fell behind catch up and all end together
        self._waiters: list[list[Any]] = []
        self._served: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._order = itertools.count()
        self._loop: Any = None
        self._timer: Any = None

    def slot(self) -> "Ticket":
        return Ticket(self)

    def _bind(self) -> asyncio.AbstractEventLoop:
        """A run's cells share one loop; a new loop (a later asyncio.run) starts with no calls in flight."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop, self.active, self._waiters, self._timer = loop, 0, [], None
            self._served = weakref.WeakKeyDictionary()
        return loop

    def _open(self) -> bool:
        return time.monotonic() >= self.until and self.active < max(1, math.floor(self.window))

    async def acquire(self) -> tuple[int, int, Any]:
        """Wait for a slot: (epoch when sent, its number, the shared lease)."""
        loop = self._bind()
        started = time.monotonic()
        task = asyncio.current_task()
        if not self._waiters and self._open():
            lease = self._lease()
            if lease is not False:
                return self._take(lease, started, task)
        fut = loop.create_future()
        heapq.heappush(self._waiters, [self._served.get(task, 0) if task else 0, next(self._order), fut, task])
        self._wake()
        try:
            return await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():    # granted as it was cancelled: give the slot back
                epoch, number, lease = fut.result()
                self.release(epoch, number, lease, FATAL)
            else:
                self._waiters = [w for w in self._waiters if w[2] is not fut]
                heapq.heapify(self._waiters)
            raise

    def _lease(self) -> Any:
        """The shared budget's lease (None without one), or False when the budget is spent or cooling."""
        if self.budget is None:
            return None
        lease = self.budget.take()
        if isinstance(lease, float):         # another process met a 429: hold here too
            self.until = max(self.until, time.monotonic() + lease)
            return False
        return False if lease is None else lease

    def _take(self, lease: Any, started: float, task: Any) -> tuple[int, int, Any]:
        if task is not None:
            self._served[task] = self._served.get(task, 0) + 1
        self.active += 1
        self.taken += 1
        if self.active >= math.floor(self.window):
            self.filled = self.taken
        self.stats.calls += 1
        self.stats.peak = max(self.stats.peak, self.active)
        self.stats.held_s += time.monotonic() - started
        return self.epoch, self.taken, lease

    def _wake(self) -> None:
        """Hand free slots to the waiters, the least served task first (in arrival order among equals); come
        back when a cooldown ends or the shared budget may have room."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._waiters and self._open():
            _, _, fut, task = self._waiters[0]
            if fut.done():
                heapq.heappop(self._waiters)
                continue
            lease = self._lease()
            if lease is False:
                break
            heapq.heappop(self._waiters)
            fut.set_result(self._take(lease, time.monotonic(), task))
        if self._waiters and self._timer is None and self._loop is not None:
            now = time.monotonic()
            if now < self.until:
                delay = self.until - now
            elif self.budget is not None and self.active < max(1, math.floor(self.window)):
                delay = self.budget.poll
            else:
                return       # a release will wake them
            self._timer = self._loop.call_later(delay, self._wake)

    def release(self, epoch: int, number: int, lease: Any, outcome: str, wait: float | None = None) -> None:
        """The end of one request: adapt the window to how it went, then let the next ones go. A success
        grows the window only when every slot was in use while it was in flight (or calls are waiting):
        an account that is not asked for more never learns a limit it has not tried."""
        self.active = max(0, self.active - 1)
        now = time.monotonic()
        hold = 0.0
        if outcome == RATE_LIMITED:
            self.stats.rate_limited += 1
            if epoch == self.epoch:          # sent after the last cut: a new episode, cut once
                self.epoch += 1
                self.stats.cuts += 1
                self.threshold = max(1.0, math.floor(self.window / 2))
                self.window = self.threshold
            hold = max(wait or 0.0, self.limits.cooldown)
            self.until = max(self.until, now + hold)
        elif outcome == TRANSIENT:
            self.stats.transient += 1
            self.calm = max(self.calm, now + self.limits.pause)
        elif outcome == OK and (self.filled >= number or self._waiters) and now >= self.calm and epoch == self.epoch:
            grow = 1.0 if self.window < self.threshold else 1.0 / self.window
            self.window = min(float(self.ceiling), self.window + grow)
        if self.budget is not None:
            self.budget.give(lease, hold)
        self._wake()


class Ticket:
    """One request's slot; the caller sets `outcome` (and `wait`) before leaving the block."""

    def __init__(self, limiter: Limiter):
        self.limiter = limiter
        self.outcome = FATAL
        self.wait: float | None = None
        self._held: tuple[int, int, Any] | None = None

    async def __aenter__(self) -> "Ticket":
        self._held = await self.limiter.acquire()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._held is not None:
            epoch, number, lease = self._held
            self._held = None
            self.limiter.release(epoch, number, lease, self.outcome, self.wait)


class Accounts:
    """This process's limiters, one per account, under the run's limits (`configure`, once per run)."""

    def __init__(self) -> None:
        self.limits = Limits()
        self.ceiling = self.limits.in_flight
        self.by: dict[str, Limiter] = {}

    def configure(self, limits: Limits, shard: tuple[int, int] | None = None) -> None:
        """A shard takes its share of `in_flight`, unless the shards share a budget (`limits.shared`)."""
        self.limits = limits
        self.ceiling = limits.in_flight if limits.shared else share(limits.in_flight, shard)
        self.by = {}

    def get(self, name: str) -> Limiter:
        if name not in self.by:
            budget = SharedBudget(self.limits.shared, name, self.limits.in_flight) if self.limits.shared else None
            self.by[name] = Limiter(name, self.limits, self.ceiling, budget)
        return self.by[name]


ACCOUNTS = Accounts()



def named_wait(headers: Any, now: float | None = None) -> float | None:
    """The longest wait (seconds) a 429's headers name: Retry-After (seconds or an HTTP date),
    retry-after-ms, OpenAI's x-ratelimit-reset-{requests,tokens} ("6m0s", "20ms"; a bare number is
    seconds, or an epoch time when it is one), Anthropic's anthropic-ratelimit-*-reset (RFC 3339). A
    limit whose `remaining` header says it is not spent is not what refused the call, so its reset is
    not waited for. None when no header names a wait."""
    if headers is None:
        return None
    now = time.time() if now is None else now
    get = {str(k).lower(): str(v) for k, v in dict(headers).items()}.get
    waits: list[float] = []
    if get("retry-after-ms") is not None:
        waits.append(_number(get("retry-after-ms"), 0.001))
    if get("retry-after") is not None:
        value = get("retry-after")
        waits.append(_number(value) if _number(value) is not None else _date(value, now))
    for key in sorted({str(k).lower() for k in dict(headers)}):
        for prefix, parse in (("x-ratelimit-reset-", _duration), ("anthropic-ratelimit-", _date)):
            if not key.startswith(prefix) or (prefix == "anthropic-ratelimit-" and not key.endswith("-reset")):
                continue
            what = key[len(prefix):].removesuffix("-reset")
            left = get(f"x-ratelimit-remaining-{what}" if prefix.startswith("x-") else f"{prefix}{what}-remaining")
            if left is not None and (_number(left) or 0) > 0:
                continue
            waits.append(parse(get(key), now))
    waits = [w for w in waits if w is not None]
    return max(0.0, max(waits)) if waits else None


def _number(text: str | None, scale: float = 1.0) -> float | None:
    try:
        value = float(str(text).strip())
    except (TypeError, ValueError):
        return None
    return value * scale if math.isfinite(value) else None


def _duration(text: str, now: float) -> float | None:
    """OpenAI's reset: "1s", "6m0s", "1h2m3.5s", "20ms"; a bare number is seconds (or an epoch time)."""
    value = _number(text)
    if value is not None:
        return value - now if value > 1e9 else value
    total, number = 0.0, ""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    text, i = text.strip().lower(), 0
    while i < len(text):
        ch = text[i]
        if ch.isdigit() or ch == ".":
            number += ch
            i += 1
            continue
        unit = "ms" if text.startswith("ms", i) else ch
        if unit not in units or not number:
            return None
        try:
            total += float(number) * units[unit]
        except ValueError:
            return None
        number, i = "", i + len(unit)
    return None if number else total


def _date(text: str | None, now: float) -> float | None:
    """Seconds from now to an RFC 3339 or HTTP date."""
    if not text:
        return None
    for read in (lambda t: datetime.fromisoformat(t.replace("Z", "+00:00")), parsedate_to_datetime):
        try:
            moment = read(text.strip())
        except (TypeError, ValueError, IndexError):
            continue
        if moment.tzinfo is None:
            continue
        return moment.timestamp() - now
    return None


__all__ = ["Limits", "Limiter", "Ticket", "Accounts", "ACCOUNTS", "account", "share", "OK", "RATE_LIMITED",
           "TRANSIENT", "FATAL", "named_wait"]
