"""claude_code completed (issue 29 item 4): instruction files re-injected after every compaction, and idle
compaction before a gap longer than the cache TTL, so the request after the gap sends the summary only, and reads
it from the cache when the user is back within the TTL of the compaction."""
from __future__ import annotations

import asyncio
import io
import json
from dataclasses import replace

from bench.harness.logs import replay_requests
from bench.harness.replay import ReplayOptions, replay
from bench.scoring.cache_sim import load_profile
from bench.scoring.pricing import Rates
from bench.scoring.usage import Meter

from bench.models.offline import OfflineModel
from bench.scenarios import loader
from bench.strategies import sectioned
from bench.strategies.claude_code import ClaudeCode
from test_strategy_common import TOK, run


def _session(gap: float = 7200.0, turns: int = 30):
    events, t = [{"id": "u0", "role": "user", "text": "Process the items in order. Never touch prod.", "t": 0}], 0.0
    events += [{"id": "a-md", "role": "assistant", "text": "Reading the rules.", "t": 5,
                "calls": [{"id": "c-md", "tool": "read_file", "args": {"path": "CLAUDE.md"}}]},
               {"id": "r-md", "role": "tool", "call": "c-md", "t": 6, "text": "Run `make test` before every commit."}]
    t = 10.0
    for i in range(turns):
        if i == turns // 2:
            t += gap
            events.append({"id": "u-back", "role": "user", "text": "I'm back, carry on.", "t": t})
        t += 10
        events.append({"id": f"a{i}", "role": "assistant", "text": f"Item {i}.", "t": t,
                       "calls": [{"id": f"c{i}", "tool": "run", "args": {"item": i}}]})
        t += 5
        events.append({"id": f"r{i}", "role": "tool", "call": f"c{i}", "t": t,
                       "text": "\n".join(f"item {i} line {j}: value {i * 100 + j}" for j in range(12))})
    return loader.from_events(events, id="idle", window=4000, user="Dana")


def test_idle_compaction_runs_before_the_gap_and_the_request_after_it_sends_the_summary():
    s = _session()
    play = [sectioned.offline_play]
    _, with_idle, comps = run(s, ClaudeCode(idle_ttl=300, idle_min=0.3), OfflineModel(players=play))
    _, without, _ = run(s, ClaudeCode(idle_ttl=None), OfflineModel(players=play))
    idle = [c for c in comps if c.get("idle")]
    assert idle and idle[0]["event"] == "u-back" and idle[0]["ok"]
    last = max(e.t for e in s.events if e.t < next(e.t for e in s.events if e.id == "u-back"))
    assert idle[0]["t"] == last + 270            # quiet for 0.9 of the TTL: before the cache expires
    i = next(k for k, e in enumerate(e for e in s.events if e.role == "assistant") if e.id == f"a{15}")
    after_idle, after_plain = with_idle[i], without[i]
    assert after_idle[1].tag == "summary" and not any(m.id.startswith("r1") and m.id != "r14" for m in after_idle)
    assert sum(m.tokens for m in after_idle) < sum(m.tokens for m in after_plain)


def test_no_idle_compaction_when_the_context_is_small_or_the_gap_short():
    play = [sectioned.offline_play]
    _, _, comps = run(_session(gap=100), ClaudeCode(idle_ttl=300, idle_min=0.3), OfflineModel(players=play))
    assert not any(c.get("idle") for c in comps)
    _, _, comps = run(_session(), ClaudeCode(idle_ttl=300, idle_min=0.99), OfflineModel(players=play))
    assert not any(c.get("idle") for c in comps)


def test_instruction_files_come_back_after_every_compaction():
    s = _session(gap=10, turns=60)
    _, requests, comps = run(s, ClaudeCode(), OfflineModel(players=[sectioned.offline_play]))
    assert len(comps) >= 2
    for k in range(1, len(comps) + 1):
        first = next(r for r in requests if any(m.id == f"summary-{k}" for m in r))
        files = [m for m in first if m.tag == "instructions"]
        assert len(files) == 1 and "Run `make test` before every commit." in files[0].text
        assert "CLAUDE.md" in files[0].text
    assert comps[0]["instructions"] == ["CLAUDE.md"]


def _metered(s, strategy, profile):
    """Per billed request (kind, event, tokens, cached read) and the cell's cost, as the scorer's meter sees them."""
    rq, cp = io.StringIO(), io.StringIO()
    strategy.name = "cc"
    asyncio.run(replay(s, strategy, OfflineModel(players=[sectioned.offline_play]), TOK,
                       ReplayOptions(window=s.window), rq, cp, "cell"))
    meter, rows = Meter(profile, RATES), []
    for r in replay_requests(iter(json.loads(x) for x in rq.getvalue().splitlines()), s, TOK, True):
        before = meter.cached
        meter.add(r)
        rows.append((r.kind, r.record.get("event"), r.tokens, meter.cached - before, [m.tag for m in r.messages]))
    return rows, meter.columns()


RATES = Rates("test", input=3e-6, output=15e-6, cache_read=0.3e-6, cache_write=3.75e-6)


def test_the_request_after_the_gap_reads_the_idle_summary_from_the_cache():
    """The idle compaction's installed context is written to the cache at once (a `warm` request), so the user's
    return within the TTL reads it; without idle compaction that request finds the whole old prefix expired."""
    s = _session(gap=400)
    for name in ("anthropic", "openai"):
        prof = replace(load_profile(name), min_tokens=64, step=1)
        idle_rows, idle_cols = _metered(s, ClaudeCode(idle_ttl=300, idle_min=0.3, warm_min=64), prof)
        plain_rows, plain_cols = _metered(s, ClaudeCode(idle_ttl=None), prof)
        warm = [r for r in idle_rows if r[0] == "warm"]
        assert len(warm) == 1 and warm[0][4][1] == "summary" and warm[0][3] == 0   # nothing of it cached before
        back = next(r for r in idle_rows if r[1] == "a15")
        assert back[4][:2] == ["system", "summary"] and back[3] >= warm[0][2] - 8    # the whole warmed prefix read
        assert next(r for r in plain_rows if r[1] == "a15")[3] == 0                   # expired: nothing to read
        assert idle_cols["cost_usd"] < plain_cols["cost_usd"]
        assert idle_cols["cache_hit_rate"] > plain_cols["cache_hit_rate"]


def test_no_warm_request_for_a_prefix_the_cache_would_not_keep():
    prof = replace(load_profile("openai"), min_tokens=64, step=1)
    rows, _ = _metered(_session(gap=400), ClaudeCode(idle_ttl=300, idle_min=0.3, warm_min=5000), prof)
    assert not any(r[0] == "warm" for r in rows)
    rows, _ = _metered(_session(gap=400), ClaudeCode(idle_ttl=300, idle_min=0.3), prof)   # warm_min null: never
    assert not any(r[0] == "warm" for r in rows)
