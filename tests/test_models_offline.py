"""The offline model: extractive summaries under a budget, extracted answers, the player hook."""
from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from bench.scenarios import loader
from bench.scenarios.loader import normalize
from bench.harness.messages import make, render_all
from bench.models.offline import OfflineModel, Turn
from bench.models.offline.extract import HEADER
from bench.scenarios.model import Call
from bench.tokens import tokenizer

ROOT = Path(__file__).resolve().parent.parent
TOK = tokenizer()


def chat(messages, players=(), **kw):
    return asyncio.run(OfflineModel(players=players).chat(messages, **kw))


def user(text, id="q"):
    return make(TOK, id=id, role="user", text=text, tag="user")


@pytest.fixture(scope="module")
def scenario():
    return loader.load(ROOT / "src/bench/scenarios/hand/pr-queue-small.yaml")


@pytest.fixture(scope="module")
def record(scenario):
    return render_all(TOK, scenario)


@pytest.mark.parametrize("budget", [60, 150, 400])
def test_summary_fits_budget_keeps_sentences_and_is_deterministic(record, budget):
    ask = user("Summarise the conversation so far.")
    reply = chat([*record, ask], max_tokens=budget)
    assert TOK.count(reply.text) <= budget
    assert reply.text == chat([*record, ask], max_tokens=budget).text
    source = normalize(" ".join(m.text for m in record))
    lines = [ln for ln in reply.text.splitlines() if ln != HEADER]
    assert lines, reply.text
    for line in lines:
        for sentence in line.split(": ", 1)[1].split(". "):   # original sentences, not paraphrase
            assert normalize(sentence) in source
    assert reply.finish == "stop" and reply.model == "offline"


def test_summary_prefers_user_rules_and_references_over_chatter(record):
    filler = [make(TOK, id=f"a{i}", role="assistant", text=f"Okay, continuing with step {i}.", tag="assistant")
              for i in range(40)]
    reply = chat([*record, *filler, user("Please summarise everything so far.")], max_tokens=200)
    assert "Never merge anything that touches billing/." in reply.text
    assert "Okay, continuing" not in reply.text


def test_summary_keeps_order_and_grows_with_budget(record):
    ask = user("Write a summary of the above.")
    small, big = (chat([*record, ask], max_tokens=b).text for b in (100, 500))
    assert len(big) > len(small)
    kept = [ln for ln in big.splitlines()[1:]]
    first = [next(i for i, m in enumerate(record) if ln.split(": ", 1)[1][:30] in m.text) for ln in kept]
    assert first == sorted(first)


def test_summary_decided_from_content_not_purpose(record):
    ask = user("Which line raised the pg deprecation warning?")
    a = chat([*record, ask], purpose="summary")
    b = chat([*record, ask], purpose="probe")
    assert a.text == b.text and "pool.ts:42" in a.text and HEADER not in a.text


@pytest.mark.parametrize("name", ["pr-queue-small", "debug-then-recall"])
def test_answers_recall_question_by_extraction(name):
    # debug-then-recall needs the path's pieces ('bar.ts' in 'src/upstream/bar.ts:88') and a
    # stem ('warning' ~ 'WARN') to find the line among many similar ones
    scenario = loader.load(ROOT / f"src/bench/scenarios/hand/{name}.yaml")
    record, at = render_all(TOK, scenario), scenario.index()
    recall = [p for p in scenario.probes if p.kind == "recall"]
    assert recall
    for probe in recall:
        reply = chat([*record[:at[probe.at] + 1], user(probe.ask)])
        assert any(e.lower() in reply.text.lower() for e in probe.expect), reply.text
        assert TOK.count(reply.text) < 120     # a sentence or two, not the context


def test_unanswerable_question():
    assert chat([user("The sky is blue.", "a"), user("Which zebra won?")]).text == "I do not know."


def test_usage_counts_messages_tools_and_output(record):
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]
    plain = chat(record)
    with_tools = chat(record, tools=tools)
    assert plain.usage.input_tokens == TOK.request_size([m.tokens for m in record])
    assert with_tools.usage.input_tokens == plain.usage.input_tokens + TOK.count(json.dumps(tools, sort_keys=True))
    assert plain.usage.output_tokens == TOK.count(plain.text)


def test_players_newest_first_none_passes_and_calls_become_tool_calls(record):
    def older(messages, tools, max_tokens, tok):
        return Turn(text="older")

    def newer(messages, tools, max_tokens, tok):
        if not tools:
            return None
        return Turn(text="", calls=(Call("c1", tools[0]["function"]["name"], {"path": "mind.md"}),))

    taught = OfflineModel().teach([older]).teach([newer, older])   # teaching a player twice keeps it once
    assert taught.players == (older, newer)
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]
    r = asyncio.run(taught.chat([*record, user("Checkpoint now.")], tools=tools))
    assert r.finish == "tool_calls" and r.calls[0].tool == "read_file" and r.calls[0].args == {"path": "mind.md"}
    assert r.usage.output_tokens > 0
    assert asyncio.run(taught.chat([*record, user("Checkpoint now.")])).text == "older"   # newer passed
    assert chat([*record], players=(newer, older), tools=tools).text == "older"          # newest first
    assert chat([*record, user("Checkpoint now.")]).text != "older"                      # nothing global


def test_output_cut_at_max_tokens_like_an_llm(record):
    def wordy(messages, tools, max_tokens, tok):
        return Turn(text="word " * 500)

    r = chat(record, players=(wordy,), max_tokens=20)
    assert r.finish == "length" and TOK.count(r.text) <= 20
