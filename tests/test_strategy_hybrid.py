"""hybrid: masking exactly as `masking` before every request; an LLM summary of the older part, from the
unmasked record, only when the masked request still exceeds the trigger."""
from __future__ import annotations

from bench.errors import ModelError
from bench.harness.messages import render_all
from bench.models.offline import OfflineModel
from bench.harness.strategy import default_reserve, trigger_limit
from bench.strategies.hybrid import PROMPT, Hybrid
from bench.strategies.masking import Masking
from test_strategy_common import TOK, Recorder, assert_paired, long_scenario, run


def test_while_masking_is_enough_it_is_masking_and_calls_no_writer():
    s = long_scenario(turns=30, window=100_000)
    writer = Recorder()
    _, hybrid, comps = run(s, Hybrid(keep=4), writer)
    _, masking, mcomps = run(s, Masking(keep=4))
    assert not writer.requests and comps
    assert [[m.hash for m in r] for r in hybrid] == [[m.hash for m in r] for r in masking]
    assert [c["masked"] for c in comps] == [c["masked"] for c in mcomps]


def test_the_older_part_is_summarised_only_when_masking_leaves_the_request_over_the_trigger():
    s = long_scenario(turns=80, lines=30)
    limit = trigger_limit(s.window, *default_reserve(s.window))
    writer = Recorder()
    stats, requests, comps = run(s, Hybrid(keep=4, keep_turns=3), writer)
    summaries = [c for c in comps if c["text"]]
    assert summaries and len(writer.requests) == len(summaries) < len(comps)
    assert stats.overflows == 0 and not any(c["fallback"] for c in comps)
    for c in summaries:
        # the masked request was over the trigger (the record's `before` is before masking, so at least that)
        assert c["before"] > limit or c["masked"]
        assert c["after"] < limit and len(c["verbatim"]) <= 6
    for c in comps:
        if not c["text"]:
            assert c["masked"] and "summarised" not in c
    for r in requests:
        assert_paired(r)
        assert TOK.request_size([m.tokens for m in r]) <= limit


def test_the_summary_keeps_the_opening_message_and_sees_the_unmasked_outputs():
    s = long_scenario(turns=80, lines=30)
    record = {m.id: m for m in render_all(TOK, s)}
    writer = Recorder()
    _, requests, comps = run(s, Hybrid(keep=4, keep_turns=3), writer)
    summaries = [c for c in comps if c["text"]]
    assert len(summaries) >= 2
    for i, (messages, max_tokens, purpose) in enumerate(writer.requests):
        body = messages[1:-1]
        assert messages[-1].text == PROMPT.replace("{budget}", str(max_tokens)) and purpose == "summary"
        assert body[0].id == "u0" and body[0].hash == record["u0"].hash
        assert (body[1].tag == "summary") == (i > 0)            # the previous summary, then the turns since
        outputs = [m for m in body if m.role == "tool"]
        sent_masked = set(summaries[i]["sent_masked"])
        assert outputs and all((m.tag == "placeholder") == (m.id in sent_masked) for m in outputs)
        assert any(m.id not in sent_masked and m.hash == record[m.id].hash for m in outputs)
        assert TOK.request_size([m.tokens for m in messages]) + max_tokens <= s.window
    for k, c in enumerate(summaries, 1):
        first = next(r for r in requests if any(m.id == f"summary-{k}" for m in r))
        assert [m.id for m in first[1:3]] == ["u0", f"summary-{k}"]
        assert [m.id for m in first[3:3 + len(c["verbatim"])]] == c["verbatim"]


def test_outputs_that_do_not_fit_the_writer_unmasked_are_sent_masked_oldest_first():
    s = long_scenario(turns=80, lines=30)
    writer = Recorder()
    _, _, comps = run(s, Hybrid(keep=4, keep_turns=3, budget=0.3), writer)
    masked = [c for c in comps if c.get("sent_masked")]
    assert masked
    for c in masked:
        order = [i for i in c["summarised"] if i.startswith("r")]
        assert c["sent_masked"] == order[:len(c["sent_masked"])]


def test_a_failing_writer_keeps_the_masked_context_and_drops_only_what_does_not_fit():
    async def fail(*a, **k):
        raise ModelError("HTTP 500 after 3 retries")

    writer = Recorder()
    writer.chat = fail
    s = long_scenario(turns=80, lines=30)
    limit = trigger_limit(s.window, *default_reserve(s.window))
    stats, requests, comps = run(s, Hybrid(keep=4, keep_turns=3), writer)
    failed = [c for c in comps if not c["ok"]]
    assert failed and stats.compaction_failures == len(failed)
    assert all("HTTP 500" in c["error"] for c in failed)
    assert all(c["fallback"] == "drop_oldest" for c in failed if c["before"] > limit)
    assert stats.overflows == 0
    for r in requests:
        assert_paired(r)
        assert r[1].id == "u0"                                    # the opening message is never dropped


def test_with_the_offline_writer_every_summary_fits_its_budget():
    s = long_scenario(turns=80, lines=30)
    stats, _, comps = run(s, Hybrid(keep=4, keep_turns=3), OfflineModel())
    summaries = [c for c in comps if c["text"]]
    assert summaries and stats.compaction_failures == 0
    assert all(0 < TOK.count(c["text"]) <= c["budget"] and not c["problems"] for c in summaries)
