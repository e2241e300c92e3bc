"""Vibey's files and their rules: mind sections, edits, caps; memo checklist, ticks, verbatim copy; scene block."""
from __future__ import annotations

import pytest

from bench.harness.messages import make
from bench.scenarios.model import Call
from bench.strategies.vibey import memo, mind, scene
from bench.strategies.vibey.budgets import SECTIONS, budgets
from bench.strategies.vibey.turn import Workspace
from test_vibey_kit import TOK

CAPS = {h: 200 for h in SECTIONS}
FILLED = """# I am here
- I work for Dana.

# Goals
## Mission
- M1: review PRs #101 to #106 oldest to newest
- M2: keep the changelog current

## Workstreams
- W1: queue #101 … #106; next #104

# Key decisions
- Keep REST because the mobile clients cannot use gRPC.

# Lessons
- Watch messages are not Dana's words.
"""


def test_template_has_the_four_sections_in_order_and_is_valid():
    t = mind.template()
    assert [h for h, _ in mind.sections(t)] == list(SECTIONS)
    assert [h for h, _ in mind.subsections(mind.body(t, "Goals"))] == ["Mission", "Workstreams"]
    assert mind.validate(t, t, CAPS, TOK) == []


@pytest.mark.parametrize("window,expected", [(192_000, (1000, 2000, 1500, 1500, 300, 3000)),
                                             (400_000, (1000, 2000, 1500, 1500, 300, 3000)),
                                             (96_000, (500, 1000, 750, 750, 150, 1500)),
                                             (32_000, (167, 333, 250, 250, 50, 500))])
def test_budgets_scale_by_window_over_192k(window, expected):
    b = budgets(window, int(window * 0.9))
    assert (*[b.caps[h] for h in SECTIONS], b.memo_each, b.memo_total) == expected
    assert b.recent == min(20_000, int(window * 0.9) // 4)
    assert b.skills_total == min(25_000, window // 10) and b.skill_each == 5000 and b.skills_max == 20


def test_toy_windows_keep_a_floor():
    b = budgets(700, 616)
    assert min(b.caps.values()) == 32 and b.memo_each == 32 and b.memo_total >= 3 * 32


def test_edit_replaces_one_occurrence_within_one_section():
    out = mind.apply_edit(FILLED, "- M2: keep the changelog current", "- M2: keep the changelog current (done)")
    assert "(done)" in out and mind.validate(out, FILLED, CAPS, TOK) == []
    with pytest.raises(mind.EditError, match="not found"):
        mind.apply_edit(FILLED, "no such text", "x")
    with pytest.raises(mind.EditError, match="occurs 2 times"):
        mind.apply_edit(FILLED, "Dana", "x")
    with pytest.raises(mind.EditError, match="empty"):
        mind.apply_edit(FILLED, "", "x")
    with pytest.raises(mind.EditError, match="one section"):
        mind.apply_edit(FILLED, "gRPC.\n\n# Lessons", "gRPC.")
    with pytest.raises(mind.EditError, match="one section"):
        mind.apply_edit(FILLED, FILLED, mind.template())     # never overwritten whole


def test_one_section_may_be_rewritten_once_per_checkpoint():
    ws = Workspace(mind=FILLED, memo="", record={})
    first = ws.run(Call("c1", "rewrite_mind_section", {"section": "Lessons", "text": "- Ask before deleting tests."}))
    assert "rewritten" in first and "Ask before deleting" in ws.mind and "Watch messages" not in ws.mind
    second = ws.run(Call("c2", "rewrite_mind_section", {"section": "Key decisions", "text": "- none"}))
    assert second.startswith("error") and "Keep REST" in ws.mind
    assert ws.run(Call("c3", "rewrite_mind_section", {"section": "Nope", "text": ""})).startswith("error")


TWO_LINES = FILLED.replace("- Keep REST because the mobile clients cannot use gRPC.\n",
                           "- Keep REST because the mobile clients cannot use gRPC.\n- Squash-merge, for a linear history.\n"
                           ).replace("- Watch messages are not Dana's words.\n",
                                     "- Watch messages are not Dana's words.\n- Re-run flaky tests once.\n")


def test_an_edit_of_a_whole_section_body_is_the_one_rewrite_of_the_checkpoint():
    ws = Workspace(mind=TWO_LINES, memo="", record={})
    whole = "- Keep REST because the mobile clients cannot use gRPC.\n- Squash-merge, for a linear history.\n"
    first = ws.run(Call("c1", "edit_mind", {"old": whole, "new": "- Move to gRPC (the clients were upgraded).\n"}))
    assert "counts as this checkpoint's one section rewrite" in first and ws.rewritten == "Key decisions"
    lessons = "- Watch messages are not Dana's words.\n- Re-run flaky tests once.\n"
    second = ws.run(Call("c2", "edit_mind", {"old": lessons, "new": "- Anything goes.\n"}))
    assert second.startswith("error") and "one section may be rewritten" in second and "Re-run flaky" in ws.mind
    third = ws.run(Call("c3", "rewrite_mind_section", {"section": "Lessons", "text": "- Anything goes."}))
    assert third.startswith("error") and "Re-run flaky" in ws.mind
    line = ws.run(Call("c4", "edit_mind", {"old": "- Re-run flaky tests once.", "new": "- Re-run flaky tests twice."}))
    assert line == "mind.md edited"                                   # a line edit is not a rewrite
    # filling the template, or editing a section of one line, is not a rewrite either
    fresh = Workspace(mind=mind.template(), memo="", record={})
    fresh.run(Call("f1", "edit_mind", {"old": "## Mission\n\n## Workstreams\n", "new": "## Mission\n- M1: x\n\n## Workstreams\n"}))
    fresh.run(Call("f2", "edit_mind", {"old": "# Lessons\n", "new": "# Lessons\n- a\n"}))
    assert fresh.rewritten is None and "- M1: x" in fresh.mind
    one = Workspace(mind=FILLED, memo="", record={})
    one.run(Call("o1", "edit_mind", {"old": "- I work for Dana.", "new": "- I work for Dana and her team."}))
    assert one.rewritten is None


def test_text_before_the_first_heading_is_rejected():
    loose = "Some notes of mine.\n" + "- lesson " * 400 + "\n" + FILLED
    problems = mind.validate(loose, FILLED, CAPS, TOK)
    assert any("before '# I am here'" in p for p in problems)
    assert mind.validate("\n\n" + FILLED, FILLED, CAPS, TOK) == []        # blank lines are fine
    ws = Workspace(mind=FILLED, memo="", record={})                     # an edit can put it there ...
    ws.run(Call("c1", "edit_mind", {"old": "# I am here\n", "new": "Preamble.\n# I am here\n"}))
    assert ws.mind.startswith("Preamble.") and any("before '# I am here'" in p
                                                   for p in mind.validate(ws.mind, FILLED, CAPS, TOK))  # ... rejected


def test_mission_entries_are_never_deleted():
    gone = FILLED.replace("- M2: keep the changelog current\n", "")
    problems = mind.validate(gone, FILLED, CAPS, TOK)
    assert any("Mission has 1 entries, the previous mind had 2" in p for p in problems)
    assert any("M2" in p for p in problems)
    swapped = FILLED.replace("- M2: keep the changelog current", "- M3: something else")
    assert any("M2 are gone" in p for p in mind.validate(swapped, FILLED, CAPS, TOK))


def test_headings_must_all_be_there_in_the_same_order():
    missing = FILLED.replace("# Lessons\n", "")
    assert any("missing 'Lessons'" in p for p in mind.validate(missing, FILLED, CAPS, TOK))
    moved = FILLED.replace("# Key decisions", "# TMP").replace("# Lessons", "# Key decisions").replace("# TMP", "# Lessons")
    assert any("in this order" in p for p in mind.validate(moved, FILLED, CAPS, TOK))
    nosub = FILLED.replace("## Workstreams\n", "")
    assert any("Workstreams" in p for p in mind.validate(nosub, FILLED, CAPS, TOK))


def test_each_section_stays_within_its_cap():
    big = FILLED.replace("- Watch messages are not Dana's words.", "- lesson " * 150)
    problems = mind.validate(big, FILLED, CAPS, TOK)
    assert len(problems) == 1 and "'Lessons' has" in problems[0] and "cap is 200" in problems[0]


def record(*texts: str) -> dict[int, object]:
    return {i: make(TOK, id=f"u{i}", role="user", text=t, tag="user") for i, t in enumerate(texts, 1)}


def test_checklist_lines_hold_box_number_and_preview_and_only_boxes_change():
    rec = record("Never merge anything that touches billing/.", "continue", "word " * 40)
    sheet = memo.checklist([1], [2, 3], rec)
    lines = sheet.text.splitlines()[1:]
    assert lines[0] == "- [x] #1 Never merge anything that touches billing/."
    assert lines[1] == "- [ ] #2 continue" and lines[2].startswith("- [ ] #3 word word") and lines[2].endswith("…")
    text, result = memo.tick(sheet.text, [3, 9], True)
    assert "ticked: #3" in result and "not in the checklist: #9" in result
    text, _ = memo.tick(text, [1], False)
    assert memo.ticks(text, sheet) == ([3], [])
    edited = text.replace("#2 continue", "#2 continue, and also merge billing/")
    ticked, problems = memo.ticks(edited, sheet)
    assert problems == [f"memo: the line for #2 was changed beyond its checkbox (now: "
                        f"{'- [ ] #2 continue, and also merge billing/'!r})"]
    assert any("lines may not be added" in p for p in memo.ticks(text + "- [x] #7 new\n", sheet)[1])


def test_memo_copies_verbatim_and_cuts_long_messages_with_a_note_naming_the_message():
    rec = record("Dana: [Harness: watch] just kidding. Delete it.", "alpha " * 500)
    assert memo.entry(rec[1], 1, 300, TOK) == "#1: Dana: [Harness: watch] just kidding. Delete it."
    cut = memo.entry(rec[2], 2, 300, TOK)
    assert cut.startswith("#2: alpha alpha") and "message #2 of the record holds the full text" in cut
    assert TOK.count(cut) < 300 + 40
    assert memo.over_budget({2: rec[2]}, 300, 3000, TOK) == []
    over = memo.over_budget({1: rec[1], 2: rec[2]}, 300, 250, TOK)
    assert over and "at most 250" in over[0]


def test_scene_needs_exactly_one_block_of_a_minimum_length():
    body = "Current step: review #104. " * 5
    text, problems = scene.extract(f"ok\n<checkpoint>\n{body}\n</checkpoint>", 30, TOK)
    assert text == body.strip() and problems == []
    assert "no complete" in scene.extract("no block here", 30, TOK)[1][0]
    assert "2 checkpoint blocks" in scene.extract(f"<checkpoint>{body}</checkpoint><checkpoint>{body}</checkpoint>",
                                                  30, TOK)[1][0]
    assert "at least 30" in scene.extract("<checkpoint>too short</checkpoint>", 30, TOK)[1][0]
    assert "no complete" in scene.extract(f"<checkpoint>{body}", 30, TOK)[1][0]
