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

import argparse
import json
import sys

from naive import turn_units   # its sibling (a script's folder is on sys.path): whole turns, as there

VERSION = 1


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", type=float, default=0.8)
    p.add_argument("--every-request", action="store_true", help="never say wake_above: be asked before every request")
    a = p.parse_args(argv)
    target = a.target
    read, write = sys.stdin.readline, sys.stdout
    begin = json.loads(read())
    if begin.get("version") != VERSION:
        write.write(json.dumps({"type": "error", "message": f"truncate.py speaks protocol version {VERSION}"}) + "\n")
        return 1
    write.write(json.dumps({"type": "hello", "version": VERSION, "name": "truncate.py"}) + "\n")
    write.flush()
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
        if not a.every_request:
            reply["wake_above"] = limit
        write.write(json.dumps(reply) + "\n")
        write.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
