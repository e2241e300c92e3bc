"""`exec`: a strategy that runs as any program, in any language, speaking the external protocol.

The bench starts the configured command once per cell and talks to it in JSON Lines
(protocol.py; docs/protocol.md). To stay cheap per request, the
recorded messages go to the process in one batch with the next `prepare` (each message
exactly once), and the process answers with the context as a delta: how many messages of its
previous context stay, then references to known ids and the messages it wrote. Its writer
calls go through the cell's writer endpoint (bench/harness/endpoint.py), so they are logged, cached,
counted and priced like a Python strategy's.

Anything the process gets wrong (an unknown id, an untagged message, a line that is not JSON,
no reply in time, exiting) fails the cell with one line naming the request.
"""
from __future__ import annotations

import asyncio
import shlex
import shutil
from pathlib import Path
from typing import Any

from bench.harness.endpoint import WriterEndpoint
from bench.harness.messages import Message
from bench.env import secret_name
from bench.harness.strategy import Compaction, Session, Strategy
from bench.tokens import PER_MESSAGE

from bench.strategies.exec import protocol as P
from bench.strategies.exec.process import Child, environment

START = 30.0        # seconds the first reply (hello) may take at least, whatever `timeout` says


class Exec(Strategy):
    def __init__(self, command: list[str] | str | None = None, timeout: float = 30.0, calls_writer: bool = True,
                 env: dict[str, Any] | None = None, cwd: str | None = None):
        argv = shlex.split(command) if isinstance(command, str) else [str(a) for a in command or ()]
        if not argv:
            raise ValueError("command is not set: give the program to run, e.g. "
                             "strategy.exec.command=[node,compactor.js]")
        if shutil.which(argv[0]) is None and not Path(argv[0]).is_file():
            raise ValueError(f"command: {argv[0]!r} is not a program on PATH or a file")
        if any("\0" in a for a in argv):
            raise ValueError("command: an argument holds a NUL character, which no program can be given")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < 1e6:
            raise ValueError(f"timeout must be a number of seconds above 0 (and below 1e6), got {timeout!r}")
        env = dict(env or {})
        secret = sorted(k for k in env if secret_name(k, loose=True))
        if secret:
            raise ValueError(f"env: {', '.join(secret)}: secrets come from the environment, never from the config "
                             "(and the process reaches models through the writer endpoint)")
        bad = sorted(str(k) for k, v in env.items() if not str(k) or any(c in str(k) for c in "=\0") or "\0" in str(v))
        if bad:
            raise ValueError(f"env: {bad[0]!r}: a variable's name must be non-empty without '=' or NUL, its value "
                             f"without NUL")
        if cwd is not None and not Path(str(cwd)).is_dir():
            raise ValueError(f"cwd: {cwd!r} is not a folder")
        self.argv, self.timeout, self.env, self.cwd = argv, float(timeout), {k: str(v) for k, v in env.items()}, cwd
        self.calls_writer = bool(calls_writer)
        # how error lines name it: the program and its script, without their folders
        self.program = " ".join(Path(a).name for a in argv[:2])

    def begin(self, session: Session) -> None:
        super().begin(session)
        self.known: dict[str, Message] = {"system": session.system}   # id -> message, for references
        self.pending: list[Message] = []       # recorded since the last exchange, sent with the next one
        self.appended = 0                      # of those, how many `wake_above` already put in the context
        self.wake: int | None = None           # the process's `wake_above`: no exchange while requests stay within it
        self.served = session.size([])         # tokens of the request as last served (system prompt included)
        self.requests = 0
        self.child: Child | None = None
        self.endpoint: WriterEndpoint | None = None
        self.broken = False                    # it broke the protocol: no goodbye, it is killed at once

    def add(self, msg: Message) -> None:
        self.pending.append(msg)
        self.known[msg.id] = msg

    async def _start(self) -> Child:
        self.endpoint = WriterEndpoint(self.session.writer, self.session.tok, asyncio.get_running_loop()).start()
        self.endpoint.know([self.session.system])
        env = environment(self.env, self.endpoint.url, lambda k: secret_name(k, loose=True))
        self.child = child = Child(self.argv, env, self.cwd, self.name or "exec", self.timeout)
        await child.start()
        await child.send(P.begin(self.session))
        # its first reply waits for a program start too, which a loaded machine can make slow
        P.hello(P.decode(await child.receive(max(self.timeout, START), self.endpoint.busy)))
        return child

    async def prepare(self) -> Compaction | None:
        self.requests += 1
        if self.wake is not None:
            fresh = self.pending[self.appended:]
            size = self.served + sum(m.tokens + PER_MESSAGE for m in fresh)
            if size <= self.wake:      # the process asked not to be woken for this: append, as it would
                self.messages.extend(fresh)
                self.appended, self.served = len(self.pending), size
                return None
        after = self.pending[-1].id if self.pending else None    # the error line names it (said only then)
        try:
            return await self._exchange()
        except P.ExternalError as exc:
            self.broken = True
            where = f"request {self.requests}" + (f" (after message {after})" if after is not None else "")
            raise P.ExternalError(f"external strategy {self.program}: {where}: {exc}") from None

    async def _exchange(self) -> Compaction | None:
        child = self.child or await self._start()
        endpoint = self.endpoint
        assert endpoint is not None
        added, appended = self.pending, self.appended
        self.pending, self.appended = [], 0
        endpoint.know(added)
        before = self.served + sum(m.tokens + PER_MESSAGE for m in added[appended:])
        calls = endpoint.calls
        endpoint.open = True
        try:
            await child.send_raw(P.prepare(self.requests, appended, added))
            while True:
                reply = P.decode(await child.receive(self.timeout, endpoint.busy))
                if reply["type"] == "count":
                    await child.send(self.count(reply))
                    continue
                if reply["type"] != "context":
                    raise P.ExternalError(f"expected a \"context\" (or \"count\") reply, got type {reply['type']!r}")
                break
        finally:
            endpoint.open = False
        old = len(self.messages)
        self.messages = self.resolve(reply)
        if reply.get("keep") == old:      # the common case, only appended to: sized by what it added
            self.served += sum(m.tokens + PER_MESSAGE for m in self.messages[old:])
        else:
            self.served = self.size()
        self.wake = P.wake_above(reply)
        if reply.get("compaction") is None:
            if endpoint.calls > calls:
                raise P.ExternalError(f"it called the writer {endpoint.calls - calls} time(s) but its reply has no "
                                      f"\"compaction\" report (a failed attempt is reported with ok: false)")
            return None
        return P.compaction(reply["compaction"], before, self.size(), "its compaction report")

    def resolve(self, reply: dict[str, Any]) -> list[Message]:
        """The new context: the first `keep` messages of the previous one, then `messages` (ids or new ones)."""
        keep, items = reply.get("keep", 0), reply.get("messages", [])
        if isinstance(keep, bool) or not isinstance(keep, int) or not 0 <= keep <= len(self.messages):
            raise P.ExternalError(f"\"keep\" must be a whole number from 0 to {len(self.messages)} (the messages of "
                                  f"its previous context), got {keep!r}")
        if not isinstance(items, list):
            raise P.ExternalError("\"messages\" must be a list of message ids and written messages")
        # kept whole: appended to in place (a request that only appends costs what it adds, not a copy of the
        # context; a reply that breaks the protocol fails the cell, so a half-appended list is never read)
        out = self.messages if keep == len(self.messages) else self.messages[:keep]
        for i, item in enumerate(items):
            if isinstance(item, str):
                m = self.known.get(item)
                if m is None or m.id == "system":
                    why = "the system prompt is always sent first; do not list it" if m else "no message has that id"
                    raise P.ExternalError(f"messages[{i}] names unknown message id {item!r} ({why})")
            elif isinstance(item, dict):
                m = P.written(self.session.tok, item, f"messages[{i}]")
                old = self.known.get(m.id)
                if old is not None and old.hash != m.hash:
                    raise P.ExternalError(f"messages[{i}]: id {m.id!r} already names another message; give what "
                                          f"it wrote a new id")
                self.known[m.id] = m
                self.endpoint.know([m])
            else:
                raise P.ExternalError(f"messages[{i}] is {type(item).__name__}: expected a message id or an object")
            out.append(m)
        return out

    def count(self, req: dict[str, Any]) -> dict[str, Any]:
        """Token counts by the bench's own tokenizer (a stdlib-only process has none); with `limit`,
        also each text cut to that many tokens."""
        texts, limit = req.get("texts"), req.get("limit")
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise P.ExternalError("\"count\": texts must be a list of strings")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise P.ExternalError(f"\"count\": limit must be a whole number >= 0, got {limit!r}")
        tok = self.session.tok
        out: dict[str, Any] = {"type": "counted", "tokens": [tok.count(t) for t in texts]}
        if limit is not None:
            out["texts"] = [tok.truncate(t, limit) for t in texts]
        return out

    async def end(self) -> None:
        child, endpoint = getattr(self, "child", None), getattr(self, "endpoint", None)
        self.child = self.endpoint = None
        if child is not None:
            await child.close(None if getattr(self, "broken", False) else {"type": "end"})
        if endpoint is not None:
            endpoint.stop()
