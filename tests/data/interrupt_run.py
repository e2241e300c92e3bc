"""`python interrupt_run.py PHASE SIGNAL N COUNTER [RUN ARGS...]`: `compaction-bench run` that is sent
SIGNAL (TERM or INT) the Nth time PHASE begins, as a terminal or a CI runner would mid-phase
(tests/test_harden_13_interrupt.py). The signal goes to the bench's own process, also when the phase runs
in a worker; COUNTER is a file the phases of every process count in.

PHASE: replay, score (a cell's, run where the cell runs), store (the parent appends a finished cell),
order (the files sorted into plan order at the end), report (report.md/html written).
"""
import functools
import inspect
import os
import signal
import sys

from bench.cli import main
from bench.runner import cells, run

phase, sig, n, counter = sys.argv[1], getattr(signal, "SIG" + sys.argv[2]), int(sys.argv[3]), sys.argv[4]
bench = os.getpid()
if sig == signal.SIGINT:
    # as a terminal starts it: a shell that ran the tests in the background hands SIGINT down ignored, and
    # Python then keeps it ignored (that case is its own test, with SIGTERM)
    signal.signal(signal.SIGINT, signal.default_int_handler)
where = {"replay": (cells, "replay"), "score": (cells, "score_cell"), "store": (cells, "store_cell"),
         "order": (run, "put_in_plan_order"), "report": (run, "write_report")}[phase]
original = getattr(*where)


def begins() -> None:
    fd = os.open(counter, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, b".")
    os.close(fd)
    if os.path.getsize(counter) == n:
        os.kill(bench, sig)


if inspect.iscoroutinefunction(original):
    @functools.wraps(original)
    async def patched(*a, **kw):
        begins()
        return await original(*a, **kw)
else:
    @functools.wraps(original)
    def patched(*a, **kw):
        begins()
        return original(*a, **kw)

setattr(*where, patched)
sys.exit(main(["run", *sys.argv[5:]]))
