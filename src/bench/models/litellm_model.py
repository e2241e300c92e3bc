"""Any litellm model string as writer, agent or judge (DESIGN §5).

We do our own retries rather than litellm's so that every failure mode is
handled the same way and counted: HTTP 429/5xx, timeouts, a body that is not
JSON, a reply without choices, an empty answer (no text, no tool calls),
tool-call arguments that are not JSON. Waits double from `backoff`, and a
server's Retry-After wins, up to `max_wait` (a long wait is announced on
stderr, so a stalled run says why). Requests a server will never accept (bad
request, auth, unknown model) fail at once. After the retries the call raises
ModelError, which the harness records as a failed compaction. API keys come
only from the environment (litellm reads the provider's usual variable); error
texts are scrubbed of them before they can reach a log.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import sys
import time
import warnings
from functools import lru_cache
from typing import Any, Sequence

from bench.errors import BadInput, ModelError
from bench.harness.messages import Message
from bench.scenarios.model import Call
from bench.harness.model import Model, ModelConfig, Reply, Usage
from bench.harness.wire import to_wire
from bench.models.cache import ANSWERED, ResponseCache, cache_key
from bench.models.limiter import ACCOUNTS, FATAL, OK, RATE_LIMITED, TRANSIENT, account, named_wait
from bench.models.progress import HEARTBEAT, Progress
from bench import env

ANNOUNCE = 10.0        # a wait this long or longer is said on stderr
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.I)


class Unusable(Exception):
    """The server answered 200 but the answer cannot be used; retried like an HTTP error."""


class Blank(Unusable):
    """The model answered, with nothing (no text, no tool calls): at temperature 0 the same request gets the same
    answer, so it is not asked again."""


@lru_cache(maxsize=1)
def _litellm():
    """Import litellm once, offline-safe and quiet (no price-map fetch, no debug banners)."""

    env.prepare()
    import litellm

    litellm.suppress_debug_info = True
    litellm.turn_off_message_logging = True
    litellm.drop_params = True
    # litellm's pydantic models warn on every odd answer before we reject it; the rejection is what counts
    warnings.filterwarnings("ignore", message="Pydantic serializer warnings")
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "httpx"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return litellm


def fatal_errors(litellm) -> tuple[type[BaseException], ...]:
    """Answers that retrying cannot change."""
    return (litellm.AuthenticationError, litellm.BadRequestError, litellm.NotFoundError,
            litellm.PermissionDeniedError, litellm.UnsupportedParamsError)


class LitellmModel(Model):
    def __init__(self, cfg: ModelConfig):
        secret = sorted(k for k in cfg.extra if SECRET_NAME.search(k))
        if secret:
            raise BadInput(f"model {cfg.model}: {', '.join(secret)}: keys come from the environment "
                           f"(e.g. OPENAI_API_KEY), never from the config")
        try:
            provider = _litellm().get_llm_provider(cfg.model, api_base=cfg.api_base)[1]
        except Exception:  # litellm raises its BadRequestError subclasses here
            raise BadInput(f"model {cfg.model}: litellm cannot tell its provider; name it as provider/model, "
                           f"e.g. openai/{cfg.model.split('/')[-1]}") from None
        if not cfg.api_base:
            missing = [k for k in _litellm().validate_environment(cfg.model).get("missing_keys") or ()
                       if SECRET_NAME.search(k)]
            if missing:
                raise BadInput(f"model {cfg.model}: {', '.join(missing)} is not set in the environment")
        self.cfg = cfg
        self.name = cfg.model
        # who the provider counts our calls against: the limiter is shared by every model of the account
        prefix = f"{provider}_".upper().replace("-", "_")
        self.account = account(cfg.api_base or provider, [os.environ[k] for k in sorted(os.environ)
                                                          if k.startswith(prefix) and SECRET_NAME.search(k)])
        self.cache = ResponseCache(cfg.cache_dir) if cfg.cache_dir else None
        self.progress = Progress(cfg.model)
        self._sem: tuple[Any, asyncio.Semaphore] | None = None
        self.sleep = asyncio.sleep   # the wait between tries; tests record it instead of waiting

    @property
    def stats(self):
        return self.progress.stats

    def _semaphore(self) -> Any:
        """This model's own bound, when its config sets one (the account's limiter bounds it anyway); one
        per event loop (a semaphore cannot move between loops)."""
        if self.cfg.concurrency is None:
            return contextlib.nullcontext()
        loop = asyncio.get_running_loop()
        if self._sem is None or self._sem[0] is not loop:
            self._sem = (loop, asyncio.Semaphore(max(1, self.cfg.concurrency)))
        return self._sem[1]

    def request(self, messages: Sequence[Message], tools: list[dict] | None,
                max_tokens: int | None) -> dict[str, Any]:
        """The acompletion arguments; also what the cache key is made of (with api_base and seed)."""
        req: dict[str, Any] = {"model": self.cfg.model, "messages": [to_wire(m) for m in messages],
                               "temperature": self.cfg.temperature}
        limit = max_tokens or self.cfg.max_tokens
        if limit:
            req["max_tokens"] = int(limit)
        if tools:
            req["tools"] = tools
        if self.cfg.seed:   # a repeat after the first asks for its own sampling seed (OpenAI, vLLM, llama.cpp)
            req["seed"] = int(self.cfg.seed)
        req.update(self.cfg.extra)
        return req

    async def chat(self, messages: Sequence[Message], *, tools: list[dict] | None = None,
                   max_tokens: int | None = None, purpose: str = "") -> Reply:
        req = self.request(messages, tools, max_tokens)
        key = cache_key({"request": req, "api_base": self.cfg.api_base, "seed": self.cfg.seed})
        answered = ANSWERED.get()
        if answered is not None:
            answered.append((self.cache, key))
        took: float | None = None
        try:
            if self.cache is not None and not self.cfg.refresh:
                hit = from_cache(self.cache.get(key))
                if hit is not None:
                    self.stats.cache_hits += 1
                    return hit
            async with self._semaphore():
                started = time.perf_counter()
                reply = await self._call(req)
                took = time.perf_counter() - started
            if self.cache is not None and reply.finish != "length":   # a cut-off answer is used, never kept
                self.cache.put(key, self.cfg.model, to_cache(reply))
            return reply
        except ModelError:
            self.stats.failures += 1
            raise
        finally:
            self.stats.calls += 1
            self.progress.update(took)

    async def _call(self, req: dict[str, Any]) -> Reply:
        litellm = _litellm()
        fatal = fatal_errors(litellm)
        started = time.perf_counter()
        tries = max(0, self.cfg.retries) + 1
        transient = (Unusable, asyncio.TimeoutError, litellm.APIError, litellm.Timeout, litellm.APIConnectionError,
                     litellm.RateLimitError, litellm.InternalServerError, litellm.ServiceUnavailableError, OSError)
        for attempt in range(tries):
            self.stats.http += 1
            try:
                async with ACCOUNTS.get(self.account).slot() as ticket:   # calls of one account, adaptively bounded
                    try:
                        async with asyncio.timeout(self.cfg.timeout * 1.5 + 5):
                            resp = await self._beating(litellm.acompletion(
                                **req, **self.endpoint(), timeout=self.cfg.timeout, num_retries=0, max_retries=0))
                        reply = parse(resp)
                        ticket.outcome = OK
                    except litellm.RateLimitError as exc:
                        named = named_wait(headers_of(exc))   # the user's max_wait caps it (and is said)
                        ticket.outcome = RATE_LIMITED
                        ticket.wait = None if named is None else min(named, self.cfg.max_wait)
                        raise
                    except transient:
                        ticket.outcome = TRANSIENT
                        raise
                    except BaseException:
                        ticket.outcome = FATAL
                        raise
            except fatal as exc:
                raise ModelError(f"{self.cfg.model}: {scrub(_describe(exc))}") from None
            except Blank as exc:
                if not self.cfg.temperature and "seed" not in req:
                    raise ModelError(f"{self.cfg.model}: {exc} (not asked again: at temperature 0 the same request "
                                     f"gets the same answer)") from None
                if attempt + 1 == tries:
                    raise ModelError(f"{self.cfg.model}: failed after {tries} tries: {exc}") from None
                self.stats.retries += 1
                await self.sleep(self.wait(attempt, exc))
                continue
            except transient as exc:
                if attempt + 1 == tries:
                    raise ModelError(f"{self.cfg.model}: failed after {tries} tries: "
                                     f"{scrub(_describe(exc))}") from None
                self.stats.retries += 1
                await self.sleep(self.wait(attempt, exc))
                continue
            reply.retries = attempt
            reply.latency_s = time.perf_counter() - started
            return reply
        raise AssertionError("unreachable")

    async def _beating(self, call: Any) -> Any:
        """Await `call`, saying every HEARTBEAT seconds that it is still under way (a slow local model's
        prompt pass can take minutes, and a CI log would otherwise show nothing). It runs in the caller's
        task, the beat on a timer: each task between the slot and the socket (as `wait_for` makes) costs a
        turn of the event loop before the request is sent and another after the answer is read, and with
        many cells on one loop a turn is milliseconds of the account's slot that the provider never sees."""
        loop = asyncio.get_running_loop()
        waited = 0.0

        def beat() -> None:
            nonlocal waited, timer
            waited += HEARTBEAT
            self.progress.heartbeat(waited)
            timer = loop.call_later(HEARTBEAT, beat)

        timer = loop.call_later(HEARTBEAT, beat)
        try:
            return await call
        finally:
            timer.cancel()

    def endpoint(self) -> dict[str, Any]:
        """Where to send requests. A local OpenAI-compatible server (vLLM, llama.cpp, Ollama)
        usually wants no key, but the OpenAI client refuses to run without one: give it a
        placeholder only when the environment has none."""
        if not self.cfg.api_base:
            return {}
        out: dict[str, Any] = {"api_base": self.cfg.api_base}
        if self.cfg.model.startswith("openai/") and not os.environ.get("OPENAI_API_KEY"):
            out["api_key"] = "no-key"
        return out

    def wait(self, attempt: int, exc: BaseException) -> float:
        after = retry_after(exc)
        wanted = after if after is not None else self.cfg.backoff * 2 ** attempt
        seconds = min(wanted, self.cfg.max_wait)
        if seconds >= ANNOUNCE or seconds < wanted:
            why = f"the server asked for {wanted:g} s (Retry-After)" if after is not None else "backoff"
            capped = f", capped by max_wait={self.cfg.max_wait:g}" if seconds < wanted else ""
            print(f"{self.cfg.model}: waiting {seconds:g} s before try {attempt + 2} of {self.cfg.retries + 1}: "
                  f"{why}{capped}", file=sys.stderr, flush=True)
        return seconds


def parse(resp: Any) -> Reply:
    """Our Reply from a litellm ModelResponse; Unusable when there is nothing to use."""
    choices = getattr(resp, "choices", None) or []
    if not choices:
        raise Unusable("reply has no choices")
    msg = choices[0].message
    calls = []
    for tc in getattr(msg, "tool_calls", None) or []:
        raw = tc.function.arguments
        try:
            args = json.loads(raw) if isinstance(raw, str) else (raw or {})
        except ValueError:
            raise Unusable(f"tool call {tc.function.name}: arguments are not JSON: {str(raw)[:80]!r}") from None
        if not isinstance(args, dict):
            raise Unusable(f"tool call {tc.function.name}: arguments are not a JSON object")
        calls.append(Call(tc.id or f"call_{len(calls)}", tc.function.name, args))
    text = msg.content or ""
    if not isinstance(text, str):
        raise Unusable(f"the answer's content is {type(text).__name__}, not text")
    if not text.strip() and not calls:
        raise Blank("the answer is empty (no text, no tool calls)")
    return Reply(text=text, calls=tuple(calls), usage=usage_of(resp),
                 model=getattr(resp, "model", "") or "", finish=choices[0].finish_reason)


def usage_of(resp: Any) -> Usage:
    u = getattr(resp, "usage", None)
    details = getattr(u, "prompt_tokens_details", None)
    # None, not 0, when the provider does not say: the results leave the column empty rather than report a miss
    cached = next((v for v in (getattr(details, "cached_tokens", None), getattr(u, "cache_read_input_tokens", None))
                   if isinstance(v, (int, float)) and not isinstance(v, bool)), None)
    return Usage(input_tokens=getattr(u, "prompt_tokens", 0) or 0,
                 cached_input_tokens=None if cached is None else int(cached),
                 output_tokens=getattr(u, "completion_tokens", 0) or 0, cost_usd=cost_of(resp))


_UNPRICED: set[str] = set()   # models litellm could not price: asking again per answer costs ms of CPU each


def cost_of(resp: Any) -> float | None:
    """The provider's price for this response, as litellm knows it; None for unpriced models."""
    cost = (getattr(resp, "_hidden_params", None) or {}).get("response_cost")
    model = str(getattr(resp, "model", "") or "")
    if cost is None and model not in _UNPRICED:
        try:
            cost = _litellm().completion_cost(completion_response=resp)
        except Exception:   # litellm raises a variety of errors for models it cannot price
            _UNPRICED.add(model)
            return None
    return float(cost) if cost else None


def headers_of(exc: BaseException) -> Any:
    """The HTTP headers of the answer an error came from (litellm keeps them in one of two places)."""
    for headers in (getattr(getattr(exc, "response", None), "headers", None),
                    getattr(exc, "litellm_response_headers", None)):
        if headers is not None:
            return headers
    return None


def retry_after(exc: BaseException) -> float | None:
    """Seconds from a Retry-After header (seconds form; HTTP dates are left to the backoff and the limiter)."""
    for headers in (getattr(getattr(exc, "response", None), "headers", None),
                    getattr(exc, "litellm_response_headers", None)):
        if headers is None:
            continue
        value = headers.get("retry-after-ms")
        if value is not None:
            try:
                return max(0.0, float(value) / 1000)
            except ValueError:
                pass
        value = headers.get("retry-after")
        if value is not None:
            try:
                return max(0.0, float(value))
            except ValueError:
                return None
    return None


def _describe(exc: BaseException) -> str:
    """One line: litellm puts a whole traceback in some messages; it ends where that starts."""
    text = str(exc).split("Traceback (most recent call last)")[0]
    return (" ".join(text.split()) or type(exc).__name__)[:300]


def scrub(text: str) -> str:
    """Replace any secret-looking environment value that appears in `text`."""
    for name, value in os.environ.items():
        if len(value) >= 8 and SECRET_NAME.search(name) and value in text:
            text = text.replace(value, "***")
    return text


def to_cache(reply: Reply) -> dict[str, Any]:
    return {"text": reply.text, "calls": [[c.id, c.tool, c.args] for c in reply.calls],
            "usage": {"input_tokens": reply.usage.input_tokens,
                      "cached_input_tokens": reply.usage.cached_input_tokens,
                      "output_tokens": reply.usage.output_tokens, "cost_usd": reply.usage.cost_usd},
            "model": reply.model, "finish": reply.finish}


def from_cache(value: dict[str, Any] | None) -> Reply | None:
    """A cached answer; None when there is none or its row is not one (a damaged cache asks again)."""
    if value is None:
        return None
    try:
        return Reply(text=value["text"], calls=tuple(Call(i, t, a) for i, t, a in value["calls"]),
                     usage=Usage(**value["usage"]), model=value["model"], finish=value["finish"], cached=True)
    except (KeyError, TypeError, ValueError):
        return None
