"""anchored: at each compaction only the newly dropped span goes to the writer, with the sections as they
stand, and the persistent sections are merged, never written afresh or lost."""
from __future__ import annotations

import pytest

from bench.models.offline import OfflineModel
from bench.harness.strategy import default_reserve, trigger_limit
from bench.strategies import sectioned
from bench.strategies.anchored import SECTIONS, Anchored
from test_strategy_common import TOK, Recorder, assert_paired, long_scenario, run


def test_the_four_sections_factory_names():
    assert SECTIONS == ["Session Intent", "File Modifications", "Decisions Made", "Next Steps"]


def test_each_message_goes_to_the_writer_once_and_the_sections_so_far_go_with_it():
    s = long_scenario(turns=80)
    writer = Recorder(OfflineModel(players=[sectioned.offline_play]))
    stats, requests, comps = run(s, Anchored(), writer)
    assert len(comps) >= 3 and stats.compaction_failures == 0
    sent: list[str] = []
    previous: dict[str, str] = {}
    for (messages, max_tokens, _), comp in zip(writer.requests, comps):
        body = messages[1:-1]
        assert all(m.tag != "summary" for m in body)          # the old summary is not re-read as a message
        sent += [m.id for m in body]
        instruction = messages[-1].text
        assert sectioned.render(previous, SECTIONS) in instruction if previous else "<current-sections>" in instruction
        previous = sectioned.parse(comp["text"], SECTIONS)[0]
        assert comp["merged"] == [m.id for m in body]
    assert len(sent) == len(set(sent))                          # never summarised twice
    assert sent == [e.id for e in s.events][:len(sent)]          # oldest first, in order


def test_after_a_merge_the_summary_leads_and_the_newest_turns_stay_verbatim_within_retain():
    s = long_scenario(turns=80)
    _, requests, comps = run(s, Anchored(retain=0.3), Recorder(OfflineModel(players=[sectioned.offline_play])))
    for k, comp in enumerate(comps, 1):
        first = next(r for r in requests if any(m.id == f"summary-{k}" for m in r))
        assert first[1].id == f"summary-{k}" and first[1].parts[1].text == comp["text"]
        tail = first[2:2 + len(comp["verbatim"])]
        assert [m.id for m in tail] == comp["verbatim"] and all(m.from_event for m in tail)
    limit = trigger_limit(s.window, *default_reserve(s.window))
    for r in requests:
        assert_paired(r)
        assert TOK.request_size([m.tokens for m in r]) <= limit


def test_a_section_the_writer_drops_or_empties_keeps_its_earlier_points():
    answers = iter(["## Session Intent\n- User: process items in order\n## File Modifications\n- edit src/m1.py\n"
                    "## Decisions Made\n- keep going\n## Next Steps\n- item 5",
                    "## Session Intent\nNone.\n## Next Steps\n- keep going after item 5 in src/m1.py"])
    writer = Recorder(reply=lambda m, n: next(answers, "## Next Steps\n- later"))
    _, _, comps = run(long_scenario(turns=60), Anchored(), writer)
    second = sectioned.parse(comps[1]["text"], SECTIONS)[0]
    assert second["Session Intent"] == "- User: process items in order"
    assert second["File Modifications"] == "- edit src/m1.py" and second["Next Steps"] == "- keep going after item 5 in src/m1.py"
    assert any("'Session Intent' came back empty" in p for p in comps[1]["problems"])
    assert any("'Decisions Made' came back missing" in p for p in comps[1]["problems"])


def test_a_failed_merge_changes_nothing_until_the_request_overflows():
    writer = Recorder(reply=lambda m, n: "")
    stats, requests, comps = run(long_scenario(turns=40), Anchored(fill=0.5), writer)
    assert comps and stats.compactions == 0 and all(c["error"] == "the writer returned no text" for c in comps)
    assert any(c["fallback"] == "drop_oldest" for c in comps)


@pytest.mark.parametrize("value", [{"retain": 0}, {"budget": -1}, {"fill": "x"}])
def test_bad_parameters_are_refused(value):
    with pytest.raises(ValueError):
        Anchored(**value)
