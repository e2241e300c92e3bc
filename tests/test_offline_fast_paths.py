"""The offline model's fast paths give exactly what their plain definitions give.

`extract.answer` scores only the sentences that hold a word of the question, found through each
message's cached word index, and keeps the best two; `extract.summary` builds `Sentence`s only for
what it keeps. Each is checked here against the definition written the slow way (every pooled
sentence scored, the whole pool sorted), on contexts built to hit the awkward cases: repeated
sentences (the latest counts), system-prompt sentences, a message quoting an earlier summary,
ids named by the question, statements of what comes next, empty messages.
"""
from __future__ import annotations

import math
import random

import pytest

from bench.harness.messages import make
from bench.models.offline import extract
from bench.models.offline.extract import ASKS_NEXT, HEADER, IDENT, PATH, Sentence, dedupe, render, salience, sentences, states_next, terms
from bench.tokens import tokenizer

TOK = tokenizer()

WORDS = ("review", "merge", "billing", "deploy", "queue", "#5311", "#5327", "src/app/bar.ts:88", "a1b2c3d",
         "never", "always", "timeout", "error", "release", "migration", "users", "orders", "next", "the", "we",
         "Next: #5327.", "Resuming the queue at #5311.", "ENG-42", "3", "v2.1")


def plain_answer(messages, question, budget, tok):
    """answer() as first written: every pooled sentence scored, the pool sorted."""
    pool = [(s.pos, s.label, s.text) for s in dedupe(sentences(messages, tok))]
    want = terms(question)
    if not pool or not want:
        return "I do not know."
    pool = [s for s in pool if s[1] != "System"] or pool
    asked = {m.group(0).lower() for m in IDENT.finditer(question)} | {m.group(0).lower() for m in PATH.finditer(question)}
    named = [s for s in pool if asked and any(a in s[2].lower() for a in asked)]
    if ASKS_NEXT.search(question):
        stated = [s for s in (named or pool) if states_next(s[2])]
        if stated:
            return tok.truncate(stated[-1][2], budget) if budget else stated[-1][2]
    pool = named or pool
    bags = [terms(s[2]) for s in pool]
    df: dict[str, int] = {}
    for bag in bags:
        for w in bag & want:
            df[w] = df.get(w, 0) + 1
    n = len(pool)
    scores = []
    for (pos, label, text), bag in zip(pool, bags):
        hits = bag & want
        score = sum(math.log((n + 1) / (df[w] + 0.5)) for w in hits) + (1.0 if named else 0.0)
        if hits:
            score += 0.5 * (pos + 1) / n + 0.3 * (label == "User") + extract.wanted_kind(question, text)
        scores.append(score)
    ranked = sorted(range(n), key=lambda i: (-scores[i], -pool[i][0]))
    if scores[ranked[0]] <= 0:
        return "I do not know."
    picked = [ranked[0]] + ([ranked[1]] if n > 1 and scores[ranked[1]] >= 0.8 * scores[ranked[0]] else [])
    text = " ".join(pool[i][2] for i in sorted(picked, key=lambda i: pool[i][0]))
    return tok.truncate(text, budget) if budget else text


def plain_summary(messages, budget, tok):
    """summary() as first written: a Sentence per pooled sentence, the pool sorted."""
    pool = dedupe(sentences(messages, tok))
    if not pool:
        return tok.truncate(HEADER, budget)
    for s in pool:
        s.score = salience(s) + 3.0 * (s.pos + 1) / len(pool)
    chosen: list[Sentence] = []
    used = tok.count(HEADER) + 1
    for s in sorted(pool, key=lambda s: (-s.score, -s.pos)):
        if used + s.tokens + 4 <= budget:
            chosen.append(s)
            used += s.tokens + 4
    text = render(chosen)
    while chosen and tok.count(text) > budget:
        chosen.remove(min(chosen, key=lambda s: (s.score, s.pos)))
        text = render(chosen)
    if not chosen:
        text = tok.truncate(render([max(pool, key=lambda s: (s.score, s.pos))]), budget)
    return text


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 7))).capitalize() + rng.choice(".!?")


def context(rng: random.Random, n: int) -> list:
    """Messages of every role; some repeat earlier sentences, one quotes a summary's labelled lines."""
    said: list[str] = []
    out = [make(TOK, id="s", role="system", text="You are an agent. Never merge billing changes.", tag="system")]
    for i in range(n):
        role = rng.choice(("user", "assistant", "tool", "user"))
        k = rng.randint(0, 4)
        parts = [rng.choice(said) if said and rng.random() < 0.3 else sentence(rng) for _ in range(k)]
        said += parts
        text = " ".join(parts)
        if role == "user" and rng.random() < 0.2:
            text = "[Harness: watch]\n" + text
        if rng.random() < 0.1:
            text = HEADER + "\n- User: " + sentence(rng) + "\n- System: " + sentence(rng)
        out.append(make(TOK, id=f"m{i}", role=role, text=text, tag=role, call_id=f"c{i}" if role == "tool" else None,
                        tool="read" if role == "tool" and rng.random() < 0.5 else None))
    return out


QUESTIONS = ("What is next in the queue?", "Which PR did we review, #5311?", "What happened with the billing deploy?",
             "Where is the error in src/app/bar.ts:88?", "How many orders were migrated?", "What does ENG-42 say?",
             "What do you do next about a1b2c3d?", "What is the weather?", "the we?")


@pytest.mark.parametrize("seed", range(12))
def test_answer_is_its_plain_definition(seed):
    rng = random.Random(seed)
    messages = context(rng, rng.choice((0, 1, 3, 30, 120)))
    if seed % 4 == 0:
        messages = messages[:1]          # the system prompt alone: its sentences are the pool
    for question in QUESTIONS:
        for budget in (None, 12):
            assert extract.answer(messages, question, budget, TOK) == plain_answer(messages, question, budget, TOK), \
                (seed, question, budget)


@pytest.mark.parametrize("seed", range(8))
def test_summary_is_its_plain_definition(seed):
    rng = random.Random(seed)
    messages = [m for m in context(rng, rng.choice((0, 2, 40, 150))) if m.role != "system"]
    for budget in (3, 20, 60, 400, 5000):
        assert extract.summary(messages, budget, TOK) == plain_summary(messages, budget, TOK), (seed, budget)


def test_answer_names_an_id_once_per_sentence_and_ignores_superseded_copies():
    said = [make(TOK, id="u1", role="user", text="Review #5311 first. Then #5311 again.", tag="user"),
            make(TOK, id="a1", role="assistant", text="Next: #5311. Done with #5300.", tag="assistant"),
            make(TOK, id="a2", role="assistant", text="Next: #5327.", tag="assistant"),
            make(TOK, id="u2", role="user", text="Review #5311 first.", tag="user")]
    for q in ("What about #5311?", "What is next after #5311?", "What comes next in the queue?"):
        assert extract.answer(said, q, None, TOK) == plain_answer(said, q, None, TOK)
    assert extract.answer(said, "What comes next in the queue?", None, TOK) == "Next: #5327."


@pytest.mark.parametrize("seed", range(6))
def test_pool_rows_are_the_deduplicated_sentences_at_their_positions(seed):
    rng = random.Random(seed)
    messages = context(rng, 60)
    pool = extract._Pool([extract._read(m.text, extract.label_of(m), m.role == "user") for m in messages])
    flat = [(r, j) for r in pool.reads for j in range(len(r.texts))]
    got = [(pool.pos(row), flat[row][0].labels[flat[row][1]], flat[row][0].texts[flat[row][1]]) for row in pool.rows]
    assert got == [(s.pos, s.label, s.text) for s in dedupe(sentences(messages, TOK))]
    assert pool.n == sum(1 for _, label, _ in got if label != "System")


def sectioned_request(messages, names=("Primary Request and Intent", "Errors and fixes", "Pending Tasks",
                                       "Current Work", "Next Step")):
    from bench.strategies.sectioned.answer import block

    text = "[Harness: compaction]\nWrite it.\n\n" + block(list(names), 300)
    return [*messages, make(TOK, id="ask", role="user", text=text, tag="instruction")]


def test_the_sectioned_writer_answers_the_same_whatever_it_wrote_before():
    """Its per-message cache (sentences included, their positions set per request) keeps no state
    from one request to the next: answers match those of a fresh cache, for requests that share,
    repeat and reorder messages."""
    from bench.strategies.sectioned.offline import play
    from bench.strategies.sectioned import offline as writer

    rng = random.Random(7)
    base = [m for m in context(rng, 80) if m.role != "system"]
    requests = [base[:40], base, base[10:] + base[:10], base[:30] + base[5:35], base[::-1], base[:3] + base[:3]]
    fresh = []
    for msgs in requests:
        writer._pieces.cache_clear()
        fresh.append(play(sectioned_request(msgs), None, 300, TOK).text)
    writer._pieces.cache_clear()
    assert [play(sectioned_request(msgs), None, 300, TOK).text for msgs in requests] == fresh
    assert [play(sectioned_request(msgs), None, 300, TOK).text for msgs in reversed(requests)] == fresh[::-1]
