"""Cost arithmetic against litellm's own cost_per_token on the same numbers (imports litellm: ~5 s)."""
from __future__ import annotations

import pytest

from bench.scoring.cache_sim import load_profile
from bench.errors import BadInput
from bench.scoring.pricing import cost, find, rates

CASES = [  # model, profile, prompt tokens, cache read, cache write, output
    ("claude-sonnet-4-5", "anthropic", 10_000, 6_000, 2_000, 500),
    ("gpt-5-mini", "openai", 10_000, 6_016, 0, 700),
    ("deepseek/deepseek-chat", "deepseek", 9_000, 4_096, 0, 300),
    ("gemini/gemini-2.5-flash", "gemini", 12_000, 3_000, 0, 100),
]


@pytest.mark.parametrize("model,profile,prompt,read,write,out", CASES)
def test_cost_matches_litellm(model, profile, prompt, read, write, out):
    from bench import env

    env.prepare()
    import litellm

    inp, outp = litellm.cost_per_token(model=model, prompt_tokens=prompt, completion_tokens=out,
                                       cache_read_input_tokens=read, cache_creation_input_tokens=write)
    assert cost(rates(model, load_profile(profile)), prompt, read, write, out) == pytest.approx(inp + outp, rel=1e-9)


def test_one_hour_writes_use_the_1h_rate():
    from dataclasses import replace

    r = rates("claude-sonnet-4-5", replace(load_profile("anthropic"), ttl_s=3600))
    assert r.cache_write == pytest.approx(2 * r.input)


def test_unknown_price_model_is_bad_input():
    with pytest.raises(BadInput):
        find("no-such-model-xyz")
    assert find("openai/gpt-5-mini")[0] == "gpt-5-mini"
