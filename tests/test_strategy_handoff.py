"""handoff: at the trigger a new session starts from the system prompt, the handoff and the user's latest
request, nothing else; it is the smallest context after compaction, and failures are recorded."""
from __future__ import annotations

from bench.errors import ModelError
from bench.models.offline import OfflineModel
from bench.strategies import sectioned
from bench.harness.strategy import default_reserve, trigger_limit
from bench.strategies.anchored import Anchored
from bench.strategies.claude_code import ClaudeCode
from bench.strategies.handoff import SECTIONS, Handoff
from test_strategy_common import TOK, Recorder, assert_paired, long_scenario, run


def test_the_handoff_sections():
    assert SECTIONS == ["Goal", "Decisions and Their Reasons", "Progress", "Next Step", "Pitfalls"]


def test_the_new_session_holds_the_handoff_and_the_users_latest_request_only():
    s = long_scenario(turns=70)
    writer = Recorder(OfflineModel(players=[sectioned.offline_play]))
    stats, requests, comps = run(s, Handoff(), writer)
    assert len(comps) >= 3 and stats.compaction_failures == 0
    users = [e for e in s.events if e.role == "user"]
    for k, comp in enumerate(comps, 1):
        at = next(i for i, e in enumerate(s.events) if e.id == comp["event"])
        latest = [e for e in users if s.events.index(e) < at][-1]
        first = next(r for r in requests if any(m.id == f"handoff-{k}" for m in r))
        assert [m.id for m in first] == ["system", f"handoff-{k}", latest.id]
        assert first[2].tag == "user" and first[2].text == latest.text      # verbatim, from the record
        assert first[1].parts[0].tag == "frame" and first[1].parts[1].text == comp["text"]
    for messages, max_tokens, purpose in writer.requests:
        assert purpose == "handoff" and max_tokens == int(0.05 * s.window)
    for r in requests:
        assert_paired(r)


def test_handoff_leaves_the_smallest_context_after_compaction():
    s = long_scenario(turns=70, window=8000, lines=20)
    after = {}
    for name, strategy in (("handoff", Handoff()), ("claude_code", ClaudeCode()), ("anchored", Anchored())):
        _, _, comps = run(s, strategy, Recorder(OfflineModel(players=[sectioned.offline_play])))
        assert comps
        after[name] = sum(c["after"] for c in comps) / len(comps)
    assert after["handoff"] < after["claude_code"] < after["anchored"]


def test_a_failing_writer_is_recorded_and_the_oldest_turns_go_when_the_request_overflows():
    async def fail(*a, **k):
        raise ModelError("timed out after 120 s")

    writer = Recorder()
    writer.chat = fail
    s = long_scenario(turns=40)
    stats, requests, comps = run(s, Handoff(), writer)
    limit = trigger_limit(s.window, *default_reserve(s.window))
    assert comps and stats.compactions == 0 and all("timed out" in c["error"] for c in comps)
    assert all(c["fallback"] == "drop_oldest" and c["dropped"] for c in comps)
    assert max(TOK.request_size([m.tokens for m in r]) for r in requests) <= limit
