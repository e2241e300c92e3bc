"""naive: repeated summaries within budget, each built from the previous summary plus new messages."""
from __future__ import annotations

from bench.errors import ModelError
from bench.models.offline import OfflineModel
from bench.harness.strategy import default_reserve, trigger_limit
from bench.strategies.naive import PROMPT, Naive
from test_strategy_common import TOK, Recorder, overlong, assert_paired, long_scenario, run


def event_ids(s):
    return [e.id for e in s.events]


def test_each_summary_is_built_from_the_previous_summary_plus_new_messages_only():
    s = long_scenario(turns=70)
    writer = Recorder()
    _, _, comps = run(s, Naive(), writer)
    assert len(comps) >= 3 and len(writer.requests) == len(comps)
    seen: list[str] = []
    previous = None
    for (messages, max_tokens, purpose), comp in zip(writer.requests, comps):
        assert purpose == "summary" and messages[0].role == "system"
        assert messages[-1].text == PROMPT.replace("{budget}", str(max_tokens))
        body = messages[1:-1]
        if previous is None:
            assert body[0].tag == "user"
        else:
            assert body[0].tag == "summary" and body[0].text == previous   # the previous summary, verbatim
            body = body[1:]
        assert all(m.tag != "summary" for m in body)
        seen.extend(m.id for m in body)
        previous = comp["text"]
    # every event before the last compaction went to the writer exactly once, in order
    assert seen == event_ids(s)[:len(seen)]
    assert comps[-1]["summarised"][-1] == seen[-1]


def test_every_summary_stays_within_its_budget_with_the_offline_writer():
    s = long_scenario(turns=70)
    writer = Recorder(OfflineModel())
    stats, requests, comps = run(s, Naive(budget=0.08), writer)
    budget = int(0.08 * s.window)
    assert len(comps) >= 3 and stats.compaction_failures == 0
    for comp, (messages, max_tokens, _) in zip(comps, writer.requests):
        assert max_tokens == budget == comp["budget"]
        assert 0 < TOK.count(comp["text"]) <= budget and not comp["problems"]
    for later in writer.requests[1:]:
        assert later[0][1].tag == "summary"
    # right after each compaction the history is one user-role summary (plus what stayed verbatim)
    for k, comp in enumerate(comps, 1):
        first = next(r for r in requests if r[1].id == f"summary-{k}")
        assert first[1].role == "user" and first[1].text == comp["text"]
        assert [m.id for m in first[2:]] == comp["verbatim"]


def test_an_overlong_summary_is_cut_to_the_budget_and_recorded():
    s = long_scenario(turns=20)
    _, requests, comps = run(s, Naive(), Recorder(reply=overlong))
    budget = int(0.1 * s.window)
    assert comps
    for c in comps:
        assert TOK.count(c["text"]) <= budget and "exceeds its budget" in c["problems"][0]


def test_keep_last_keeps_whole_turns_verbatim():
    s = long_scenario(turns=30)
    _, requests, comps = run(s, Naive(keep_last=3), Recorder())
    assert comps
    for c in comps:
        # turns here are (assistant + result) or a lone user message: at most 3 messages, never a split pair
        assert 1 <= len(c["verbatim"]) <= 3
        assert not (c["verbatim"][0].startswith("r"))
    for r in requests:
        assert_paired(r)


def test_the_writer_request_fits_the_window_with_its_budget():
    s = long_scenario(turns=30)
    writer = Recorder()
    _, _, comps = run(s, Naive(budget=0.3), writer)
    assert comps
    for messages, max_tokens, _ in writer.requests:
        assert TOK.request_size([m.tokens for m in messages]) + max_tokens <= s.window
    assert any(c["verbatim"] for c in comps)   # the overflow stayed verbatim instead


def test_a_failing_writer_is_recorded_and_the_run_goes_on_by_dropping_turns():
    async def fail(*a, **k):
        raise ModelError("HTTP 500 after 3 retries")

    writer = Recorder()
    writer.chat = fail
    s = long_scenario(turns=30)
    stats, requests, comps = run(s, Naive(), writer)
    limit = trigger_limit(s.window, *default_reserve(s.window))
    assert comps and stats.compactions == 0 and stats.compaction_failures == len(comps)
    assert all("HTTP 500" in c["error"] and c["fallback"] == "drop_oldest" and c["dropped"] for c in comps)
    assert stats.requests == len(requests) == sum(e.role == "assistant" for e in s.events)
    assert max(TOK.request_size([m.tokens for m in r]) for r in requests) <= limit


def test_a_lower_trigger_compacts_earlier_and_more_often():
    s = long_scenario(turns=70)
    _, _, default = run(s, Naive(), Recorder())
    _, _, early = run(s, Naive(trigger=0.5), Recorder())
    assert len(early) > len(default)
    assert all(c["before"] > int(0.5 * s.window) for c in early)


def test_nothing_to_summarise_is_no_compaction_until_the_request_overflows():
    s = long_scenario(turns=30)
    writer = Recorder()
    stats, _, comps = run(s, Naive(keep_last=10_000, trigger=0.3), writer)
    limit = trigger_limit(s.window, *default_reserve(s.window))
    assert comps and not writer.requests and stats.compactions == 0
    assert all(c["error"] == "nothing new to summarise" and c["fallback"] == "drop_oldest" for c in comps)
    assert all(c["before"] > limit for c in comps)
