"""The prompt-cache simulator against sequences computed by hand (PER_MESSAGE = 4 tokens a message)."""
from __future__ import annotations

import pytest

from bench.scoring.cache_sim import CacheSim, Hit, breakpoints, load_profile, profile_names
from bench.errors import BadInput

OPENAI = load_profile("openai")
ANTHROPIC = load_profile("anthropic")


def hs(n: int, prefix: str = "m") -> list[str]:
    return [f"{prefix}{i}" for i in range(n)]


def req(sim: CacheSim, t: float, tokens: list[int], hashes: list[str] | None = None, breaks=(), extra: int = 0) -> Hit:
    hashes = hashes or hs(len(tokens))
    total = sum(tokens) + 4 * len(tokens) + 3 + extra
    return sim.request(t, hashes, tokens, total, breaks)


def test_bundled_profiles_load():
    assert {"openai", "anthropic", "gemini", "deepseek", "none"} <= set(profile_names())
    with pytest.raises(BadInput):
        load_profile("nope")


def test_openai_prefix_in_128_token_steps():
    sim = CacheSim(OPENAI)
    assert req(sim, 0, [1000, 200]) == Hit()                     # cum 1004, 1208: nothing cached yet
    assert req(sim, 10, [1000, 200, 300]).read == 1152           # 1208 -> 9 steps of 128


def test_openai_minimum_length():
    sim = CacheSim(OPENAI)
    req(sim, 0, [500, 200])
    assert req(sim, 5, [500, 200, 900]).read == 0                # prefix 708 < 1,024


def test_openai_idle_expiry_and_refresh():
    sim = CacheSim(OPENAI)
    req(sim, 0, [1100])
    assert req(sim, 250, [1100, 10]).read == 1024                # 1104 -> 1024; refreshed at 250
    assert req(sim, 500, [1100, 10, 10]).read == 1024            # 250 s idle: still there
    assert req(sim, 801, [1100, 10, 10, 10]).read == 0           # 301 s idle: evicted


def test_openai_changed_message_breaks_the_prefix():
    sim = CacheSim(OPENAI)
    req(sim, 0, [1100, 600, 50])
    hashes = ["m0", "edited", "m2"]
    assert req(sim, 1, [1100, 600, 50], hashes).read == 1024     # only the first message still matches


def test_deepseek_64_token_units_from_zero():
    sim = CacheSim(load_profile("deepseek"))
    req(sim, 0, [96])
    assert req(sim, 1, [96, 10]).read == 64                      # 100 -> 64
    sim = CacheSim(load_profile("deepseek"))
    req(sim, 0, [50])
    assert req(sim, 1, [50, 10]).read == 0                       # 54 < 64


def test_gemini_any_length_above_minimum():
    sim = CacheSim(load_profile("gemini"))
    req(sim, 0, [1500])
    assert req(sim, 1, [1500, 20]).read == 1504


def test_none_caches_nothing():
    sim = CacheSim(load_profile("none"))
    req(sim, 0, [5000])
    assert req(sim, 1, [5000, 10]) == Hit()


def test_breakpoint_placement():
    assert breakpoints(["system", "user", "assistant", "tool"]) == [0, 3]
    assert breakpoints(["system", "summary", "user", "assistant"]) == [0, 1, 3]
    assert breakpoints(["system", "mind", "memo", "scene", "placeholder", "user"]) == [0, 3, 5]


def test_anthropic_writes_then_reads_at_breakpoints():
    sim = CacheSim(ANTHROPIC)
    tags = ["system", "user", "assistant", "tool"]
    first = req(sim, 0, [1200, 100, 50, 400], breaks=breakpoints(tags))
    assert first == Hit(read=0, write=1766)                      # cum 1204, 1308, 1362, 1766
    second = req(sim, 30, [1200, 100, 50, 400, 60, 300], breaks=[0, 5])
    assert second == Hit(read=1766, write=2134 - 1766)           # found 2 blocks back from the last breakpoint


def test_anthropic_lookback_is_20_blocks():
    sim = CacheSim(ANTHROPIC)
    req(sim, 0, [1200, 100, 50, 400], breaks=[0, 3])
    tokens = [1200, 100, 50, 400] + [10] * 21                     # last breakpoint 21 blocks after the entry at 3
    hit = req(sim, 10, tokens, breaks=[0, len(tokens) - 1])
    assert hit.read == 1204                                       # only the system prompt's entry is in reach
    assert hit.write == sum(tokens) + 4 * len(tokens) - 1204
    sim = CacheSim(ANTHROPIC)
    req(sim, 0, [1200, 100, 50, 400], breaks=[0, 3])
    tokens = [1200, 100, 50, 400] + [10] * 20                     # exactly 20 blocks: still found
    assert req(sim, 10, tokens, breaks=[0, len(tokens) - 1]).read == 1766


def test_anthropic_minimum_and_ttl_refresh():
    sim = CacheSim(ANTHROPIC)
    first = req(sim, 0, [500, 300, 300], breaks=[0, 2])
    assert first == Hit(read=0, write=1112)                       # system (504) is below 1,024: not written
    assert req(sim, 200, [500, 300, 300, 10], breaks=[0, 3]).read == 1112
    assert req(sim, 450, [500, 300, 300, 10, 10], breaks=[0, 4]).read == 1126   # written at 200
    assert req(sim, 800, [500, 300, 300, 10, 10, 10], breaks=[0, 5]).read == 0  # 350 s idle
    sim = CacheSim(ANTHROPIC)
    same = [1200, 10]
    req(sim, 0, same, breaks=[0, 1])
    assert req(sim, 200, same, breaks=[0, 1]) == Hit(read=1218)                 # a hit refreshes the entry
    assert req(sim, 450, same, breaks=[0, 1]).read == 1218                      # 450 s after the write


def test_anthropic_one_hour_option():
    from dataclasses import replace

    sim = CacheSim(replace(ANTHROPIC, ttl_s=3600))
    req(sim, 0, [1200], breaks=[0])
    assert req(sim, 3000, [1200, 5], breaks=[0, 1]).read == 1204


def test_tool_definitions_stay_uncached_tail():
    sim = CacheSim(OPENAI)
    req(sim, 0, [1100], extra=500)
    hit = req(sim, 1, [1100], extra=500)
    assert hit.read == 1024 and hit.write == 0


@pytest.mark.parametrize("profile", [OPENAI, ANTHROPIC])
def test_checkpoint_turn_hits_and_fresh_summary_prompt_misses(profile):
    convo = [1500, 300, 400, 200]
    tags = ["system", "user", "assistant", "tool"]
    sim = CacheSim(profile)
    req(sim, 0, convo, breaks=breakpoints(tags))
    turn = req(sim, 5, convo + [80], breaks=breakpoints(tags + ["user"]))          # same conversation + instruction
    assert turn.read in (2304, 2416)                  # 2,416 tokens shared; openai counts 18 steps of 128
    fresh = req(sim, 6, [60, 2500], ["sys2", "transcript"], breaks=[0, 1])         # new system prompt + transcript
    assert fresh.read == 0


def test_model_minimums_follow_the_price_model():
    assert ANTHROPIC.for_model("claude-sonnet-4-5").min_tokens == 1024
    assert ANTHROPIC.for_model("anthropic/claude-haiku-4-5-20251001").min_tokens == 4096
    assert ANTHROPIC.for_model("claude-3-5-haiku-latest").min_tokens == 2048
    assert load_profile("gemini").for_model("gemini/gemini-2.5-flash-lite").min_tokens == 2048
