"""An external strategy that misbehaves on purpose (tests/test_harden_12_exec.py).

    hostile_strategy.py MODE PIDFILE [AT]

Keeps every message and, at agent request AT (default 2), does what MODE says (see MODES below: a
reply that breaks the protocol, a hang, a flood, a process or helper that outlives what it should).
Every pid it starts, its own included, is appended to PIDFILE, so a test can check none outlives the cell.
"""
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

mode, pidfile = sys.argv[1], sys.argv[2]
at = int(sys.argv[3]) if len(sys.argv) > 3 else 2


def note_pid(pid):
    with open(pidfile, "a") as fh:
        fh.write(f"{pid}\n")


note_pid(os.getpid())


def raw(data: bytes):
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def send(obj):
    raw(json.dumps(obj).encode() + b"\n")


def helper(**kw):
    """A child that sleeps for an hour, its pid noted."""
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"], **kw)
    note_pid(p.pid)
    return p


def post(data: bytes, headers: dict):
    req = urllib.request.Request(os.environ["COMPACTION_BENCH_WRITER_URL"] + "/chat/completions", data, headers)
    try:
        return urllib.request.urlopen(req, timeout=30).status
    except urllib.error.HTTPError as exc:
        return exc.code


if mode == "hold":                  # reads nothing, writes nothing, holds whatever pipes it was given
    time.sleep(3600)
if mode == "exit-before-hello":
    sys.exit(0)
if mode == "banner":
    raw(b"my-strategy v1.2 starting\n")
if mode == "close-stdout-before-hello":
    os.close(1)
    time.sleep(3600)
if mode in ("fork-helper", "fork-helper-detached"):
    helper() if mode == "fork-helper" else helper(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                                  stderr=subprocess.DEVNULL)
if mode == "setsid-helper":       # leaves the group and holds the pipes: the bench cannot end it, nor wait on it
    helper(start_new_session=True)

begin = json.loads(sys.stdin.readline())
hello = {"type": "hello", "version": 1}
if mode == "hello-version-string":
    hello["version"] = "1"
if mode == "hello-wrong-type":
    hello = {"type": "context", "keep": 0, "messages": []}
send(hello)
if mode == "garbage-before-first-prepare":
    raw(b"debug: ready\n")

kept = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "end":
        if mode == "ignore-end":
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            time.sleep(3600)
        if mode == "garbage-after-end":
            raw(b"bye \xff\n")
        if mode == "writer-after-reply":     # its last reply is in; no request is under way
            status = post(json.dumps({"messages": [{"role": "user", "content": "late"}]}).encode(),
                          {"Content-Type": "application/json"})
            print(f"late call: {status}", file=sys.stderr, flush=True)
        break
    ids = [m["id"] for m in msg["add"]]
    reply = {"type": "context", "keep": kept, "messages": ids}
    kept += len(ids)
    if msg["request"] != at:
        send(reply)
        continue
    # ---- the misbehaviour, at request AT
    if mode in ("hang", "wrapper-hang"):
        time.sleep(3600)
    elif mode == "no-newline-hang":
        raw(b'{"type": "cont')
        time.sleep(3600)
    elif mode == "close-stdout":
        os.close(1)
        time.sleep(3600)
    elif mode == "kill-self":
        os.kill(os.getpid(), signal.SIGKILL)
    elif mode == "term-self":
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    elif mode == "exit-3":
        print("giving up", file=sys.stderr, flush=True)
        sys.exit(3)
    elif mode == "flood-count":            # asks and asks, never reads an answer
        line = json.dumps({"type": "count", "texts": ["x" * 200]}).encode() + b"\n"
        for _ in range(200_000):
            raw(line)
        time.sleep(3600)
    elif mode == "stderr-flood":
        chunk = b"e" * 65536 + b"\n"
        for _ in range(400):                # 26 MB
            sys.stderr.buffer.write(chunk)
        sys.stderr.flush()
        send(reply)
    elif mode == "huge-line":
        raw(b'{"type": "context", "keep": 0, "messages": [], "x": "' + b"y" * (3 << 20) + b'"}\n')
        time.sleep(3600)
    elif mode == "writer-hostile-bodies":
        for data, headers in ((b"x" * 100, {"Content-Length": "-1"}), (b"[" * 5000, {}), (b"{", {})):
            post(data, headers)
        send(reply)
    elif mode == "writer-without-compaction":
        post(json.dumps({"messages": [{"role": "user", "content": "Summarise."}]}).encode(),
             {"Content-Type": "application/json"})
        send(reply)
    elif mode.startswith("raw@"):           # one line of the bytes in the file the test gave
        with open(mode[4:], "rb") as fh:
            raw(fh.read() + b"\n")
        time.sleep(3600)
    elif mode.startswith("json@"):          # the reply with the JSON of the file the test gave merged in
        with open(mode[5:], "rb") as fh:
            change = json.loads(fh.read())
        if "count" in change:               # a count request, then the usual reply
            send(change["count"])
            json.loads(sys.stdin.readline())
            send(reply)
        else:
            reply.update(change)
            send(reply)
    else:
        send(reply)
