"""The exploration adversaries (glossary, claims, all_done, naive_hedge; padded, now audited): not in the audit, but
each must do what its docstring says — calls stay paired, no model call, the truth unread, the notes
at the front within budget and made only of what was dropped."""
from __future__ import annotations

import pytest

from bench.strategies.adversaries.all_done import AllDone
from bench.strategies.adversaries.claims import Claims
from bench.strategies.adversaries.glossary import Glossary
from bench.strategies.adversaries.naive_hedge import hedged
from bench.strategies.adversaries.neither import Neither
from bench.strategies.adversaries.padded import Padded
from test_adversaries import HAND, ROOT, load, paired_modelless_and_blind, run

MADE = {"glossary": Glossary, "glossary_line": lambda: Glossary(join=" "), "claims": Claims,
        "all_done": AllDone, "padded": Padded, "neither": Neither}


@pytest.mark.parametrize("name", sorted(MADE))
@pytest.mark.parametrize("path", HAND, ids=lambda p: p.stem)
def test_calls_stay_paired_no_model_call_and_truth_unread(name, path):
    paired_modelless_and_blind(load(path), MADE[name])


@pytest.mark.parametrize("make", [Glossary, Claims])
def test_notes_are_the_lines_of_dropped_messages_newest_within_budget(make):
    s = load(ROOT / "src" / "bench" / "scenarios" / "hand" / "debug-then-recall.yaml")
    _, requests, comps, _ = run(s, make(budget=0.1))
    noted = [r for r in requests if r.messages[1].tag == "notes"]
    assert noted, "something was dropped and noted"
    dropped = {i for c in comps for i in c["dropped"]}
    lines = [x for x in (make().line(e) for e in s.events if e.id in dropped) if x]
    for r in noted:
        notes = r.messages[1]
        assert notes.tokens <= int(s.window * 0.1)
        got = notes.text.splitlines()
        assert got and all(x in lines for x in got)
    assert noted[-1].messages[1].text.splitlines()[-1] == lines[-1], "the newest dropped line is kept"


def test_line_keeps_only_the_sentences_it_picks():
    class M:
        text, calls = "We talked. The pool at src/db/pool.ts:42 leaks. Ask Aiko. Done with the lint fix. Moving on.", ()
    assert Glossary().line(M) == "The pool at src/db/pool.ts:42 leaks. Ask Aiko."
    assert Claims().line(M) == "Done with the lint fix. Moving on."


def test_all_done_calls_each_dropped_item_done_once():
    s = load(ROOT / "src" / "bench" / "scenarios" / "hand" / "pr-queue-small.yaml")
    _, requests, _, _ = run(s, AllDone(budget=1.0))
    noted = [r.messages[1].text for r in requests if r.messages[1].tag == "notes"]
    assert noted, "the queue's #ids were dropped and noted"
    claims = noted[-1].split()
    ids = claims[::2]
    assert claims[1::2] == ["done."] * len(ids) and len(ids) == len(set(ids)) and all(x.startswith("#") for x in ids)


def test_padded_sends_the_same_filler_first_in_every_request():
    s = load(HAND[0])
    _, requests, _, _ = run(s, Padded(pad=0.3))
    fillers = {r.messages[1].hash for r in requests}
    assert len(fillers) == 1 and requests[0].messages[1].tag == "notes"
    assert requests[0].messages[1].tokens <= int(s.window * 0.3)


def test_hedged_opens_every_sentence_with_the_prefix():
    assert hedged("Use Postgres. Never force-push!\nCI is red", "Withdrawn or not:") == (
        "Withdrawn or not: Use Postgres. Withdrawn or not: Never force-push!\nWithdrawn or not: CI is red")


def test_neither_writes_every_trigram_behind_a_not():
    class M:
        text, calls = "Keep REST. Not gRPC", ()
    assert Neither().line(M) == "not Keep REST Not; not REST Not gRPC;"
