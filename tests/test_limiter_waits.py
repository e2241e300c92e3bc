"""Rate-limit storms over real HTTP: one cut per episode, and no request reaches the server sooner than the
wait the provider named. These wait seconds of real time, so they sit in their own file (pytest-xdist runs a
file per worker, beside the rest); the assertions are lower bounds on the server's own arrival times."""
from __future__ import annotations

import asyncio

import pytest

from bench.harness.messages import make
from bench.models import ModelConfig, build
from bench.models.limiter import ACCOUNTS
from bench.runner.run import run
from bench.testing import LoopbackServer
from bench.tokens import tokenizer

pytestmark = pytest.mark.waits
TOK = tokenizer()


def after_the_storm(srv: LoopbackServer, since: str = "ended") -> tuple[float, list[float]]:
    """(when the last 429 was sent, or arrived, arrivals of every request after it), from the server's log."""
    last = max(r[since] for r in srv.log if r["status"] == 429)
    return last, [r["arrived"] for r in srv.log if r["arrived"] > last]


def test_a_429_storm_is_one_cut_and_nothing_comes_sooner_than_retry_after(tmp_path, api_key):
    with LoopbackServer(latency=0.05, lifetime=600) as srv:
        srv.storm(retry_after=7, lasting=1.0, after=6)      # mid-run, with calls of several cells in flight
        got = run(["suite=smoke", "scenarios=[scenarios/hand/debug-then-recall.yaml]", "strategies=[naive]",
                   "stress=[]", "window=800", "probes.enabled=false", "responses.enabled=false", "repeats=8",
                   "writer.model=openai/test", f"writer.api_base={srv.url}", "limits.start=4",
                   f"out={tmp_path / 'r'}"])
    assert got.code == 0 and len(got.rows) == 8
    (stats,) = got.limiters.values()
    limited = sum(r["status"] == 429 for r in srv.log)
    assert stats.cuts == 1 and stats.rate_limited == limited >= 1
    last, later = after_the_storm(srv)
    assert later and min(later) >= last + 7.0


@pytest.mark.parametrize("header", ["openai", "anthropic"])
def test_reset_headers_hold_the_account_as_retry_after_does(header, api_key):
    with LoopbackServer(latency=0.05) as srv:
        srv.storm(retry_after=2, lasting=0.5, header=header)
        model = build(ModelConfig(model="openai/test", api_base=srv.url, timeout=10, retries=2, backoff=0.01))
        asks = [[make(TOK, id="u", role="user", text=f"Summarise: item {i} is due on Friday.", tag="user")]
                for i in range(4)]

        async def many():
            return await asyncio.gather(*(model.chat(m) for m in asks))

        assert len(asyncio.run(many())) == 4
    stats = ACCOUNTS.get(model.account).stats
    # Anthropic names a moment, fixed as the 429 is made (after it arrived, before it is sent)
    last, later = after_the_storm(srv, "arrived" if header == "anthropic" else "ended")
    assert stats.cuts == 1 and later and min(later) >= last + 2.0
