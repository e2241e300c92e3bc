"""The writer endpoint: the cell's writer model served as OpenAI chat completions on 127.0.0.1.

A strategy that runs outside this process (strategies/exec) keeps its own LLM client; only
the base URL changes. Every call through the endpoint is a call of the cell's logged writer
(`Session.writer`), so it is logged as a compaction request, cached, counted and priced
exactly like a Python strategy's `await session.writer.chat(...)`.

HTTP is served by a stdlib server in a daemon thread; the call itself runs on the replay's
event loop (`run_coroutine_threadsafe`), which is free because the replay is awaiting the
external process's answer while the process waits on its HTTP call. Calls are served only
while `open` (a strategy request is under way), so a call can never land in the log between
two requests. Wire messages the cell already holds (the system prompt, recorded messages,
messages the strategy wrote) are recognised by content and keep their ids and tags; other
ones are text the strategy wrote for this call (its instruction) and are tagged ``instruction``,
as the built-in strategies tag theirs.
"""
from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import TimeoutError as FutureTimeout
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bench.errors import ModelError
from bench.harness.messages import Message, remake
from bench.harness.model import Model
from bench.parsing import MAX_DEPTH, too_deep
from bench.tokens import Tokenizer
from bench.harness.wire import completion, error_body, from_wire, reply_limit, stream_chunks

MAX_BODY = 64 << 20
READ_TIMEOUT = 60.0   # seconds a client may take to send a request it has begun (then its connection is closed)
REQUEST_TAG = "instruction"   # what the built-in strategies tag the text they write for a writer call


class WriterEndpoint:
    def __init__(self, writer: Model, tok: Tokenizer, loop: asyncio.AbstractEventLoop, *, wait: float = 3600.0):
        self.writer, self.tok, self.loop, self.wait = writer, tok, loop, wait
        self.known: dict[str, Message] = {}     # hash -> the cell's own message with that content
        self.loose: dict[tuple, Message] = {}   # the same for messages with calls, minus the arguments' JSON
        self._unindexed: list[Message] = []     # known, not yet in `known` and `loose` (in the order given)
        self.open = False                       # calls are served only while a strategy request is under way
        self.calls = 0
        self.in_flight = 0
        self.busy_s = 0.0                       # seconds spent answering calls (not the process's own time)
        self._since = 0.0
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._httpd is not None, "endpoint not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def know(self, messages: list[Message]) -> None:
        """Messages the cell holds, recognised on the wire by content. Indexed when a call first needs
        them: a strategy that never calls the writer (or not on this request) pays a list append."""
        self._unindexed.extend(messages)

    def _index(self) -> None:
        for m in self._unindexed:
            self.known.setdefault(m.hash, m)
            if m.calls:
                self.loose.setdefault(_loose(m), m)
        self._unindexed = []

    def busy(self) -> float:
        """Seconds spent in writer calls so far, the one under way included."""
        with self._lock:
            return self.busy_s + (time.perf_counter() - self._since if self.in_flight else 0.0)

    def start(self) -> "WriterEndpoint":
        self._httpd = _Server(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                         name="writer-endpoint", daemon=True).start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()

    def _recognise(self, msg: Message) -> Message:
        if self._unindexed:
            self._index()
        own = self.known.get(msg.hash)
        if own is None and msg.calls:   # arguments re-serialised by another language: 1 may come back as 1.0
            own = self.loose.get(_loose(msg))
            if own is not None and [c.args for c in own.calls] != [c.args for c in msg.calls]:
                own = None
        if own is not None:
            return own
        return remake(self.tok, msg, id=f"request-{self.calls}-{msg.id}", tag=REQUEST_TAG)

    async def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """(HTTP status, body) for one chat-completions request, from the cell's writer."""
        if not self.open:
            return 409, error_body("no strategy request is under way: the writer answers only between the bench's "
                                   "`prepare` and the process's reply")
        raw = body.get("messages")
        if not isinstance(raw, list) or not raw:
            return 400, error_body("messages: expected a non-empty list of chat messages")
        tools = body.get("tools")
        if tools is not None and not isinstance(tools, list):
            return 400, error_body("tools: expected a list of tool definitions")
        self.calls += 1
        try:
            messages = from_wire(raw, self.tok, self._recognise)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            return 400, error_body(f"messages: not chat messages: {type(exc).__name__}: {exc}")
        with self._lock:
            self.in_flight += 1
            if self.in_flight == 1:
                self._since = time.perf_counter()
        try:
            reply = await self.writer.chat(messages, tools=tools or None, max_tokens=reply_limit(body),
                                           purpose=str(body.get("purpose") or "external"))
        except ModelError as exc:
            return 502, error_body(str(exc), "server_error")   # after its retries: the writer failed
        finally:
            with self._lock:
                self.in_flight -= 1
                if self.in_flight == 0:
                    self.busy_s += time.perf_counter() - self._since
        return 200, completion(reply, model=reply.model or self.writer.name, n=self.calls)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that left mid-request or mid-answer, or sent bytes too slowly: its connection is
        closed; nothing is printed (socketserver's default is a traceback on stderr)."""


def _loose(m: Message) -> tuple:
    return (m.role, m.text, tuple((c.id, c.tool) for c in m.calls))


def _handler(endpoint: WriterEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = READ_TIMEOUT        # a socket timeout: a body promised and never sent cannot hold a thread

        def log_message(self, *args: Any) -> None:   # the calls are logged as compaction requests instead
            pass

        def _json(self, status: int, data: Any) -> None:
            payload = json.dumps(data, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [{"id": endpoint.writer.name, "object": "model"}]})
            else:
                self._json(404, error_body(f"no route {self.path}"))

        def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
            """http.server's own refusals (a malformed request line, another method, headers too long)
            as JSON errors too, like every other answer of the endpoint."""
            self.close_connection = True
            try:
                self._json(code, error_body(message or explain or f"HTTP {code}"))
            except OSError:
                pass

        def _refuse(self, status: int, why: str) -> None:
            """An answer after which the connection is closed (its body may not have been read)."""
            self.close_connection = True
            self._json(status, error_body(why))

        def do_POST(self) -> None:
            if self.headers.get("Transfer-Encoding"):
                return self._refuse(411, "send the body with a Content-Length (chunked bodies are not read)")
            given = (self.headers.get("Content-Length") or "0").strip()
            if not given.isdigit() or len(given) > 12:   # "abc", "-1", "+5", " ": no length this server reads
                return self._refuse(400, f"Content-Length {given[:40]!r} is not a number of bytes")
            length = int(given)
            if length > MAX_BODY:
                return self._refuse(413, f"request body too large ({length:,} bytes; at most {MAX_BODY:,})")
            raw = self.rfile.read(length)
            if len(raw) < length:
                return self._refuse(400, f"the body ended after {len(raw):,} of {length:,} bytes")
            if not self.path.rstrip("/").endswith("/chat/completions"):
                return self._json(404, error_body(f"no route {self.path}: the writer endpoint serves "
                                                  "POST /v1/chat/completions"))
            try:
                body = json.loads(raw)
            except RecursionError:
                return self._json(400, error_body(f"request body is nested more than {MAX_DEPTH} levels deep"))
            except ValueError:     # not JSON, not UTF-8, a number of more than 4,300 digits
                return self._json(400, error_body("request body is not JSON"))
            if not isinstance(body, dict):
                return self._json(400, error_body("request body is not a JSON object"))
            if too_deep(body):
                return self._json(400, error_body(f"request body is nested more than {MAX_DEPTH} levels deep"))
            future = None
            try:
                future = asyncio.run_coroutine_threadsafe(endpoint.answer(body), endpoint.loop)
                status, data = future.result(endpoint.wait)
            except FutureTimeout:
                if future is not None:
                    future.cancel()
                status, data = 504, error_body("the writer did not answer in time", "server_error")
            except Exception as exc:   # a bug behind the endpoint is the caller's server error, as with a real server
                status, data = 500, error_body(f"{type(exc).__name__}: {exc}", "server_error")
            if status == 200 and body.get("stream"):
                options = body.get("stream_options")
                return self._stream(stream_chunks(data, isinstance(options, dict) and bool(options.get("include_usage"))))
            self._json(status, data)

        def _stream(self, chunks: list[dict[str, Any]]) -> None:
            """Server-sent events in HTTP/1.1 chunked framing, ended by ``data: [DONE]``. The answer is
            complete before the first byte: what is streamed is its framing, not its timing."""
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event in [*(json.dumps(c, ensure_ascii=False) for c in chunks), "[DONE]"]:
                data = f"data: {event}\n\n".encode()
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")

    return Handler


__all__ = ["WriterEndpoint"]
