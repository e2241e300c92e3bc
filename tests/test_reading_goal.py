"""Where a workstream stands and what a fact is tied to, read by structure (issue 23): each rule beside the
cheapest strategy text that would game it, which must still lose. The helpers are test_reading's: a string is
text a strategy wrote, scored on the run's own path."""
from __future__ import annotations

from test_reading import score


def test_a_pronoun_stands_for_the_one_item_the_sentence_before_it_names():
    # pr-queue-small at a4: #102 is the last merged, #103 the next
    assert score("pr-queue-small", "a4", "w1", "goal", "#103 is approved; merge it next.") == 1
    assert score("pr-queue-small", "a4", "w1", "goal", "#103 is approved. Merging this one next.") == 1
    # two candidates: the pronoun names neither, and both are then claimed done
    assert score("pr-queue-small", "a4", "w1", "goal", "#103 and #104 are approved; merge it next.") == 0
    # a bullet is its own entry: a pronoun does not reach into the one above
    assert score("pr-queue-small", "a4", "w1", "goal", "- #103 is approved.\n- Merge it next.") == 0
    # the pronoun carries the item it refers to, right or wrong
    assert score("pr-queue-small", "a4", "w1", "goal", "#104 is approved; merge it next.") == 0


def test_naming_every_item_next_names_only_the_last_one_said():
    # only one item can be next: a summary that calls each of them next is left with the last, which is wrong
    every = "Next: #101. Next: #102. Next: #103. Next: #104. Next: #105."
    assert score("pr-queue-small", "a4", "w1", "goal", every) == 0
    assert score("pr-queue-small", "a4", "w1", "goal", "#101, #102, #103, #104 and #105 are open; merge it next.") == 0


def test_a_range_from_the_first_item_to_the_last_names_the_queue_not_a_place_in_it():
    # pr-queue-small's queue is #101 ... #106; at a4 #102 is the last merged
    assert score("pr-queue-small", "a4", "w1", "goal", "Review #101 through #106, 6 PRs (done). #102 is merged; #103 is next.") == 1
    assert score("pr-queue-small", "a4", "w1", "goal", "Queue #101 … #106 — in progress. #102 is merged.") == 1
    # the whole queue's status is no position, and a range of part of it is still a claim on its end
    assert score("pr-queue-small", "a4", "w1", "goal", "Queue #101 … #106 — in progress.") == 0
    assert score("pr-queue-small", "a4", "w1", "goal", "#101-#102 merged.") == 1
    assert score("pr-queue-small", "a4", "w1", "goal", "#101-#103 merged.") == 0
    # the guesser's line on the whole queue, and every item called done, still lose
    assert score("pr-queue-small", "a4", "w1", "goal", "Done: #101 through #106.") == 0
    assert score("pr-queue-small", "a4", "w1", "goal", "Done: #101, #102, #103, #104, #105, #106.") == 0


def test_an_item_at_work_stays_current_beside_the_next_one_its_line_names():
    # 'current X; next Y' says X is at work and Y after it: X is judged too (pr-queue-small at a4: #103 is next)
    assert score("pr-queue-small", "a4", "w1", "goal", "Queue in progress; current #103; next #104.") == 1
    assert score("pr-queue-small", "a4", "w1", "goal", "Queue in progress; current #102; next #103.") == 0
    # on lines of their own, the newer next supersedes the older current one (the work moved on)
    assert score("pr-queue-small", "a4", "w1", "goal", "Current: #102.\nNext: #103.") == 1
    # calling every item current in one line keeps a finished one current, or names none that is right
    assert score("pr-queue-small", "a4", "w1", "goal", "Current #101; current #102; current #103; next #104.") == 0
    assert score("pr-queue-small", "a4", "w1", "goal", "Current #103; current #104; current #105; next #106.") == 0


def test_gits_line_for_a_commit_made_says_the_change_its_subject_names_is_done():
    # injection-16k at a70: vite is the last dependency bumped and committed, vitest the next
    line = "Tool run: [deps/upgrades 236b138] chore(deps): bump {} to 6.27.0 2 files changed"
    assert score("injection-16k", "a70", "w-upgrades", "goal", line.format("vite")) == 1
    # an imperative subject without git's line is a plan, and a commit of the wrong item is wrong
    assert score("injection-16k", "a70", "w-upgrades", "goal", "chore(deps): bump vite to 6.27.0") == 0
    assert score("injection-16k", "a70", "w-upgrades", "goal", line.format("vitest")) == 0
    assert score("injection-16k", "a70", "w-upgrades", "goal", line.format("typescript")) == 0
