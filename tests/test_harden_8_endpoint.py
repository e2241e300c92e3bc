"""Issue 26, the writer endpoint: hostile HTTP requests to the endpoint an external strategy calls. Each
gets an HTTP error naming what is wrong (never a traceback, never a dropped connection without an
answer), a length the server cannot read is refused before any body is read (`Content-Length: -1` once
read a 300 MB body into memory), and the endpoint answers a good request afterwards."""
from __future__ import annotations

import asyncio
import json
import socket
import threading

import pytest

from bench.harness.endpoint import MAX_BODY, WriterEndpoint
from bench.harness.model import Model, Reply, Usage
from test_strategy_common import TOK


class Echo(Model):
    name = "echo"

    async def chat(self, messages, *, tools=None, max_tokens=None, purpose=""):
        return Reply(text=f"{len(messages)} message(s), limit {max_tokens}", usage=Usage(input_tokens=5, output_tokens=3),
                     model="echo")


@pytest.fixture(scope="module")
def endpoint():
    """An open endpoint whose event loop runs in a thread of its own."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    ep = WriterEndpoint(Echo(), TOK, loop).start()
    ep.open = True
    host, port = ep._httpd.server_address
    yield ep, (host, port)
    ep.stop()
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


def exchange(addr, head: bytes, body: bytes = b"", *, half_close: bool = False, timeout: float = 20) -> tuple[int, dict]:
    """Send raw bytes; (status, JSON body) of the answer (status 0: the connection closed unanswered)."""
    with socket.create_connection(addr, timeout=timeout) as s:
        s.sendall(head + body)
        if half_close:
            s.shutdown(socket.SHUT_WR)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                return 0, {}
            data += chunk
        header, rest = data.split(b"\r\n\r\n", 1)
        lines = header.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = next((int(ln.split(":", 1)[1]) for ln in lines if ln.lower().startswith("content-length:")), None)
        while length is not None and len(rest) < length:
            chunk = s.recv(65536)
            if not chunk:
                break
            rest += chunk
        return status, (json.loads(rest) if length else {})


def post(addr, body: bytes, length: str | None = None, extra: str = "", **kw) -> tuple[int, dict]:
    n = str(len(body)) if length is None else length
    head = (f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"{'Content-Length: ' + n + chr(13) + chr(10) if n != 'none' else ''}{extra}\r\n").encode()
    return exchange(addr, head, body, **kw)


GOOD = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode()


def deep(n: int) -> bytes:
    return b'{"messages": [{"role": "user", "content": "hi"}], "tools": ' + b"[" * n + b"]" * n + b"}"


CASES = {   # name: (body, Content-Length header (None: the body's), extra headers, status, what the error says)
    "length-abc": (GOOD, "abc", "", 400, "is not a number of bytes"),
    "length-minus-one": (GOOD * 100, "-1", "", 400, "is not a number of bytes"),
    "length-plus": (GOOD, f"+{len(GOOD)}", "", 400, "is not a number of bytes"),
    "length-float": (GOOD, f"{len(GOOD)}.0", "", 400, "is not a number of bytes"),
    "length-hex": (GOOD, "0x10", "", 400, "is not a number of bytes"),
    "length-20-digits": (GOOD, "9" * 20, "", 400, "is not a number of bytes"),
    "length-over-limit": (b"", str(MAX_BODY + 1), "", 413, "too large"),
    "chunked": (b"5\r\nhello\r\n0\r\n\r\n", "none", "Transfer-Encoding: chunked\r\n", 411, "Content-Length"),
    "nested-100000-deep": (deep(100_000), None, "", 400, "nested more than 64"),
    "nested-500-deep": (deep(500), None, "", 400, "nested more than 64"),
    "nested-80-deep": (deep(80), None, "", 400, "nested more than 64"),
    "not-json": (b"{not json", None, "", 400, "not JSON"),
    "not-utf8": (b'{"messages": "\xff\xfe"}', None, "", 400, "not JSON"),
    "number-5000-digits": (b'{"messages": [], "max_tokens": ' + b"9" * 5000 + b"}", None, "", 400, "not JSON"),
    "a-list": (b"[1, 2]", None, "", 400, "not a JSON object"),
    "messages-a-string": (b'{"messages": "hi"}', None, "", 400, "messages"),
    "message-a-number": (b'{"messages": [7]}', None, "", 400, "not an object"),
    "tool-call-a-string": (json.dumps({"messages": [{"role": "assistant", "tool_calls": ["x"]}]}).encode(), None, "",
                           400, "not chat messages"),
    "tool-call-no-function": (json.dumps({"messages": [{"role": "assistant", "tool_calls": [{"id": "a"}]}]}).encode(),
                              None, "", 400, "not chat messages"),
    "tools-an-object": (json.dumps({"messages": [{"role": "user", "content": "x"}], "tools": {}}).encode(), None, "",
                        400, "tools"),
    "empty-body": (b"", "0", "", 400, "not JSON"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_hostile_request_is_an_http_error_naming_the_problem(endpoint, capfd, name):
    ep, addr = endpoint
    body, length, extra, status, says = CASES[name]
    got, data = post(addr, body, length, extra)
    assert got == status, (name, got, data)
    assert says in data["error"]["message"], (name, data)
    assert post(addr, GOOD)[0] == 200           # and it still serves
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e308", "-5", "true", '"99"'])
def test_an_odd_max_tokens_asks_for_no_limit(endpoint, value):
    _, addr = endpoint
    status, data = post(addr, b'{"messages": [{"role": "user", "content": "hi"}], "max_tokens": ' + value.encode() + b"}")
    assert status == 200 and data["choices"][0]["message"]["content"].endswith("limit None"), data


def test_a_body_cut_short_is_refused_and_the_connection_closed(endpoint, capfd):
    _, addr = endpoint
    status, data = post(addr, GOOD[:10], str(len(GOOD)), half_close=True)
    assert status == 400 and "ended after 10 of" in data["error"]["message"]
    assert "Traceback" not in capfd.readouterr().err


def test_a_client_that_leaves_mid_request_prints_nothing(endpoint, capfd):
    _, addr = endpoint
    for head in (b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 100\r\n\r\n{", b"GARBAGE\r\n\r\n", b"\x16\x03\x01"):
        with socket.create_connection(addr, timeout=5) as s:
            s.sendall(head)
    assert post(addr, GOOD)[0] == 200
    assert capfd.readouterr().err == ""


def test_minus_one_never_reads_the_body_into_memory(endpoint):
    """The body behind `Content-Length: -1` is never read: the answer comes before the client has sent it."""
    _, addr = endpoint
    with socket.create_connection(addr, timeout=20) as s:
        s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: -1\r\n\r\n")
        answer = s.recv(4096)            # before any of the body is sent
        try:
            s.sendall(b"x" * (1 << 20))  # the first MiB of "300 MB": the server has answered and may have closed
        except (BrokenPipeError, ConnectionResetError):
            pass
    assert answer.startswith(b"HTTP/1.1 400")


def test_other_methods_and_routes_are_refused(endpoint):
    _, addr = endpoint
    assert exchange(addr, b"GET /v1/nowhere HTTP/1.1\r\nHost: x\r\n\r\n")[0] == 404
    assert exchange(addr, b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n")[0] == 200
    status, data = exchange(addr, b"POST /v1/other HTTP/1.1\r\nContent-Length: 2\r\n\r\n", b"{}")
    assert status == 404 and "no route" in data["error"]["message"]
    assert exchange(addr, b"DELETE /v1/chat/completions HTTP/1.1\r\nHost: x\r\n\r\n")[0] == 501
