"""A loopback OpenAI-compatible server: real HTTP for tests, answered by the offline model.

Tests drive the litellm path end to end against it (no patching), so what
they check is what happens with vLLM, llama.cpp or a provider: retries,
timeouts, usage parsing, the response cache. Wire messages are turned back
into `Message`s and answered by `OfflineModel`, taught every configured strategy's offline players
and the probe judge's (or the `players` given), so those protocols work over HTTP too. `vary=PROFILE` makes it answer with seeded variation (the
offline writer under a stress profile, seeded by the request's `seed`), so repeats of a run over
HTTP differ as a sampling model's do, and each repeat is reproducible. Faults are queued on demand::

    with LoopbackServer() as srv:
        srv.fail("429", times=2, retry_after=0.1)
        ... writer.api_base=srv.url ...
        assert srv.calls == 3

A provider's behaviour under load is played too: `latency` seconds before every answer, and
`storm(retry_after=7, lasting=1.0)`, a rate-limit episode: every request arriving within `lasting`
seconds of the next one is answered 429 naming the wait (Retry-After, or OpenAI's or Anthropic's reset
headers). `log` keeps each request's arrival, end (server clock, time.monotonic) and status, so a test
asserts on when requests really arrived; `mean_in_flight()` is the mean number being handled over the
busy span.

It listens on 127.0.0.1 on an ephemeral port, in a daemon thread, refuses
bodies over `max_body` bytes, and shuts itself down after `lifetime` seconds.
"""
from __future__ import annotations

import asyncio
import importlib
import json
import threading
import time
from collections import deque
from datetime import datetime, timezone
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Sequence

import yaml

from bench.harness.model import ModelConfig
from bench.models.offline import OfflineModel, Player
from bench.scoring.probes import offline_judge
from bench.scoring.actor import offline_actor
from bench.tokens import Tokenizer, tokenizer
from bench.harness.wire import completion, from_wire, reply_limit, usage_of
from bench.parsing import too_deep
from bench import HOME
from bench.models.offline.stress import PROFILES

# 429 with Retry-After; 500; 400 (never worth retrying); an answer after `delay` s;
# a body that is not JSON; `choices: []`; a tool call whose arguments are not JSON.
# "blank": a well-formed answer with no text and no tool calls (a model that said nothing).
FAULTS = ("429", "500", "400", "slow", "malformed", "empty", "bad_tool_json", "blank")
STORM_HEADERS = ("retry-after", "openai", "anthropic")


@dataclass
class Fault:
    kind: str
    retry_after: float = 0.1
    delay: float = 2.0


class LoopbackServer:
    def __init__(self, *, cached_tokens: int = 0, lifetime: float = 300.0, max_body: int = 32 << 20,
                 tok: Tokenizer | None = None, vary: str | None = None, players: Sequence[Player] | None = None,
                 latency: float = 0.0):
        self.tok = tok or tokenizer()
        self.players = tuple(configured_players() if players is None else players)
        self.model = OfflineModel(tok=self.tok, players=self.players)
        # vary=PROFILE: answer as the offline writer under that stress profile (offline:PROFILE), seeded by
        # the request's `seed`, so repeats over HTTP differ from each other and each is reproducible
        self.vary = vary
        if vary is not None:

            if vary not in PROFILES:
                raise ValueError(f"unknown variation profile {vary!r}; one of {', '.join(PROFILES)}")
        self.cached_tokens = cached_tokens   # reported as prompt_tokens_details.cached_tokens (capped)
        self.latency = latency               # seconds before every answer, as a provider takes
        self.log: list[dict[str, Any]] = []  # {arrived, ended, status} of every POST, server clock
        self._storm: dict[str, Any] | None = None
        self.lifetime, self.max_body = lifetime, max_body
        self.calls = 0                       # POSTs to /v1/chat/completions, faults included
        self.faults_served = 0
        self.in_flight = 0
        self.max_in_flight = 0               # most requests being handled at once
        self.auth_seen = 0                   # requests that carried an Authorization header (never kept)
        self.usage: list[dict[str, Any]] = []   # the usage block of every answer it gave
        self.bodies: list[dict[str, Any]] = []  # the request bodies (headers are never kept)
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._timer: threading.Timer | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def fail(self, kind: str, times: int = 1, *, retry_after: float = 0.1, delay: float = 2.0) -> None:
        """Answer the next `times` requests with fault `kind` instead of a completion."""
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; one of {', '.join(FAULTS)}")
        with self._lock:
            self._faults.extend(Fault(kind, retry_after, delay) for _ in range(times))

    def storm(self, retry_after: float = 7.0, lasting: float = 1.0, header: str = "retry-after",
              after: int = 0) -> None:
        """A rate-limit episode: the first request after `after` more have arrived, and every one arriving
        within `lasting` s of it, gets 429 naming `retry_after` s in `header`: retry-after, openai
        (x-ratelimit-reset-requests) or anthropic (anthropic-ratelimit-requests-reset, a time)."""
        if header not in STORM_HEADERS:
            raise ValueError(f"unknown header style {header!r}; one of {', '.join(STORM_HEADERS)}")
        with self._lock:
            self._storm = {"retry_after": retry_after, "lasting": lasting, "header": header, "from": None,
                           "after": len(self.log) + after}

    def _stormy(self, arrived: float) -> dict[str, str] | None:
        """The 429's headers when a storm covers a request arriving now; None otherwise."""
        with self._lock:
            storm = self._storm
            if storm is None:
                return None
            if storm["from"] is None and len(self.log) <= storm["after"]:
                return None
            if storm["from"] is None:
                storm["from"] = arrived
            elif arrived > storm["from"] + storm["lasting"]:
                self._storm = None
                return None
        wait = storm["retry_after"]
        if storm["header"] == "openai":
            return {"x-ratelimit-reset-requests": f"{wait:g}s", "x-ratelimit-remaining-requests": "0"}
        if storm["header"] == "anthropic":
            at = datetime.fromtimestamp(time.time() + wait, timezone.utc).isoformat().replace("+00:00", "Z")
            return {"anthropic-ratelimit-requests-reset": at, "anthropic-ratelimit-requests-remaining": "0"}
        return {"Retry-After": f"{wait:g}"}

    def mean_in_flight(self) -> float:
        """Requests being handled, on average, from the first arrival to the last answer."""
        with self._lock:
            spans = [(r["arrived"], r["ended"]) for r in self.log if r.get("ended") is not None]
        if not spans:
            return 0.0
        busy = max(e for _, e in spans) - min(a for a, _ in spans)
        return sum(e - a for a, e in spans) / busy if busy > 0 else float(len(spans))

    def start(self) -> "LoopbackServer":
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                         name="loopback-llm", daemon=True).start()
        self._timer = threading.Timer(self.lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        self._stop.set()   # wakes handlers sleeping in a "slow" fault
        if self._timer is not None:
            self._timer.cancel()
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()

    def __enter__(self) -> "LoopbackServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ------------------------------------------------------------ answering

    def _next_fault(self) -> Fault | None:
        with self._lock:
            self.calls += 1
            fault = self._faults.popleft() if self._faults else None
            self.faults_served += fault is not None
            return fault

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """A chat.completion for `body`, from the offline model."""
        messages = from_wire(body.get("messages") or [], self.tok)
        model = self.model
        if self.vary is not None:
            seed = body.get("seed")
            model = OfflineModel(ModelConfig(model=f"offline:{self.vary}", seed=seed if isinstance(seed, int) else 0),
                                 tok=self.tok, players=self.players)
        reply = asyncio.run(model.chat(messages, tools=body.get("tools"), max_tokens=reply_limit(body)))
        usage = usage_of(reply, self.cached_tokens)
        with self._lock:
            self.usage.append(usage)
            n = len(self.usage)
        return completion(reply, model=body.get("model", "loopback"), n=n, usage=usage)


def _handler(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # as a provider's server does (nginx, uvicorn): without it an answer's headers and body are two small
        # writes, and Nagle holds the body until the client's delayed ACK, about 20-40 ms after `ended`
        disable_nagle_algorithm = True

        def log_message(self, *args: Any) -> None:  # quiet: tests read counters, not logs
            pass

        def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
            entry = getattr(self, "_entry", None)
            if entry is not None:
                entry["status"] = status
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)

        def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
            self._send(status, json.dumps(data).encode(), headers)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [{"id": "loopback", "object": "model"}]})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            self._entry = None
            given = (self.headers.get("Content-Length") or "0").strip()
            if not given.isdigit() or len(given) > 12:   # "abc", "-1": not a length this server reads
                self.close_connection = True
                return self._json(400, {"error": {"message": f"Content-Length {given[:40]!r} is not a number"}})
            length = int(given)
            if length > server.max_body:
                self.close_connection = True
                return self._json(413, {"error": {"message": "request body too large"}})
            raw = self.rfile.read(length)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                return self._json(404, {"error": {"message": f"no route {self.path}"}})
            try:
                body = json.loads(raw)
            except (ValueError, RecursionError):
                return self._json(400, {"error": {"message": "request body is not JSON"}})
            if not isinstance(body, dict) or too_deep(body):
                return self._json(400, {"error": {"message": "request body is not a JSON object of chat messages"}})
            entry: dict[str, Any] = {"arrived": time.monotonic(), "ended": None, "status": 200}
            with server._lock:
                server.bodies.append(body)
                server.log.append(entry)
                server.auth_seen += bool(self.headers.get("Authorization"))
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            self._entry = entry
            try:
                limited = server._stormy(entry["arrived"])
                if limited is not None:
                    with server._lock:
                        server.calls += 1
                        server.faults_served += 1
                    self._json(429, {"error": {"message": "rate limited", "type": "rate_limit_error"}}, limited)
                else:
                    self._complete(body)
            finally:
                with server._lock:
                    server.in_flight -= 1
                    entry["ended"] = time.monotonic()

        def _complete(self, body: dict[str, Any]) -> None:
            fault = server._next_fault()
            if fault is not None and fault.kind != "slow":
                return self._fault(fault)
            if fault is not None and server._stop.wait(fault.delay):
                return
            if server.latency and server._stop.wait(server.latency):
                return
            try:
                data = server.answer(body)
            except Exception as exc:   # a player's bug shows up as a server error, as with a real server
                return self._json(500, {"error": {"message": f"{type(exc).__name__}: {exc}"}})
            self._json(200, data)

        def _fault(self, fault: Fault) -> None:
            if fault.kind == "429":
                self._json(429, {"error": {"message": "rate limited", "type": "rate_limit_error"}},
                           {"Retry-After": f"{fault.retry_after:g}"})
            elif fault.kind == "500":
                self._json(500, {"error": {"message": "internal error", "type": "server_error"}})
            elif fault.kind == "400":
                self._json(400, {"error": {"message": "bad request", "type": "invalid_request_error"}})
            elif fault.kind == "malformed":
                self._send(200, b'{"id": "chatcmpl-broken", "choices": [{"index": 0, "mess')
            elif fault.kind == "empty":
                self._json(200, {"id": "chatcmpl-empty", "object": "chat.completion", "created": 0,
                                 "model": "loopback", "choices": [],
                                 "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}})
            elif fault.kind == "blank":
                self._json(200, {"id": "chatcmpl-blank", "object": "chat.completion", "created": 0,
                                 "model": "loopback", "usage": {"prompt_tokens": 1, "completion_tokens": 0,
                                                                "total_tokens": 1},
                                 "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": ""}}]})
            elif fault.kind == "bad_tool_json":
                call = {"id": "call_bad", "type": "function", "function": {"name": "x", "arguments": "{oops"}}
                self._json(200, {"id": "chatcmpl-bad", "object": "chat.completion", "created": 0,
                                 "model": "loopback", "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                                                "total_tokens": 2},
                                 "choices": [{"index": 0, "finish_reason": "tool_calls",
                                              "message": {"role": "assistant", "content": None,
                                                          "tool_calls": [call]}}]})

    return Handler


def configured_players() -> list[Player]:
    """The offline players of every configured strategy (conf/strategy/*.yaml `_target_`) and the probe
    judge and the next-action actor: what an in-process run teaches the offline writer, judge and agent, so the server answers alike."""
    players: list[Player] = [offline_judge, offline_actor]
    for path in sorted((HOME / "conf" / "strategy").glob("*.yaml")):
        target = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("_target_", "")
        if "." in target:
            module, name = target.rsplit(".", 1)
            cls = getattr(importlib.import_module(module), name, None)
            players += [p for p in getattr(cls, "offline_players", ()) if p not in players]
    return players


def main(argv: list[str] | None = None) -> int:
    """`python -m bench.testing [--fail KIND:N ...] [--lifetime S]`: serve until Ctrl-C or SIGTERM,
    then print what was served (try a run against it by hand)."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m bench.testing", description=main.__doc__)
    p.add_argument("--fail", action="append", default=[], metavar="KIND:N", help=f"queue N faults; {FAULTS}")
    p.add_argument("--retry-after", type=float, default=0.1)
    p.add_argument("--cached-tokens", type=int, default=0)
    p.add_argument("--latency", type=float, default=0.0, help="seconds before every answer")
    p.add_argument("--lifetime", type=float, default=3600.0)
    p.add_argument("--vary", metavar="PROFILE", default=None,
                   help="answer with seeded variation: the offline writer under this stress profile (e.g. "
                        "realistic), seeded by each request's seed, so repeats differ run to run")
    args = p.parse_args(argv)
    import signal

    signal.signal(signal.SIGTERM, lambda *_: server._stop.set())
    server = LoopbackServer(cached_tokens=args.cached_tokens, lifetime=args.lifetime, vary=args.vary,
                            latency=args.latency).start()
    for spec in args.fail:
        kind, _, n = spec.partition(":")
        server.fail(kind, int(n or 1), retry_after=args.retry_after)
    print(server.url, flush=True)
    try:
        server._stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        print(f"calls={server.calls} faults={server.faults_served} answers={len(server.usage)} "
              f"prompt_tokens={sum(u['prompt_tokens'] for u in server.usage)} "
              f"completion_tokens={sum(u['completion_tokens'] for u in server.usage)} "
              f"max_in_flight={server.max_in_flight} mean_in_flight={server.mean_in_flight():.2f}", flush=True)
        server.stop()
    return 0
