#!/usr/bin/env python3
"""The truncate baseline as an external process (Python standard library only): the shortest
complete strategy for compaction-bench's external protocol, and the one `python -m bench.perf`
times against the built-in truncate to measure the protocol's overhead.

When a request would exceed the bench's limit, whole turns are dropped from the front (an
assistant message leaves with its tool results) until it is under `--target` (0.8) of the limit.
No writer call. Between compactions the reply only appends the new message ids, and says
`wake_above` (the limit) so the bench need not ask again until a request would exceed it;
`--every-request` leaves that out, so every request is a round trip (the protocol's worst case).

    compaction-bench run strategies=[exec] strategy.exec.calls_writer=false \
        'strategy.exec.command=[python3,src/bench/examples/external/truncate.py]'
"""
from __future__ import annotations

import json
import sys

from naive import turn_units   # its sibling (a script's folder is on sys.path): whole turns, as there

VERSION = 1
USAGE = "usage: truncate.py [--target FRACTION] [--every-request]"


def options(argv: list[str]) -> tuple[float, bool] | None:
    """(--target, --every-request), or None for arguments it does not know. Read by hand: argparse costs
    a start more CPU than a whole session's requests (the overhead figure counts the start)."""
    target, every, rest = 0.8, False, list(argv)
    while rest:
        arg = rest.pop(0)
        if arg == "--every-request":
            every = True
        elif arg == "--target" and rest:
            try:
                target = float(rest.pop(0))
            except ValueError:
                return None
        elif arg.startswith("--target="):
            try:
                target = float(arg.partition("=")[2])
            except ValueError:
                return None
        else:
            return None
    return target, every


def main(argv: list[str] | None = None) -> int:
    got = options(sys.argv[1:] if argv is None else argv)
    if got is None:
        print(USAGE, file=sys.stderr)
        return 2
    target, every_request = got
    # bytes in, bytes out: JSON reads UTF-8 bytes and the lines need no text layer
    read, out = sys.stdin.buffer.readline, sys.stdout.buffer

    def send(obj: dict) -> None:
        out.write(json.dumps(obj).encode() + b"\n")
        out.flush()

    begin = json.loads(read())
    if begin.get("version") != VERSION:
        send({"type": "error", "message": f"truncate.py speaks protocol version {VERSION}"})
        return 1
    send({"type": "hello", "version": VERSION, "name": "truncate.py"})
    per = begin["per_message"]
    limit = begin["limit"]
    context: list[dict] = []
    size = begin["system"]["tokens"] + per + begin["per_request"]     # the request with no messages yet
    while line := read():
        msg = json.loads(line)
        if msg["type"] != "prepare":
            break
        added, appended = msg["add"], msg.get("appended", 0)   # the first `appended` are in the context already
        context.extend(added)
        size += sum(m["tokens"] + per for m in added)
        reply: dict = {"type": "context", "keep": len(context) - len(added) + appended,
                       "messages": [m["id"] for m in added[appended:]]}
        if size > limit:
            before, goal = size, int(limit * target)
            units = turn_units(context)
            i = 0
            while i < len(units) - 1 and size > goal:
                size -= sum(m["tokens"] + per for m in units[i])
                i += 1
            dropped = [m["id"] for u in units[:i] for m in u]
            context = [m for u in units[i:] for m in u]
            problems = [] if size <= limit else [f"the newest turn alone needs {size} tokens"]
            reply = {"type": "context", "keep": 0, "messages": [m["id"] for m in context],
                     "compaction": {"before": before, "after": size, "fields": {"dropped": dropped},
                                    "problems": problems}}
        if not every_request:
            reply["wake_above"] = limit
        send(reply)
    return 0


if __name__ == "__main__":
    sys.exit(main())
