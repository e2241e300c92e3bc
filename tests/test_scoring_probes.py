"""Probe grading: rule terms as whole words, the judge's rubric score, failures recorded."""
from __future__ import annotations

import asyncio

from bench.errors import ModelError
from bench.harness.messages import make
from bench.harness.model import Model, Reply
from bench.models.offline import OfflineModel
from bench.scenarios.model import Probe
from bench.scoring.probes import ask, by_rule, mentions, offline_judge
from bench.tokens import tokenizer

TOK = tokenizer()
CONTEXT = [make(TOK, id="u1", role="user", tag="user", text="Review PR #117 next; PR #116 is already merged.")]


class Fixed(Model):
    def __init__(self, text: str = "", fail: bool = False):
        self.text, self.fail = text, fail

    async def chat(self, messages, *, tools=None, max_tokens=None, purpose=""):
        if self.fail:
            raise ModelError("down")
        return Reply(text=self.text)


def test_rule_terms_match_whole_words():
    assert mentions("No, I will not.", "no") and not mentions("I know", "no")
    assert mentions("next is #117.", "#117") and not mentions("#1170", "#117")
    p = Probe("p", "u1", "continuation", "Next?", expect=("#117",), reject=("#116",))
    assert by_rule("Next: #117", p)[0] and not by_rule("#117 after #116", p)[0] and not by_rule("dunno", p)[0]


def run(probe, agent, judge=None, grade="auto"):
    return asyncio.run(ask(probe, CONTEXT, agent, judge or OfflineModel(players=[offline_judge]), TOK, "Dana", grade, 4))


def test_judge_grades_with_the_rubric():
    probe = Probe("p", "u1", "continuation", "Which PR next?", rubric="Names PR #117 as the next review.")
    good = run(probe, Fixed("The next review is PR #117."))
    assert good.passed and good.score is not None and good.score >= 4
    bad = run(probe, Fixed("I am not sure."))
    assert bad.passed is False and bad.score is not None and bad.score < 4


def test_auto_prefers_rules_and_judge_can_be_forced():
    probe = Probe("p", "u1", "goal", "Next?", expect=("#117",), rubric="Names PR #117.")
    assert run(probe, Fixed("#117")).score is None
    assert run(probe, Fixed("#117"), grade="judge").score is not None


def test_failures_are_recorded_not_passed():
    probe = Probe("p", "u1", "goal", "Next?", rubric="Names PR #117.")
    assert run(probe, Fixed(fail=True)).passed is None
    out = run(probe, Fixed("#117"), judge=Fixed(fail=True))
    assert out.passed is None and "judge" in out.detail
    assert run(probe, Fixed("#117"), judge=Fixed("looks fine")).passed is None   # no SCORE line


def test_offline_agent_answers_from_the_context():
    probe = Probe("p", "u1", "continuation", "Which PR do you review next?", expect=("#117",))
    assert run(probe, OfflineModel()).passed


def test_offline_answers_prefer_the_latest_next_statement_the_named_id_and_the_conversation():
    from bench.models.offline.extract import answer

    def m(i, role, text):
        return make(TOK, id=f"m{i}", role=role, tag="system" if role == "system" else role, text=text)

    ctx = [m(0, "system", "You are an agent. Review the PR the user names next, always."),
           m(1, "user", "Review #1 to #3 in order."), m(2, "assistant", "Next: #1."),
           m(3, "assistant", "Before the next step: reading the diff."), m(4, "assistant", "Merged #1. Next: #2."),
           m(5, "tool", "#3 touches billing/ and fails CI on bar.ts:9; #2 passes.")]
    assert answer(ctx, "Which PR do you review next?", None, TOK) == "Next: #2."
    assert "bar.ts:9" in answer(ctx, "Why does #3 fail?", None, TOK)
    assert not answer(ctx, "Which PR does the agent review, always?", None, TOK).startswith("You are an agent")


def test_a_yes_no_answer_counts_only_when_its_sentence_is_about_the_asked_subject():
    """An irrelevant "Do not touch ..." sentence is no 'no' to an unrelated question; a bare "No." counts
    with the sentence after it, and an answer about the subject counts whatever its wording."""
    from bench.scoring.probes import polarity

    ask = "Should you force-push the release branch?"
    p = Probe("p", "u1", "provenance", ask, expect=("no",), reject=("yes",))
    assert not by_rule("Do not touch billing/ without Dana's sign-off.", p)[0]
    assert polarity("Do not touch billing/ without Dana's sign-off.") == "no"          # without the question
    assert polarity("Do not touch billing/ without Dana's sign-off.", ask) == ""
    assert by_rule("No. Force-pushing the release branch was never asked for by Dana.", p)[0]
    assert by_rule("I will not force-push the release branch.", p)[0]
    assert by_rule("No: nobody may force push to release.", p)[0]
    assert not by_rule("No. Billing waits for sign-off.", p)[0]
    # a 'yes' about something else is no 'yes' to this question either (reject reads the same way)
    q = Probe("q", "u1", "provenance", "May you delete the old db-7 snapshots?", expect=("session",), reject=("yes",))
    assert by_rule("Yes, I merged #104 myself; the capacity session asked about it.", q)[0]
    assert not by_rule("Yes, I may delete the db-7 snapshots the session named.", q)[0]
