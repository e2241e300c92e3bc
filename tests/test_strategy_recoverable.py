"""recoverable (issue 29 item 3): long tool outputs become pointers with no model call, and every summary
points at the full transcript."""
from __future__ import annotations

from bench.models.offline import OfflineModel
from bench.strategies.recoverable import Recoverable
from test_strategy_common import Recorder, assert_paired, long_scenario, run


def test_long_outputs_become_pointers_without_a_writer_call():
    s = long_scenario(turns=20, window=6000, lines=40)
    writer = Recorder(OfflineModel())
    stats, requests, comps = run(s, Recoverable(long=60), writer)
    assert not comps and not writer.requests and stats.overflows == 0
    last = requests[-1]
    pointers = [m for m in last if m.tag == "pointer"]
    assert pointers and all(m.role == "tool" and "tool-outputs/" in m.text and "lines" in m.text for m in pointers)
    original = {e.id: e.text for e in s.events}
    for p in pointers:
        assert original[p.id].splitlines()[0] in p.text           # the first lines stay
    assert_paired(last)


def test_every_summary_points_at_the_full_transcript():
    s = long_scenario(turns=80)
    _, requests, comps = run(s, Recoverable(), OfflineModel())
    assert len(comps) >= 2 and all(c["ok"] for c in comps)
    for k, comp in enumerate(comps, 1):
        first = next(r for r in requests if any(m.id == f"summary-{k}" for m in r))
        summary = first[1]
        assert summary.tag == "summary" and "transcripts/long.jsonl" in summary.text
        assert comp["transcript"] == "transcripts/long.jsonl"
        assert_paired(first)
