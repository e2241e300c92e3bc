"""Bad input is reported as a list of one-line problems, never a traceback; a stopped run unwinds, and
a killed run's forked workers end with it.

A worker forked from the run inherits its open files, the run folder's lock among them; if the run is
killed (SIGKILL, an OOM kill) a worker would live on, finish its cell into a folder a resumed run is
already writing, and hold the lock. Each worker therefore drops its copies of the files marked
`private` and exits the moment its parent is gone. Fork rather than spawn: a spawned worker would run
the caller's main script again, which a script without a `__main__` guard cannot survive."""
from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
import weakref
from concurrent.futures import ProcessPoolExecutor
from typing import IO, Any, Callable, Coroutine, TypeVar

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

POLL = 0.2      # seconds between looks at the parent; a check costs a system call
_PRIVATE: "weakref.WeakSet[IO]" = weakref.WeakSet()


def private(fh: IO) -> IO:
    """Mark an open file as this process's alone: a forked child points its descriptor at /dev/null,
    so a lock held through it (flock belongs to the open file, which a fork shares) stays the parent's."""
    _PRIVATE.add(fh)
    return fh


def _drop_private() -> None:
    if not _PRIVATE:
        return
    null = os.open(os.devnull, os.O_RDWR)
    for fh in list(_PRIVATE):
        try:
            os.dup2(null, fh.fileno())      # the number stays valid, so a later close is harmless
        except (OSError, ValueError):
            pass
    os.close(null)


os.register_at_fork(after_in_child=_drop_private)


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL)
    os._exit(1)


def _start(parent: int, then: Callable[[], None] | None) -> None:
    threading.Thread(target=_watch, args=(parent,), daemon=True, name="parent-watch").start()
    if then is not None:
        then()


def forked_pool(workers: int, initializer: Callable[[], None] | None = None) -> ProcessPoolExecutor:
    """A fork pool of `workers` processes that exit when this process does; `initializer` runs in each."""
    import multiprocessing

    return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=_start, initargs=(os.getpid(), initializer))
