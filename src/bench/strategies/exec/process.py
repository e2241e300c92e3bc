"""The strategy process: started once per cell, spoken to in JSON Lines over its stdin and stdout.

Its stderr is kept (the last few kilobytes, never written anywhere) so that a crash can be
explained in the cell's error line. Waiting for a reply counts only the process's own time:
seconds its writer calls spend in the bench's writer (which has its own timeout and retries)
are not held against it.

It can never hang the run: it starts in a process group of its own, and the whole group is
ended with the cell (and, should the bench exit mid-cell, when the bench exits), so a wrapper
(`sh -c ...`) and helpers it forked go with it. Nothing waits on its pipes without a deadline:
something it started may hold them open for ever, so once the process has exited (and what it
wrote has been read) the bench closes its ends, and a process that does not read what it is sent
fails the cell. None of this costs a request anything: the exit is a callback, not a poll.
"""
from __future__ import annotations

import asyncio
import atexit
import json
import os
import signal
from collections import deque
from typing import Any, Callable

from bench.strategies.exec.protocol import ExternalError, encode

LINE_LIMIT = 256 << 20       # one reply line may be this long (a context of many written messages)
STDERR_KEEP = 8192
GRACE = 2.0                  # seconds a process gets to exit after `end` before its group is killed
EXIT_WAIT = 5.0              # seconds an exit is waited for once its stdout is closed (a loaded machine is slow to say)
EXIT_READ = 0.2              # seconds after its exit until the pipes are closed (what it wrote is read first)

_GROUPS: set[int] = set()    # process groups of strategies under way, ended if the bench exits first
_HOOKED = False


def _end_groups() -> None:
    for pgid in list(_GROUPS):
        _kill_group(pgid)


def _kill_group(pgid: int) -> None:
    _GROUPS.discard(pgid)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's, plus: its stdout is cut into lines as it arrives (a reply wakes the one waiting for it
    directly, with no stream reader between), and once the process has exited, its stdout and stderr end
    (EXIT_READ later) even if something it started still holds them, so a wait for a reply sees the end."""

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop):
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future = loop.create_future()
        self.lines: deque[bytes] = deque()      # whole lines read, not yet taken
        self.part: list[bytes] = []             # the line under way, in pieces
        self.part_size = 0
        self.held = 0                            # bytes in `lines` and `part`
        self.over = False                        # a line longer than the limit: nothing more is read
        self.eof = False
        self.waiter: asyncio.Future | None = None
        self.paused = False

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd != 1:
            return super().pipe_data_received(fd, data)
        start, limit = 0, self._limit
        self.held += len(data)
        while (nl := data.find(b"\n", start)) >= 0:
            line = data[start:nl + 1]
            if self.part:
                line = b"".join((*self.part, line))
                self.part, self.part_size = [], 0
            if len(line) > limit + 1:
                self.over = True
                break
            self.lines.append(line)
            start = nl + 1
        else:
            if start < len(data):
                self.part.append(data[start:] if start else data)
                self.part_size += len(data) - start
                self.over = self.part_size > limit
        if (self.over or self.held > 2 * limit) and not self.paused:   # as a stream reader does: hold the sender
            self._pause(True)
        if self.lines or self.over:
            self._wake()

    def take(self) -> bytes | None:
        """The next whole line, None if none has come."""
        if not self.lines:
            return None
        line = self.lines.popleft()
        self.held -= len(line)
        if self.paused and not self.over and self.held <= self._limit:
            self._pause(False)
        return line

    def _pause(self, on: bool) -> None:
        pipe = self._transport and self._transport.get_pipe_transport(1)
        if pipe is not None and not pipe.is_closing():
            pipe.pause_reading() if on else pipe.resume_reading()
            self.paused = on

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    def pipe_connection_lost(self, fd: int, exc: BaseException | None) -> None:
        super().pipe_connection_lost(fd, exc)
        if fd == 1:
            if self.part and not self.over:    # a last line without its newline is read as a line, as readline does
                self.lines.append(b"".join(self.part))
                self.part, self.part_size = [], 0
            self.eof = True
            self._wake()

    def process_exited(self) -> None:
        transport = self._transport
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)
        if transport is not None:
            self._loop.call_later(EXIT_READ, _close_reads, transport)


def _close_reads(transport: Any) -> None:
    for fd in (1, 2):
        pipe = transport.get_pipe_transport(fd)
        if pipe is not None and not pipe.is_closing():
            pipe.close()


class Child:
    def __init__(self, command: list[str], env: dict[str, str], cwd: str | None, name: str = "exec",
                 timeout: float = 30.0):
        self.command, self.env, self.cwd, self.name, self.timeout = command, env, cwd, name, timeout
        self.proc: asyncio.subprocess.Process | None = None
        self._err: deque[bytes] = deque()
        self._err_size = 0
        self._err_task: asyncio.Task | None = None
        self._protocol: _Protocol | None = None
        self._watch: asyncio.TimerHandle | None = None   # the reply deadline's watchdog (`_wait`)
        self._waiting: tuple = ()

    async def start(self) -> None:
        global _HOOKED
        if not _HOOKED:
            atexit.register(_end_groups)
            _HOOKED = True
        loop = asyncio.get_running_loop()
        limit = LINE_LIMIT
        try:
            transport, self._protocol = await loop.subprocess_exec(
                lambda: _Protocol(limit, loop), *self.command, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=self.env, cwd=self.cwd,
                process_group=0)
        except OSError as exc:
            raise ExternalError(f"cannot start {' '.join(self.command)}: {exc.strerror or exc}") from None
        self.proc = asyncio.subprocess.Process(transport, self._protocol, loop)
        _GROUPS.add(self.proc.pid)
        self._err_task = asyncio.ensure_future(self._drain_stderr())

    async def _drain_stderr(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        while chunk := await self.proc.stderr.read(4096):
            self._err.append(chunk)
            self._err_size += len(chunk)
            while self._err_size > STDERR_KEEP and len(self._err) > 1:
                self._err_size -= len(self._err.popleft())

    def last_words(self) -> str:
        """The last non-blank line the process wrote to stderr, for the error line."""
        lines = [ln.strip() for ln in b"".join(self._err).decode("utf-8", "replace").splitlines() if ln.strip()]
        return f"; its last stderr line: {lines[-1][:300]!r}" if lines else ""

    async def send(self, obj: dict[str, Any]) -> None:
        await self.send_raw(encode(obj) + b"\n")

    async def send_raw(self, data: bytes) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(data)
            if self.proc.stdin.transport.get_write_buffer_size():    # it has not read the last ones yet
                async with asyncio.timeout(self.timeout):
                    await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise ExternalError(await self.exited()) from None
        except TimeoutError:
            if self.proc.returncode is not None:
                raise ExternalError(await self.exited()) from None
            raise ExternalError(f"it does not read what the bench sends (its stdin stayed full for "
                                f"{self.timeout:g} s){self.last_words()}") from None

    async def receive(self, timeout: float, busy: Callable[[], float]) -> bytes:
        """The next line; `busy()` says how many seconds the writer has spent answering so far."""
        p = self._protocol
        assert p is not None
        line = p.take()
        while line is None and not p.over and not p.eof:
            await self._wait(p, timeout, busy)
            line = p.take()
        if line is not None:
            return line
        if p.over:
            raise ExternalError(f"a reply line is longer than {p._limit >> 20} MiB")
        raise ExternalError(await self.exited())

    async def _wait(self, p: _Protocol, timeout: float, busy: Callable[[], float]) -> None:
        """Until a line, the end of stdout or a line too long comes, within `timeout` seconds of the process's
        own time. The deadline is a watchdog, not a timer per wait: armed when a wait would end before it
        fires, it looks at the wait under way when it fires and sleeps again if that one has time left."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        self._waiting = (now, busy(), timeout, busy)
        if self._watch is None or self._watch.when() > now + timeout:
            if self._watch is not None:
                self._watch.cancel()
            self._watch = loop.call_at(now + timeout, self._check)
        p.waiter = loop.create_future()
        try:
            await p.waiter
        except TimeoutError:
            raise ExternalError(f"no reply within {timeout:g} s (strategy.{self.name}.timeout; its writer "
                                f"calls do not count){self.last_words()}") from None
        finally:
            p.waiter = None

    def _check(self) -> None:
        self._watch = None
        waiter = self._protocol.waiter if self._protocol is not None else None
        if waiter is None or waiter.done():
            return              # no wait under way: the next one arms the watchdog again
        loop = asyncio.get_running_loop()
        started, spent, timeout, busy = self._waiting
        left = timeout - (loop.time() - started - (busy() - spent))
        if left <= 0:
            waiter.set_exception(TimeoutError())
        else:                   # a writer call took some of the time: it is not the process's
            self._watch = loop.call_at(loop.time() + left, self._check)

    async def _exit_code(self, within: float) -> int | None:
        """The exit code once the process has exited (its pipes may still be held open), None if not in time."""
        assert self.proc is not None
        if self.proc.returncode is None and self._protocol is not None:
            await asyncio.wait({self._protocol.exited}, timeout=within)
        return self.proc.returncode

    async def exited(self) -> str:
        code = await self._exit_code(EXIT_WAIT)
        if code is None:
            return f"the process closed its stdout but did not exit{self.last_words()}"
        if self._err_task is not None:
            await asyncio.wait({self._err_task}, timeout=0.5)
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        return f"the process {how}{self.last_words()}"

    async def close(self, goodbye: dict[str, Any] | None) -> None:
        """Say goodbye (the process may exit on its own), then end its group: helpers it left go too."""
        proc = self.proc
        if proc is None:
            return
        if proc.returncode is None and goodbye is not None:
            try:
                assert proc.stdin is not None
                proc.stdin.write(json.dumps(goodbye).encode() + b"\n")
                proc.stdin.close()
            except (BrokenPipeError, ConnectionResetError, RuntimeError):
                pass
            await self._exit_code(GRACE)
        _kill_group(proc.pid)
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        await self._exit_code(GRACE)
        if self._err_task is not None:
            self._err_task.cancel()
        transport = self._protocol and self._protocol._transport    # our ends of the pipes, whoever holds the others
        if transport is not None:
            transport.close()


def environment(extra: dict[str, str], url: str, secret: Callable[[str], bool]) -> dict[str, str]:
    """The process's environment: the bench's own without its secrets (the process reaches models only
    through the writer endpoint, where every call is counted), the endpoint's URL under the names
    common SDKs read, a placeholder key they insist on, and the strategy config's `env`."""
    env = {k: v for k, v in os.environ.items() if not secret(k)}
    env.update({"COMPACTION_BENCH_WRITER_URL": url, "OPENAI_BASE_URL": url, "OPENAI_API_BASE": url,
                "OPENAI_API_KEY": "compaction-bench-writer-endpoint"})
    env.update(extra)
    return env


__all__ = ["Child", "environment"]
