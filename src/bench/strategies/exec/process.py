"""The strategy process: started once per cell, spoken to in JSON Lines over its stdin and stdout.

Its stderr is kept (the last few kilobytes, never written anywhere) so that a crash can be
explained in the cell's error line. Waiting for a reply counts only the process's own time:
seconds its writer calls spend in the bench's writer (which has its own timeout and retries)
are not held against it.
"""
from __future__ import annotations

import asyncio
import json
import os
import time
from collections import deque
from typing import Any, Callable

from bench.strategies.exec.protocol import ExternalError

LINE_LIMIT = 256 << 20       # one reply line may be this long (a context of many written messages)
STDERR_KEEP = 8192
GRACE = 2.0                  # seconds a process gets to exit after `end` before it is killed


class Child:
    def __init__(self, command: list[str], env: dict[str, str], cwd: str | None, name: str = "exec"):
        self.command, self.env, self.cwd, self.name = command, env, cwd, name
        self.proc: asyncio.subprocess.Process | None = None
        self._err: deque[bytes] = deque()
        self._err_size = 0
        self._err_task: asyncio.Task | None = None

    async def start(self) -> None:
        try:
            self.proc = await asyncio.create_subprocess_exec(
                *self.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=self.env, cwd=self.cwd, limit=LINE_LIMIT)
        except OSError as exc:
            raise ExternalError(f"cannot start {' '.join(self.command)}: {exc.strerror or exc}") from None
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
        await self.send_raw(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")

    async def send_raw(self, data: bytes) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.proc.stdin.write(data)
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            raise ExternalError(await self.exited()) from None

    async def receive(self, timeout: float, busy: Callable[[], float]) -> bytes:
        """The next line; `busy()` says how many seconds the writer has spent answering so far."""
        assert self.proc is not None and self.proc.stdout is not None
        started, spent = time.perf_counter(), busy()
        while True:
            left = timeout - (time.perf_counter() - started - (busy() - spent))
            if left <= 0:
                raise ExternalError(f"no reply within {timeout:g} s (strategy.{self.name}.timeout; its writer "
                                    f"calls do not count){self.last_words()}")
            try:
                async with asyncio.timeout(left):
                    line = await self.proc.stdout.readline()
                break
            except TimeoutError:
                continue            # a writer call may have been under way: the loop recomputes the time left
            except ValueError:      # asyncio's "chunk is longer than limit"
                raise ExternalError(f"a reply line is longer than {LINE_LIMIT >> 20} MiB") from None
        if not line:
            raise ExternalError(await self.exited())
        return line

    async def exited(self) -> str:
        assert self.proc is not None
        try:
            code = await asyncio.wait_for(self.proc.wait(), 1.0)
        except TimeoutError:
            return f"the process closed its stdout but did not exit{self.last_words()}"
        if self._err_task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._err_task), 0.5)
            except TimeoutError:
                pass
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        return f"the process {how}{self.last_words()}"

    async def close(self, goodbye: dict[str, Any] | None) -> None:
        """Say goodbye (the process may exit on its own), then make sure it is gone."""
        proc = self.proc
        if proc is None:
            return
        if proc.returncode is None and goodbye is not None:
            try:
                assert proc.stdin is not None
                proc.stdin.write(json.dumps(goodbye).encode() + b"\n")
                proc.stdin.close()
                await asyncio.wait_for(proc.wait(), GRACE)
            except (BrokenPipeError, ConnectionResetError, TimeoutError, RuntimeError):
                pass
        if proc.returncode is None:
            try:
                proc.kill()
            except ProcessLookupError:
                pass
            await proc.wait()
        if self._err_task is not None:
            self._err_task.cancel()
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()


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
