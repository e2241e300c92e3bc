"""A small seeded fuzz pass in CI (issue 16): mutated scenario files, transcripts and result folders through
the real commands must end in exit 0 or 2 with every line naming the input, never a traceback or a hang.
The full pass (500 scenarios, 150 transcripts, ...) is `.venv/bin/python tests/fuzz.py`; FUZZ_SEED=N
explores other mutations here."""
from __future__ import annotations

import os

import fuzz


def test_a_small_fuzz_pass_finds_no_traceback_hang_or_unnamed_line():
    seed = int(os.environ.get("FUZZ_SEED", "16"))
    t = fuzz.fuzz(scenarios=40, transcripts=12, results=3, runs=1, seed=seed, limit=30)
    assert t.cases >= 55
    assert not t.tracebacks, t.tracebacks[0]
    assert not t.hangs, t.hangs
    assert not t.unnamed, t.unnamed
    assert not t.unexpected, t.unexpected
    assert t.exits.get(2, 0) > 10 and t.exits.get(0, 0) > 3     # the mutations break files, and not all of them
