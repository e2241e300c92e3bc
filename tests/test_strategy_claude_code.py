"""claude_code: compacts near the window's end with room for the summary, replaces everything by the
nine-section summary plus the newest read files and the open todo list, and stops after failures."""
from __future__ import annotations

import pytest

from bench.scenarios import loader
from bench.errors import ModelError
from bench.models.offline import OfflineModel
from bench.strategies import sectioned
from bench.harness.strategy import default_reserve, trigger_limit
from bench.strategies.claude_code import SECTIONS, ClaudeCode
from test_strategy_common import TOK, Recorder, assert_paired, long_scenario, run


def test_the_nine_documented_sections_are_asked_for():
    assert SECTIONS == ["Primary Request and Intent", "Key Technical Concepts", "Files and Code Sections",
                        "Errors and Fixes", "Problem Solving", "All User Messages", "Pending Tasks", "Current Work",
                        "Optional Next Step"]


def test_it_compacts_above_window_minus_reserve_and_buffer_scaled_to_the_window():
    s = long_scenario(turns=70, window=20000, lines=60)
    writer = Recorder(OfflineModel(players=[sectioned.offline_play]))
    stats, requests, comps = run(s, ClaudeCode(), writer)
    scale = 20000 / 200000
    trigger = 20000 - int(20000 * scale) - int(13000 * scale)
    assert comps and stats.compaction_failures == 0 and stats.overflows == 0
    assert all(c["before"] > trigger for c in comps)
    for messages, max_tokens, purpose in writer.requests:
        assert max_tokens == int(20000 * scale) and purpose == "summary"
        assert TOK.request_size([m.tokens for m in messages]) + max_tokens <= s.window


def test_after_a_compaction_the_context_is_the_summary_the_newest_files_and_nothing_verbatim():
    s = long_scenario(turns=70, window=20000, lines=60)
    _, requests, comps = run(s, ClaudeCode(files=3), Recorder(OfflineModel(players=[sectioned.offline_play])))
    reads = {f"c{i}": f"src/m{i}.py" for i in range(70) if i % 3 == 1}     # tool "read" (1 of 3)
    for k, comp in enumerate(comps, 1):
        first = next(r for r in requests if any(m.id == f"summary-{k}" for m in r))
        ids = [m.id for m in first]
        assert ids[0] == "system" and ids[1] == f"summary-{k}"
        files = [m for m in first[2:] if m.tag == "file"]
        assert 1 <= len(files) <= 3 and all(m.role == "user" for m in files)
        assert all(m.tag in ("summary", "file") for m in first[1:])          # nothing stayed verbatim
        # newest read first, each the read's recorded output under its path
        paths = [m.text.splitlines()[1].split(": ", 1)[1].split(",")[0] for m in files]
        assert paths == list(reversed(comp["files"]))
        assert set(paths) <= set(reads.values())
        for m in files:
            assert m.parts[0].tag == "frame" and m.parts[1].tag == "file"
        assert first[1].parts[1].text == comp["text"]
    for r in requests:
        assert_paired(r)


def test_file_budgets_cut_and_skip_and_the_todo_list_comes_back_open_items_only():
    events = [{"id": "u0", "role": "user", "text": "Refactor the parser. Keep the public API."}]
    big = "\n".join(f"line {j} of the parser source" for j in range(400))
    for i in range(12):
        events.append({"id": f"a{i}", "role": "assistant", "text": f"Reading part {i}.",
                       "calls": [{"id": f"c{i}", "tool": "read_file", "args": {"path": f"src/p{i}.py"}}]})
        events.append({"id": f"r{i}", "role": "tool", "call": f"c{i}", "text": big if i == 11 else f"def p{i}(): pass"})
    events.append({"id": "a-todo", "role": "assistant", "text": "Updating the plan.",
                   "calls": [{"id": "ct", "tool": "TodoWrite", "args": {"todos": [
                       {"content": "split the lexer", "status": "completed"},
                       {"content": "port the grammar", "status": "in_progress"},
                       {"content": "update the docs", "status": "pending"}]}}]})
    events.append({"id": "r-todo", "role": "tool", "call": "ct", "text": "ok"})
    for i in range(30):
        events.append({"id": f"w{i}", "role": "assistant", "text": f"Step {i} of the port: " + "detail " * 40})
    s = loader.from_events(events, id="files", window=6000, user="Dana")
    _, requests, comps = run(s, ClaudeCode(file_tokens=2000, files_total=5000), Recorder(OfflineModel(players=[sectioned.offline_play])))
    first = next(r for r in requests if any(m.id == "summary-1" for m in r))
    files = [m for m in first if m.tag == "file"]
    each = int(2000 * 6000 / 200000)
    assert "src/p11.py" in files[0].text and f"[cut to {each} tokens" in files[0].text
    assert all(TOK.count(m.parts[1].text) <= each + 20 for m in files)
    assert sum(m.tokens for m in files) <= int(5000 * 6000 / 200000)
    todo = [m for m in first if m.tag == "todo"]
    assert len(todo) == 1 and "port the grammar" in todo[0].text and "update the docs" in todo[0].text
    assert "split the lexer" not in todo[0].text
    assert comps[0]["todos"] == 1


def test_focus_reaches_the_writer_as_the_operators_instruction():
    s = long_scenario(turns=40)
    writer = Recorder(OfflineModel(players=[sectioned.offline_play]))
    run(s, ClaudeCode(focus="the values of item 3"), writer)
    assert writer.requests and all("the values of item 3" in r[0][-1].text for r in writer.requests)


def test_failures_are_recorded_fall_back_to_dropping_and_stop_after_three_in_a_row():
    async def fail(*a, **k):
        raise ModelError("HTTP 503 after 3 retries")

    writer = Recorder()
    writer.chat = fail
    s = long_scenario(turns=60)
    stats, requests, comps = run(s, ClaudeCode(), writer)
    limit = trigger_limit(s.window, *default_reserve(s.window))
    assert stats.compactions == 0 and stats.compaction_failures == len(comps) > 3
    assert all("HTTP 503" in c["error"] for c in comps[:3])
    assert all("auto-compaction off after 3 failures" in c["error"] and c["fallback"] == "drop_oldest"
               for c in comps[3:])
    assert max(TOK.request_size([m.tokens for m in r]) for r in requests) <= limit


def test_a_garbled_answer_is_a_failure_not_a_summary():
    s = long_scenario(turns=30)
    stats, _, comps = run(s, ClaudeCode(), Recorder(reply=lambda m, n: "I summarised it all for you."))
    assert comps and stats.compactions == 0 and all("garbled" in c["error"] for c in comps[:3])


@pytest.mark.parametrize("value", [{"reserve": 0}, {"files": -1}, {"focus": 3}, {"buffer": "x"}])
def test_bad_parameters_are_refused(value):
    with pytest.raises(ValueError):
        ClaudeCode(**value)
