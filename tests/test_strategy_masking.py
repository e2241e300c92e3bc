"""masking: the last M tool outputs verbatim, older ones as 'Old environment output: (N lines omitted)'."""
from __future__ import annotations

import re

from bench.harness.strategy import default_reserve, trigger_limit
from bench.strategies.masking import Masking
from test_strategy_common import TOK, assert_paired, long_scenario, run

MASK = re.compile(r"^Old environment output: \((\d+) lines omitted\)$")


def test_masked_outputs_state_their_original_line_count():
    s = long_scenario(turns=30, window=100_000)
    lines = {e.id: e.text.count("\n") + 1 for e in s.events if e.role == "tool"}
    assert len(set(lines.values())) > 5          # the scenario varies line counts
    _, requests, comps = run(s, Masking(keep=4))
    masked = [m for m in requests[-1] if m.tag == "placeholder"]
    assert len(masked) == 30 - 4
    for m in masked:
        assert int(MASK.match(m.text).group(1)) == lines[m.id] and m.role == "tool"
    assert {k: v for c in comps for k, v in c["lines"].items()} == {m.id: lines[m.id] for m in masked}


def test_keeps_exactly_the_newest_outputs_on_every_request_and_records_only_new_masks():
    s = long_scenario(turns=30, window=100_000)
    stats, requests, comps = run(s, Masking(keep=4))
    for r in requests:
        outputs = [m for m in r if m.role == "tool"]
        assert all(m.tag == "tool" for m in outputs[-4:]) and all(m.tag == "placeholder" for m in outputs[:-4])
        assert_paired(r)
    # one new output per turn: a record for each request from the 5th output on, one id each
    assert len(comps) == 30 - 4 and all(len(c["masked"]) == 1 for c in comps)
    assert stats.model_calls == 0 and len({i for c in comps for i in c["masked"]}) == len(comps)


def test_polling_moves_the_boundary_in_steps():
    s = long_scenario(turns=30, window=100_000)
    _, requests, comps = run(s, Masking(keep=4, polling=5))
    assert all(len(c["masked"]) == 5 for c in comps[1:])
    for r in requests:
        n = sum(m.role == "tool" for m in r)
        assert sum(m.tag == "placeholder" for m in r) == max(0, (n // 5) * 5 - 4)


def test_masking_that_is_not_enough_drops_the_oldest_turns():
    s = long_scenario(turns=40)
    limit = trigger_limit(s.window, *default_reserve(s.window))
    stats, requests, comps = run(s, Masking(keep=20))
    drops = [c for c in comps if c["fallback"] == "drop_oldest"]
    assert drops and all(c["dropped"] for c in drops)
    assert stats.overflows == 0 and max(TOK.request_size([m.tokens for m in r]) for r in requests) <= limit
