"""A keep-everything external strategy that breaks on purpose (tests/test_exec_failures.py).

    external_fault.py MODE SCENARIO AT [PIDFILE]

In the cell of scenario SCENARIO, at agent request AT, it does MODE: `kill` (SIGKILL itself),
`exit` (exit 3 after a stderr line), `hang` (sleep forever), `garbage` (a line that is not JSON),
`unknown` (names an id no message has), `untagged` (writes a message without a tag), `version`
(answers begin with version 99), `late-writer` (calls the writer and reports no compaction).
Everywhere else it keeps every message. PIDFILE, when given, receives its pid (so a test can
check that the bench did not leave it running).
"""
import json
import os
import signal
import sys
import time
import urllib.request

mode, scenario, at = sys.argv[1], sys.argv[2], int(sys.argv[3])
if len(sys.argv) > 4:
    with open(sys.argv[4], "a") as fh:
        fh.write(f"{os.getpid()}\n")


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


begin = json.loads(sys.stdin.readline())
mine = begin["scenario"] == scenario
send({"type": "hello", "version": 99 if mine and mode == "version" else 1})
kept = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] != "prepare":
        break
    added = [m["id"] for m in msg["add"]]
    reply = {"type": "context", "keep": kept, "messages": added}
    if mine and msg["request"] == at:
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        elif mode == "exit":
            print("fault: giving up on purpose", file=sys.stderr, flush=True)
            sys.exit(3)
        elif mode == "hang":
            time.sleep(3600)
        elif mode == "garbage":
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
            continue
        elif mode == "unknown":
            reply["messages"] = added + ["no-such-message"]
        elif mode == "untagged":
            reply["messages"] = added + [{"id": "note-1", "role": "user", "text": "a note without a tag"}]
        elif mode == "late-writer":
            body = json.dumps({"model": "x", "messages": [{"role": "user", "content": "Summarise this."}]}).encode()
            req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", body,
                                         {"Content-Type": "application/json"})
            urllib.request.urlopen(req).read()
    kept += len(added)
    send(reply)
