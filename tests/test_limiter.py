"""The adaptive limiter per provider account (bench.models.limiter): its window, over real HTTP to the loopback
server; the headers that name a wait; shares of shards and a budget shared through a file. Waits of many
seconds are in test_limiter_waits.py."""
from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta, timezone

import pytest

from bench.errors import BadInput, ModelError
from bench.models.budget import SharedBudget
from bench.models.limiter import OK, RATE_LIMITED, TRANSIENT, Limiter, Limits, account, named_wait, share
from bench.runner.run import run

pytestmark = pytest.mark.heavy   # two real-model runs of 8 cells: scheduled first (tests/conftest.py)

RUN = ["suite=smoke", "strategies=[naive]", "stress=[]", "window=800", "probes.enabled=false",
       "responses.enabled=false", "writer.model=openai/test"]


async def _ends(lim: Limiter, outcomes: list[str], wait: float | None = None) -> None:
    """Take one slot per outcome, all at once, then end them in order."""
    held = [await lim.acquire() for _ in outcomes]
    for (epoch, number, lease), outcome in zip(held, outcomes):
        lim.release(epoch, number, lease, outcome, wait)


def test_slow_start_grows_only_while_every_slot_is_used():
    lim = Limiter("a", Limits(in_flight=8, start=2, cooldown=0), 8)
    asyncio.run(_ends(lim, [OK, OK]))                   # a full window of successes: one more slot each
    assert lim.window == 4
    asyncio.run(_ends(lim, [OK] * 4))
    assert lim.window == 8                              # up to the ceiling, never past it
    asyncio.run(_ends(lim, [OK] * 8))
    assert lim.window == 8 and lim.stats.peak == 8
    idle = Limiter("b", Limits(in_flight=8, start=2, cooldown=0), 8)
    asyncio.run(_ends(idle, [OK]))                      # one call in a window of 2: no demand, no growth
    asyncio.run(_ends(idle, [OK]))
    assert idle.window == 2


def test_a_burst_of_429s_is_one_cut_and_a_later_one_another():
    lim = Limiter("a", Limits(in_flight=8, start=8, cooldown=0), 8)
    asyncio.run(_ends(lim, [RATE_LIMITED] * 8, wait=0))   # all sent before the first 429 was known: one episode
    assert (lim.stats.cuts, lim.stats.rate_limited, lim.window) == (1, 8, 4)
    asyncio.run(_ends(lim, [OK, RATE_LIMITED], wait=0))   # sent after the cut: a new episode
    assert (lim.stats.cuts, lim.window) == (2, 2)
    asyncio.run(_ends(lim, [OK, OK]))                     # at half the cut window: about one slot per window
    assert 2 < lim.window < 3


def test_a_transient_error_pauses_growth_and_cuts_nothing():
    lim = Limiter("a", Limits(in_flight=8, start=2, pause=60), 8)
    asyncio.run(_ends(lim, [TRANSIENT, OK]))
    asyncio.run(_ends(lim, [OK, OK]))
    assert (lim.window, lim.stats.cuts, lim.stats.transient) == (2, 0, 1)


def test_a_429_holds_every_call_of_the_account_for_the_named_wait():
    lim = Limiter("a", Limits(in_flight=4, start=4, cooldown=0.0), 4)

    async def go() -> float:
        epoch, number, lease = await lim.acquire()
        lim.release(epoch, number, lease, RATE_LIMITED, 0.3)
        started = time.monotonic()
        await asyncio.gather(*(lim.acquire() for _ in range(2)))
        return time.monotonic() - started

    assert asyncio.run(go()) >= 0.29        # a lower bound: a busy machine only waits longer


def test_a_free_slot_goes_to_the_task_served_least():
    """Cells that fell behind (a slow replay step, a late start) catch up, so a run does not end with a few
    cells trickling through a mostly idle window; among equals, the first to ask goes first."""
    lim = Limiter("a", Limits(in_flight=1, start=1, cooldown=0), 1)
    order: list[str] = []

    async def one(name: str) -> None:
        epoch, number, lease = await lim.acquire()
        order.append(name)
        lim.release(epoch, number, lease, OK)

    async def go() -> None:
        go_on = asyncio.Event()

        async def busy() -> None:
            for _ in range(3):             # served three times while the slot was free
                await one("busy")
            await go_on.wait()
            await one("busy")

        task = asyncio.ensure_future(busy())
        while len(order) < 3:
            await asyncio.sleep(0)
        held = await lim.acquire()         # the slot is taken: whoever asks now waits
        go_on.set()
        while not lim._waiters:
            await asyncio.sleep(0)         # busy asks first
        others = [asyncio.ensure_future(one(n)) for n in ("late", "later")]
        await asyncio.sleep(0)
        lim.release(*held, OK)
        await asyncio.gather(task, *others)

    asyncio.run(go())
    assert order == ["busy"] * 3 + ["late", "later", "busy"]


def test_a_call_is_sent_from_the_cells_own_task_and_still_beats_and_times_out(loopback, api_key, monkeypatch, capsys):
    """No task between the slot and the socket (each would cost a turn of the event loop inside the slot): the
    heartbeat is a timer and the timeout a context; a slow answer still says so, a hung one still ends."""
    import bench.models.litellm_model as lm
    from bench.models import ModelConfig, build
    from bench.harness.messages import make
    from bench.tokens import tokenizer

    monkeypatch.setattr(lm, "HEARTBEAT", 0.2)
    m = build(ModelConfig(model="openai/test", api_base=loopback.url, timeout=5, retries=0))
    ask = [make(tokenizer(), id="u1", role="user", text="Summarise: the build fails on tests/test_pool.py:88.", tag="user")]
    loopback.fail("slow", delay=0.7)
    assert asyncio.run(m.chat(ask)).text
    assert "call 1 under way for 0 s" in capsys.readouterr().err
    hung = build(ModelConfig(model="openai/test", api_base=loopback.url, timeout=0.5, retries=0))
    loopback.fail("slow", delay=30)
    with pytest.raises(ModelError, match="failed after 1 tries"):
        asyncio.run(hung.chat(ask))


@pytest.mark.parametrize("headers, wait", [
    ({"Retry-After": "7"}, 7.0),
    ({"retry-after-ms": "250"}, 0.25),
    ({"x-ratelimit-reset-requests": "6m0s", "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-tokens": "20ms", "x-ratelimit-remaining-tokens": "0"}, 360.0),
    ({"x-ratelimit-reset-requests": "1h2m3.5s", "x-ratelimit-remaining-requests": "12",   # not the spent limit
      "x-ratelimit-reset-tokens": "1.5s", "x-ratelimit-remaining-tokens": "0"}, 1.5),
    ({"Retry-After": "2", "x-ratelimit-reset-tokens": "20ms"}, 2.0),
    ({"content-type": "application/json"}, None),
])
def test_the_wait_a_429_names(headers, wait):
    assert named_wait(headers) == wait


def test_anthropic_reset_times_and_http_dates_are_read_against_the_clock():
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    at = (now + timedelta(seconds=12)).isoformat().replace("+00:00", "Z")
    later = (now + timedelta(seconds=40)).isoformat()
    headers = {"anthropic-ratelimit-tokens-reset": at, "anthropic-ratelimit-tokens-remaining": "0",
               "anthropic-ratelimit-requests-reset": later, "anthropic-ratelimit-requests-remaining": "40"}
    assert named_wait(headers, now.timestamp()) == pytest.approx(12)
    assert named_wait({"Retry-After": "Thu, 01 Jan 2026 00:00:30 GMT"}, now.timestamp()) == pytest.approx(30)


def test_an_account_is_the_endpoint_and_a_hash_of_the_key():
    a, b = account("openai", ["sk-one-123456789"]), account("openai", ["sk-two-123456789"])
    assert a != b and a.startswith("openai#") and "sk-" not in a
    assert account("http://h/v1", []) == "http://h/v1#nokey"


def test_shards_shares_sum_to_the_limit():
    for total in (1, 4, 6, 8, 13):
        for n in (1, 2, 3, 4, 7):
            parts = [share(total, (i, n)) for i in range(1, n + 1)]
            assert sum(parts) == total and max(parts) - min(parts) <= 1


def test_a_shard_left_without_a_call_is_one_line(tmp_path, loopback, api_key):
    with pytest.raises(BadInput, match=r"limits.in_flight: 2 calls in flight split over 4 shards leaves shard 3"):
        run([*RUN, f"writer.api_base={loopback.url}", "limits.in_flight=2", "shard=3/4", f"out={tmp_path / 'r'}"])


def test_a_shared_budget_never_lends_more_than_its_total(tmp_path):
    one, two = SharedBudget(str(tmp_path), "acct", 3), SharedBudget(str(tmp_path), "acct", 3)
    leases = [one.take(), two.take(), one.take()]
    assert all(isinstance(x, str) for x in leases) and two.take() is None
    one.give(leases[0])
    assert isinstance(two.take(), str)
    two.give(leases[1], hold=30)                 # a 429 in one process holds the others
    assert isinstance(one.take(), float) and one.take() > 25


def test_real_model_cells_fill_the_limit_and_never_pass_it(tmp_path, api_key):
    """8 cells against a server that takes 0.2 s an answer (twice the limit's cells, each with one call in
    flight: a limiter that let every cell call would pass 4): the account's calls reach the limit and never
    exceed it; the results are those of a run with one call at a time (calls of a cell stay in order)."""
    from bench.testing import LoopbackServer

    with LoopbackServer(latency=0.2, lifetime=600) as srv:
        many = run([*RUN, f"writer.api_base={srv.url}", "repeats=8", "scenarios=[scenarios/hand/debug-then-recall.yaml]",
                    "limits.in_flight=4", f"out={tmp_path / 'many'}"])
        assert many.code == 0 and len(many.rows) == 8
        (stats,) = many.limiters.values()
        assert srv.max_in_flight <= 4 and stats.peak == 4 and stats.cuts == 0
        one = run([*RUN, f"writer.api_base={srv.url}", "repeats=8", "scenarios=[scenarios/hand/debug-then-recall.yaml]",
                   "limits.in_flight=1", f"out={tmp_path / 'one'}"])
    key = ("scenario", "strategy", "writer", "seed", "goal_retention", "constraint_fidelity", "compactions",
           "compaction_input_tokens", "compaction_output_tokens")
    assert [[r[k] for k in key] for r in one.summary] == [[r[k] for k in key] for r in many.summary]


def test_provider_cached_tokens_are_reported_beside_the_estimate(tmp_path, loopback, api_key):
    loopback.cached_tokens = 5
    got = run([*RUN, f"writer.api_base={loopback.url}", "scenarios=[scenarios/hand/debug-then-recall.yaml]", f"out={tmp_path / 'r'}"])
    (row,) = got.summary
    calls = sum(1 for u in loopback.usage)
    assert int(row["provider_cached_tokens"]) == 5 * calls > 0
    assert int(row["compaction_cached_tokens"]) >= 0
    offline = run([*RUN[:-1], "scenarios=[scenarios/hand/debug-then-recall.yaml]", f"out={tmp_path / 'o'}"])
    (row,) = offline.summary
    assert row["provider_cached_tokens"] == "" and row["compaction_cached_tokens"] != ""
