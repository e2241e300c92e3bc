"""codex: handoff summary; new history = the user's newest messages verbatim within a token budget,
then the summary as a user message behind its prefix (codex-rs/core/src/compact.rs)."""
from __future__ import annotations

from bench.scenarios import loader
from bench.errors import ModelError
from bench.harness.messages import render_all
from bench.harness.strategy import default_reserve, trigger_limit
from bench.strategies.codex import PREFIX, PROMPT, Codex
from test_strategy_common import TOK, Recorder, overlong, assert_paired, long_scenario, run


def session(turns: int = 40, window: int = 2500, bg_every: int = 7):
    """User messages of growing length every 6 turns, background pings every `bg_every`, tool output each turn."""
    events = [{"id": "u0", "role": "user", "text": "Process items in order. Never touch prod."}]
    for i in range(turns):
        events.append({"id": f"a{i}", "role": "assistant", "text": f"Item {i}.",
                       "calls": [{"id": f"c{i}", "tool": "run", "args": {"item": i}}]})
        events.append({"id": f"r{i}", "role": "tool", "call": f"c{i}",
                       "text": "\n".join(f"item {i} line {j}: value {i * 10 + j}" for j in range(6))})
        if i % 6 == 5:
            events.append({"id": f"u{i}", "role": "user", "text": f"Note {i}: " + "keep the order, " * (i // 3)})
        if i % bg_every == bg_every - 1:
            events.append({"id": f"b{i}", "role": "background", "source": "watch", "text": f"build {i} is green"})
    events.append({"id": "end", "role": "assistant", "text": "Done."})
    return loader.from_events(events, window=window, id="codex", user="Dana")


def user_ids(s, upto: str) -> list[str]:
    ids = [e.id for e in s.events]
    return [e.id for e in s.events if e.role == "user" and ids.index(e.id) < ids.index(upto)]


def test_the_new_history_is_the_users_messages_verbatim_then_the_prefixed_summary():
    s = session()
    record = {m.id: m for m in render_all(TOK, s)}
    stats, requests, comps = run(s, Codex(), Recorder())
    assert len(comps) >= 2 and stats.compaction_failures == 0 and stats.overflows == 0
    for k, c in enumerate(comps, 1):
        first = next(r for r in requests if any(m.id == f"summary-{k}" for m in r))
        *users, summary = first[1:first.index(next(m for m in first if m.id == f"summary-{k}")) + 1]
        assert [m.id for m in users] == c["kept"] == user_ids(s, c["event"])       # all of them: the budget allows
        assert all(m.hash == record[m.id].hash for m in users)                      # verbatim, the harness's own copy
        assert summary.role == "user" and summary.tag == "summary"
        assert summary.text == f"{PREFIX}\n{c['text']}" and c["text"].startswith("Summary of ")
        assert [p.tag for p in summary.parts] == ["frame", "summary"]
        assert not any(m.role in ("tool", "assistant") or m.tag == "background" for m in users)
    for r in requests:
        assert_paired(r)


def test_the_writer_sees_the_whole_context_with_the_handoff_prompt_and_the_previous_summary():
    s = session(turns=90, window=6000)
    writer = Recorder()
    _, _, comps = run(s, Codex(), writer)
    assert len(writer.requests) == len(comps) >= 2
    for i, ((messages, max_tokens, purpose), c) in enumerate(zip(writer.requests, comps)):
        assert messages[0].role == "system" and purpose == "summary"
        assert messages[-1].text == PROMPT.replace("{budget}", str(max_tokens))
        # the answer gets the budget, or what the window leaves after the request when that is less
        assert max_tokens == c["budget"] == min(int(0.1 * s.window), s.window - TOK.request_size([m.tokens for m in messages]))
        assert not c["trimmed"]
        summaries = [m for m in messages if m.tag == "summary"]
        assert len(summaries) == (1 if i else 0)          # the previous summary goes to the writer, never twice
        assert any(m.tag == "background" for m in messages[1:-1])   # background is summarised, not kept


def test_newest_user_messages_first_within_the_budget_the_next_cut_in_the_middle():
    s = session(turns=60, window=6000)
    budget = 40
    _, requests, comps = run(s, Codex(user_budget=budget), Recorder())
    record = {m.id: m for m in render_all(TOK, s)}
    assert comps
    for c in comps:
        ids = user_ids(s, c["event"])
        kept = c["kept"]
        assert kept == ids[len(ids) - len(kept):]              # a run of the newest, in their order
        whole = kept[1:] if c["cut"] else kept
        assert sum(record[i].tokens for i in whole) <= budget
        if c["cut"]:
            assert c["cut"] == kept[0] and sum(record[i].tokens for i in kept) > budget
    cut = [c for c in comps if c["cut"]]
    assert cut, "the budget must force a cut"
    c = cut[-1]
    first = next(r for r in requests if any(m.id == f"summary-{comps.index(c) + 1}" for m in r))
    msg = next(m for m in first if m.id == c["cut"])
    full = record[c["cut"]].text
    assert "tokens truncated…" in msg.text and msg.text.count("tokens truncated") == 1
    head, tail = msg.parts[0].text, msg.parts[-1].text
    assert full.startswith(head) and full.endswith(tail) and [p.tag for p in msg.parts] == ["user", "frame", "user"]
    kept_tokens = sum(record[i].tokens for i in c["kept"][1:]) + msg.tokens
    assert kept_tokens <= budget + 2                            # within the budget, give or take token joins


def test_a_zero_user_budget_keeps_only_the_summary():
    s = session()
    _, requests, comps = run(s, Codex(user_budget=0), Recorder())
    assert comps and all(c["kept"] == [] for c in comps)
    first = next(r for r in requests if any(m.id == "summary-1" for m in r))
    assert [m.tag for m in first[1:]][0] == "summary"


def test_a_writer_request_too_big_for_the_window_loses_its_oldest_turns():
    s = session(turns=40, window=2500)
    writer = Recorder()
    _, _, comps = run(s, Codex(budget=0.5), writer)
    assert comps and any(c["trimmed"] for c in comps)
    for messages, max_tokens, _ in writer.requests:     # room for at least half the budget
        assert TOK.request_size([m.tokens for m in messages]) + max_tokens <= s.window
        assert max_tokens >= int(0.5 * s.window) // 2
    for c in comps:
        if c["trimmed"]:
            assert c["summarised"] and not set(c["trimmed"]) & set(c["summarised"])


def test_writer_failures_change_nothing_and_fall_back_only_to_fit():
    async def fail(*a, **k):
        raise ModelError("HTTP 500 after 3 retries")

    s = long_scenario(turns=30)
    limit = trigger_limit(s.window, *default_reserve(s.window))
    for writer, error in ((Recorder(reply=lambda m, n: "  "), "no summary"), (Recorder(), "HTTP 500")):
        if error == "HTTP 500":
            writer.chat = fail
        stats, requests, comps = run(s, Codex(), writer)
        assert comps and stats.compactions == 0 and stats.compaction_failures == len(comps)
        assert all(error in c["error"] and not c["ok"] for c in comps)
        assert all(c["fallback"] == "drop_oldest" for c in comps if c["before"] > limit)
        assert max(TOK.request_size([m.tokens for m in r]) for r in requests) <= limit
        for r in requests:
            assert_paired(r)


def test_an_overlong_summary_is_cut_to_its_budget_and_recorded():
    s = session()
    _, _, comps = run(s, Codex(), Recorder(reply=overlong))
    assert comps and all(TOK.count(c["text"]) <= c["budget"] and "exceeds its budget" in c["problems"][0]
                         for c in comps)
