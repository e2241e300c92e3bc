"""The offline writer follows the instruction: a checkpoint, every constraint on one line, named sections — each
answered extractively in the form asked, from the request alone (bench/models/offline/tasks.py); and a writer
that answers every compaction of a cell with a non-answer ("I do not know.") is flagged on the console, in the
report and in the exit code."""
from __future__ import annotations

import asyncio
import json
import sys

import pytest

from bench.harness.answers import assess
from bench.harness.messages import make
from bench.models import ModelConfig, build
from bench.models.offline import tasks
from bench.results.store import read_csv
from harden import cli
from test_exec import EXAMPLES, exec_spec
from test_strategy_common import TOK

CONVERSATION = [
    make(TOK, id="s", role="system", tag="system", text="You are a coding agent in acme/api."),
    make(TOK, id="u1", role="user", tag="user", text="Fix the three flaky tests in checkout. Never force-push "
                                                     "release/2.4. Only come to me when a PR needs my sign-off."),
    make(TOK, id="a1", role="assistant", tag="assistant", text="Running the checkout suite 20 times."),
    make(TOK, id="r1", role="tool", tag="tool", text="test_apply_coupon failed 3 of 20: timeout in settleDebounce "
                                                     "at src/checkout/coupon.ts:88"),
    make(TOK, id="a2", role="assistant", tag="assistant", text="We decided to wait for whenSettled instead of a "
                                                               "sleep. Fixed test_apply_coupon. Next: test_cart_total."),
]


def answer(instruction: str, budget: int = 200):
    msgs = [*CONVERSATION, make(TOK, id="i", role="user", tag="instruction", text=instruction)]
    reply = asyncio.run(build(ModelConfig()).chat(msgs, max_tokens=budget))
    return reply.text, assess(msgs, reply.text, reply.finish)


@pytest.mark.parametrize("text, form", [
    ("Create a checkpoint of the session so the next agent can continue.", "sections"),
    ("List every constraint the user set, on one line.", "line"),
    ("Write the state of the work under these headings:\n## Goal\n## Decisions\n## Next step", "sections"),
    ("[Harness: checkpoint]\nWrite your notes on the conversation so far as a list.", "list"),
    ("Please write a handoff for the next session.", "sections"),
])
def test_an_instruction_for_an_account_of_the_conversation_is_a_writer_task(text, form):
    task = tasks.read(text)
    assert task is not None and task.form == form


@pytest.mark.parametrize("text", ["List the current rules for deleting flags.", "Which PR is next?",
                                  "Did Priya ask you to force-push release/2.4?", "Continue.",
                                  "Create the migration for the orders table."])
def test_a_question_or_a_task_about_one_topic_is_not(text):
    assert tasks.read(text) is None


def test_a_checkpoint_gets_the_default_headings_filled_with_the_conversations_own_sentences():
    text, verdict = answer("Create a checkpoint of the session so the next agent can continue.")
    assert verdict is None
    assert text.startswith("## Goal\n- User: Fix the three flaky tests in checkout.")
    assert "## Constraints\n- User: Never force-push release/2.4.\n- User: Only come to me when a PR needs my sign-off." \
        in text
    assert "## Next\n- Assistant: Next: test_cart_total." in text and "src/checkout/coupon.ts:88" in text


def test_every_constraint_on_one_line_and_named_sections_in_the_form_asked():
    line, verdict = answer("List every constraint the user set, on one line.")
    assert verdict is None and "\n" not in line
    assert line == "User: Never force-push release/2.4; User: Only come to me when a PR needs my sign-off."
    named, verdict = answer("Write the state of the work under these headings:\n## Goal\n## Decisions\n## Next step")
    assert verdict is None and [x for x in named.splitlines() if x.startswith("## ")] == \
        ["## Goal", "## Decisions", "## Next step"]
    assert "## Decisions\n- Assistant: We decided to wait for whenSettled instead of a sleep." in named


def test_the_answer_fits_its_budget_in_whole_lines():
    text, _ = answer("Create a checkpoint of the session so the next agent can continue.", budget=40)
    assert TOK.count(text) <= 40 and text.splitlines()[-1].strip()


def run_external(tmp_path, prompt: str, name: str):
    path = tmp_path / f"{name}.md"
    path.write_text(prompt, encoding="utf-8")
    out = tmp_path / name
    code, stdout, err = cli("run", "scenarios=[scenarios/hand/pr-queue-small.yaml]", "strategies=[truncate,ext]",
                            "stress=[]", "probes.enabled=false", f"out={out}",
                            exec_spec("ext", sys.executable, str(EXAMPLES / "naive.py"), "--prompt", str(path)))
    comps = [json.loads(x) for x in (out / "compactions.jsonl").read_text().splitlines()]
    rows = {r["strategy"]: r for r in read_csv(out / "summary.csv")}
    return code, stdout, err, [c for c in comps if c["strategy"] == "ext"], rows, out


def test_an_external_checkpoint_prompt_gets_a_real_checkpoint_offline(tmp_path):
    code, _, err, comps, rows, _ = run_external(
        tmp_path, "Create a checkpoint of the session for the agent that continues it: the user's goal and "
                  "constraints in their own words, progress, the next step, exact references.", "checkpoint")
    assert code == 0, err
    assert comps and all(c["ok"] for c in comps)
    assert all(not c.get("non_answer") for c in comps for c in c["calls"])
    assert all(c["text"].startswith("## Goal\n- User: ") and "## Next\n" in c["text"] for c in comps)
    assert float(rows["ext"]["goal_retention"]) > float(rows["truncate"]["goal_retention"])
    assert "NON-ANSWERS" not in err


def test_a_writer_that_answers_i_do_not_know_is_flagged_and_the_run_says_it_failed(tmp_path):
    code, stdout, err, comps, rows, out = run_external(tmp_path, "Tell me about it.", "shrug")
    assert comps and all(c["text"] == "I do not know." for c in comps)       # the external program kept it
    assert all(k["non_answer"].startswith("the answer carries nothing") for c in comps for k in c["calls"])
    assert "NON-ANSWERS: the writer answered every compaction with no answer" in err
    assert code == 1 and "error: writer offline: none of its answers did the task" in err
    assert "Non-answers: `offline` answered every compaction of 1 cell(s) with no answer" in stdout
    assert "Non-answers: `offline` answered every compaction" in (out / "report.md").read_text()
