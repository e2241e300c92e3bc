"""Bad input is reported as a list of one-line problems, never a traceback; a stopped run unwinds."""
from __future__ import annotations

import asyncio
import signal
import threading
from typing import Any, Coroutine, TypeVar

T = TypeVar("T")


class BadInput(Exception):
    """Raised with every problem found; the CLI prints one line each and exits 2."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


class ModelError(Exception):
    """A model call failed after its retries (HTTP error, timeout, unusable answer)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (`kill PID`, `timeout`, a CI runner's cancel): unwinds as Ctrl-C does, so finished work is
    kept and the CLI says so in one line (exit 143)."""


def run_stoppable(coro: Coroutine[Any, Any, T]) -> T:
    """asyncio.run, where Ctrl-C and SIGTERM (on which the CLI raises Terminated) stop the run at once, even
    mid-cell. asyncio's own Ctrl-C handling only cancels the main task, which cells that never wait (the
    offline models) do not notice until every cell is done. The exception unwinds through the tasks, so
    their cleanup runs (worker processes ended); that a task ended with it is not logged as an error."""
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGINT) if main_thread else None
    swap = previous is signal.default_int_handler
    if swap:
        signal.signal(signal.SIGINT, _interrupt)

    async def main() -> T:
        asyncio.get_running_loop().set_exception_handler(_quiet)
        return await coro

    try:
        return asyncio.run(main())
    finally:
        if swap:
            signal.signal(signal.SIGINT, previous)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _quiet(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    # a stop unwinds every task: what it cancelled (a gather of one cell's calls) is not an error either
    if not isinstance(context.get("exception"), (KeyboardInterrupt, asyncio.CancelledError)):
        loop.default_exception_handler(context)
