"""context_editing: clear_tool_uses semantics — trigger, keep, clear_at_least, exclusions, inputs."""
from __future__ import annotations

import pytest

from bench.scenarios import loader
from bench.harness.strategy import default_reserve, trigger_limit
from bench.strategies.context_editing import PLACEHOLDER, ContextEditing
from test_strategy_common import TOK, assert_paired, long_scenario, run


def size(request):
    return TOK.request_size([m.tokens for m in request])


def test_clears_old_results_above_the_trigger_keeping_the_newest_tool_uses():
    s = long_scenario(turns=40)
    trigger = int(0.5 * s.window)
    _, requests, comps = run(s, ContextEditing(keep=3, clear_at_least=0))
    assert len(comps) >= 2
    for c in comps:
        assert c["before"] > trigger and c["freed"] > 0
        assert c["after"] == c["before"] - c["freed"] if c["fallback"] is None else c["after"] < c["before"] - c["freed"]
    for r in requests:
        results = [m for m in r if m.role == "tool"]
        cleared = [m for m in results if m.tag == "placeholder"]
        assert all(m.text == PLACEHOLDER and m.role == "tool" for m in cleared)
        if cleared:
            assert all(m.tag == "tool" for m in results[-3:])          # the 3 newest uses stay
        assert_paired(r)
    _, _, none = run(long_scenario(turns=5), ContextEditing(clear_at_least=0))   # stays under the trigger
    assert none == []


def test_clears_only_when_it_frees_at_least_clear_at_least():
    s = long_scenario(turns=40)
    floor = int(0.2 * s.window)
    limit = trigger_limit(s.window, *default_reserve(s.window))
    _, _, comps = run(s, ContextEditing(clear_at_least=0.2))
    cleared = [c for c in comps if "cleared" in c]
    assert cleared and all(c["freed"] >= floor and c["before"] - c["after"] >= floor
                           for c in cleared if not c.get("over_limit"))
    assert all(c["before"] > limit for c in cleared if c.get("over_limit"))
    # A floor no clear can reach: clears happen only when the request is over the limit
    # (clearing beats dropping turns), never merely above the trigger.
    _, requests, forced = run(s, ContextEditing(clear_at_least=10 * s.window))
    assert forced and all(c["over_limit"] and c["before"] > limit for c in forced if "cleared" in c)
    below = [r for r in requests if size(r) <= int(0.5 * s.window)]
    assert below and not any(m.tag == "placeholder" for r in below[:1] for m in r)


def test_excluded_tools_are_never_cleared():
    s = long_scenario(turns=40)
    _, requests, comps = run(s, ContextEditing(exclude_tools=["todo"], clear_at_least=0))
    calls = {c.id: c.tool for e in s.events for c in e.calls}
    tool_of = {e.id: calls[e.call] for e in s.events if e.role == "tool"}
    cleared = [i for comp in comps for i in comp.get("cleared", [])]
    assert cleared and {tool_of[i] for i in cleared} == {"run", "read"}
    for r in requests:
        assert all(m.tag == "tool" for m in r if m.role == "tool" and m.tool == "todo")


def test_clear_tool_inputs_blanks_the_arguments_of_cleared_calls_only():
    s = long_scenario(turns=40)
    _, requests, comps = run(s, ContextEditing(clear_tool_inputs=True, clear_at_least=0))
    last = requests[-1]
    cleared = {m.call_id for m in last if m.tag == "placeholder"}
    calls = {c.id: c for m in last for c in m.calls}
    assert cleared and all(calls[c].args == {} for c in cleared)
    assert all(calls[c].args for c in calls if c not in cleared)
    assert sorted(comps[0]["inputs_cleared"]) == sorted(f"c{r[1:]}" for r in comps[0]["cleared"])
    _, plain, _ = run(s, ContextEditing(clear_at_least=0))
    assert all(c.args for m in plain[-1] for c in m.calls)


def test_when_clearing_cannot_fit_the_oldest_turns_are_dropped_and_recorded():
    s = long_scenario(turns=40)
    limit = trigger_limit(s.window, *default_reserve(s.window))
    stats, requests, comps = run(s, ContextEditing(exclude_tools=list(("run", "read", "todo"))))
    assert stats.overflows == 0 and max(size(r) for r in requests) <= limit
    drops = [c for c in comps if c["fallback"] == "drop_oldest"]
    assert drops and all(c["dropped"] and c["after"] <= limit for c in drops)
    for r in requests:
        assert_paired(r)


def test_no_model_call():
    s = long_scenario(turns=40)
    stats, _, comps = run(s, ContextEditing())
    assert comps and stats.model_calls == 0 and all(c["calls"] == [] for c in comps)


def big_user_then_tool_results(turns: int = 11, window: int = 1000):
    """The reviewer's repro: one long user message, then tool results that push past the limit."""
    events = [{"id": "u1", "role": "user",
               "text": "Mission: migrate billing; never touch prod-db directly. " + "Details follow. " * 30}]
    for i in range(1, turns + 1):
        events.append({"id": f"a{i}", "role": "assistant", "text": f"step {i}",
                       "calls": [{"id": f"c{i}", "tool": "run", "args": {"cmd": f"ls {i}"}}]})
        events.append({"id": f"r{i}", "role": "tool", "call": f"c{i}",
                       "text": " ".join(f"line{j}" for j in range(20))})
    events.append({"id": "a99", "role": "assistant", "text": "done"})
    return loader.from_events(events, id="ce-drop", window=window, user="Dana")


@pytest.mark.parametrize("kw", [{"trigger": 0.99}, {"clear_at_least": 0.99}, {"trigger": 5000}])
def test_over_the_limit_old_results_are_cleared_before_any_user_turn_is_dropped(kw):
    s = big_user_then_tool_results()
    limit = trigger_limit(s.window, *default_reserve(s.window))
    stats, requests, comps = run(s, ContextEditing(**kw))
    assert comps and stats.overflows == 0
    assert all(c["fallback"] is None and c.get("over_limit") for c in comps), comps
    assert all(r[1].id == "u1" for r in requests), "the user's first message was dropped"
    for r in requests:
        assert size(r) <= limit
        assert all(m.tag == "tool" for m in [m for m in r if m.role == "tool"][-3:])   # keep still holds
        assert_paired(r)
