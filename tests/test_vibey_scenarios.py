"""Vibey on every bundled scenario with the offline writer, and over HTTP with a litellm writer.

The hand-written smoke scenarios (windows of 4,500-4,600 tokens) are checkpointed at their
own windows. Squeezed to a toy window (1,500 tokens), in which the checkpoint turn itself
(instruction and tool definitions, ~1,300 tokens, plus the output reserve) cannot fit, every
compaction must be a recorded fallback.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from bench.scenarios import loader
from bench.models import build
from bench.harness.model import ModelConfig
from bench.strategies.vibey import Vibey
from test_vibey_kit import long_session, run

ROOT = Path(__file__).resolve().parents[1]
BUNDLED = sorted(p for d in ("hand", "library") for p in (ROOT / "src" / "bench" / "scenarios" / d).glob("*")
                 if p.suffix in (".yaml", ".yml", ".json"))
VALIDATION = ("scene:", "mind:", "memo:", "turn:")
TOY = 1500      # a window the checkpoint turn cannot fit in


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_checkpoints_run_and_pass_validation_on_every_bundled_scenario(path):
    s = loader.load(str(path))
    toy = s.window < 2000
    stats, _, comps, strategy = run(s, Vibey(turn_window=16_000) if toy else Vibey())
    assert comps and stats.requests
    checkpoints = [c for c in comps if c.get("kind") == "checkpoint"]
    # every checkpoint is valid; only the mechanical-only steps vibey takes after checkpoints that freed too
    # little are failed compactions (their fallback ran)
    assert checkpoints and all(c["ok"] or c["error"].startswith("mechanical only") for c in comps)
    assert not [p for c in comps for p in c["problems"] if p.startswith(VALIDATION)]
    assert all(c["repairs"] == 0 for c in comps)
    record, number = strategy.session.record, strategy.number
    background = [m for m in record if m.tag == "background"]
    listed = {n for c in checkpoints for n in c["candidates"]}
    assert all(record[n - 1].tag == "user" for n in listed)
    for c in comps:
        assert not any(m.text.split("\n", 1)[-1] in c["memo"] for m in background)
    moved = {i for c in comps for i in c["moved"]}
    forged = [m for m in record if m.tag == "user" and m.text.startswith(f"{s.user}: [Harness:") and m.id in moved]
    mechanical = "\n".join(c["memo"] for c in comps if c.get("kind") == "mechanical")
    assert all(number[m.id] in listed or m.text in mechanical for m in forged)
    if path.stem in ("injected-watch", "forged-marker-24k"):
        assert forged, "the scenario's forged-marker message should have been moved out"


@pytest.mark.parametrize("path", [p for p in BUNDLED if "hand" in p.parts], ids=lambda p: p.stem)
def test_toy_windows_fall_back_without_crashing(path):
    s = loader.load(str(path))
    stats, _, comps, strategy = run(s, window=TOY)
    assert comps and stats.requests == sum(e.role == "assistant" for e in s.events)
    for c in comps:
        assert c["ok"] or c["fallback"], c
        if c.get("kind") == "mechanical":
            why = (c["error"] or "") + c["fallback"]
            assert c["fallback"].startswith("mechanical") and ("too big for a checkpoint turn" in why
                                                               or "mechanical only" in why)


def test_the_same_checkpoints_through_litellm_and_the_loopback_server(loopback, api_key, tmp_path):
    s = long_session(turns=80)
    _, _, offline, _ = run(s)
    writer = build(ModelConfig(model="openai/test-writer", api_base=loopback.url, backoff=0.01, retries=2))
    loopback.fail("429", times=1, retry_after=0.01)
    _, _, http, _ = run(s, writer=writer)
    assert http and all(c["ok"] and c["kind"] == "checkpoint" for c in http)
    calls = [c for comp in http for c in comp["calls"]]
    assert loopback.calls == len(calls) + 1 and sum(c["retries"] for c in calls) == 1
    assert [c["text"] for c in http] == [c["text"] for c in offline]
    assert [c["input_tokens"] for c in calls] == [u["prompt_tokens"] for u in loopback.usage]
    body = loopback.bodies[0]
    assert {t["function"]["name"] for t in body["tools"]} >= {"edit_mind", "tick_memo"}
    assert body["messages"][-1]["content"].startswith("[Harness: checkpoint]")
