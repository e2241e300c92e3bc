"""The litellm path over real HTTP to the loopback server: usage, retries, failures, cache, keys."""
from __future__ import annotations

import asyncio
import threading

import pytest

from bench.errors import BadInput, ModelError
from bench.harness.messages import make
from bench.models import ModelConfig, build
from bench.models.cache import ResponseCache, cache_key
from bench.tokens import tokenizer

TOK = tokenizer()
MESSAGES = [make(TOK, id="u1", role="user", text="The failing test is tests/test_pool.py:88. Fix it first.", tag="user"),
            make(TOK, id="u2", role="user", text="Which test is failing?", tag="user")]


def model(server, tmp_path=None, **kw):
    cfg = dict(model="openai/test", api_base=server.url, timeout=5, retries=2, backoff=30.0)
    cfg.update(kw)
    m = build(ModelConfig(**cfg))
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    m.sleep = record   # backoff=30 would make any unhonoured Retry-After visible here, not as a slow test
    m.waits = waits
    return m


def test_usage_recorded_equals_server_usage(loopback, api_key):
    loopback.cached_tokens = 7
    m = model(loopback)
    reply = asyncio.run(m.chat(MESSAGES, max_tokens=50))
    assert "tests/test_pool.py:88" in reply.text
    served = loopback.usage[-1]
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.cached_input_tokens) == \
        (served["prompt_tokens"], served["completion_tokens"], 7)
    assert reply.usage.cost_usd is None          # an unpriced model has no cost, not zero
    assert loopback.bodies[-1]["max_tokens"] == 50 and loopback.auth_seen == 1
    assert (reply.retries, reply.cached, m.stats.http) == (0, False, 1)


def test_429_retried_honouring_retry_after(loopback):
    m = model(loopback)
    loopback.fail("429", times=2, retry_after=0.25)
    reply = asyncio.run(m.chat(MESSAGES))
    assert reply.retries == 2 and loopback.calls == 3
    assert m.waits == [0.25, 0.25]


@pytest.mark.parametrize("kind", ["500", "slow", "malformed", "empty", "bad_tool_json"])
def test_fault_retried_then_model_error(loopback, kind):
    # the timeout leaves a loaded machine room for the retry to succeed; a slow fault outlasts it
    m = model(loopback, timeout=2.0, retries=1, backoff=0.01)
    loopback.fail(kind, times=1, delay=3.0)
    assert asyncio.run(m.chat(MESSAGES)).retries == 1        # one fault: the retry succeeds
    loopback.fail(kind, times=2, delay=3.0)
    with pytest.raises(ModelError, match="failed after 2 tries"):
        asyncio.run(m.chat(MESSAGES))
    assert loopback.calls == 4 and m.waits == [0.01, 0.01]
    assert (m.stats.calls, m.stats.failures, m.stats.retries) == (2, 1, 2)


def test_a_blank_answer_at_temperature_0_is_not_asked_again(loopback):
    """The same request at temperature 0 gets the same answer: an empty one is a failed call at once."""
    m = model(loopback, retries=3, backoff=0.01)
    loopback.fail("blank", times=3)
    with pytest.raises(ModelError, match=r"empty .* \(not asked again: at temperature 0"):
        asyncio.run(m.chat(MESSAGES))
    assert loopback.calls == 1 and m.waits == []
    sampling = model(loopback, retries=3, backoff=0.01, temperature=0.7)     # sampling may answer otherwise
    assert asyncio.run(sampling.chat(MESSAGES)).retries == 2 and loopback.calls == 4


def test_bad_request_is_not_retried(loopback):
    m = model(loopback)
    loopback.fail("400", times=3)
    with pytest.raises(ModelError, match="bad request"):
        asyncio.run(m.chat(MESSAGES))
    assert loopback.calls == 1 and m.waits == []


def test_concurrency_is_bounded(loopback):
    m = model(loopback, concurrency=2)
    loopback.fail("slow", times=6, delay=0.15)

    async def many():
        return await asyncio.gather(*(m.chat([*MESSAGES, make(TOK, id="x", role="user", text=f"Item {i}?",
                                                              tag="user")]) for i in range(6)))

    assert len(asyncio.run(many())) == 6
    assert loopback.max_in_flight <= 2 and loopback.calls == 6


def test_cache_answers_second_call_without_http(loopback, tmp_path, api_key):
    first = model(loopback, cache_dir=str(tmp_path / "cache"))
    a = asyncio.run(first.chat(MESSAGES))
    again = model(loopback, cache_dir=str(tmp_path / "cache"))   # a new process would see the same
    b = asyncio.run(again.chat(MESSAGES))
    assert loopback.calls == 1 and b.cached and not a.cached
    assert (b.text, b.usage) == (a.text, a.usage)
    asyncio.run(model(loopback, cache_dir=str(tmp_path / "cache"), seed=1).chat(MESSAGES))
    asyncio.run(again.chat(MESSAGES, max_tokens=10))
    assert loopback.calls == 3          # repeat index and parameters are part of the key
    raw = (tmp_path / "cache" / "responses.sqlite").read_bytes()
    assert api_key.encode() not in raw and b"Fix it first" not in raw   # replies only, no request text


def test_cache_survives_concurrent_writers(tmp_path):
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        cache = ResponseCache(tmp_path)
        try:
            for i in range(40):
                cache.put(cache_key({"w": n, "i": i}), "m", {"text": f"{n}-{i}"})
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(ResponseCache(tmp_path)) == 160
    assert ResponseCache(tmp_path).get(cache_key({"w": 3, "i": 39})) == {"text": "3-39"}


def test_key_in_config_is_refused():
    with pytest.raises(BadInput, match="keys come from the environment"):
        build(ModelConfig(model="openai/gpt-4o-mini", extra={"api_key": "sk-nope-123456789"}))


def test_missing_provider_key_is_bad_input(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(BadInput, match="ANTHROPIC_API_KEY is not set"):
        build(ModelConfig(model="anthropic/claude-sonnet-4-5"))


def test_progress_is_quiet_in_ci_or_without_a_terminal(monkeypatch):
    from bench.models import progress

    monkeypatch.setenv("CI", "true")
    assert progress.quiet()
    monkeypatch.setenv("CI", "")
    monkeypatch.setattr(progress.sys, "stderr", open(__file__))   # a file is no terminal
    assert progress.quiet()


def test_unusable_cache_dir_is_bad_input(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(BadInput, match="responses.dir"):
        ResponseCache(blocker / "cache")
