"""Issue 26, external strategies: hostile processes and protocol replies (tests/data/hostile_strategy.py).
Each case ends — the cell fails with one line naming the request and what is wrong, or succeeds — within
a bound that only a hang exceeds; no traceback; and no process the strategy started outlives its cell
(each starts in a process group of its own, which is ended): a wrapper's child that times out, a helper
forked alongside, a process that reads nothing while it floods requests. A helper that leaves the group
(setsid) and holds the pipes cannot be ended by the bench, but cannot make it wait either."""
from __future__ import annotations

import asyncio
import io
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.harness.replay import ReplayOptions, replay
from bench.models.offline import OfflineModel
from bench.strategies.exec import Exec, ExternalError
from bench.strategies.exec import process as P
from test_strategy_common import TOK, long_scenario

HOSTILE = Path(__file__).resolve().parent / "data" / "hostile_strategy.py"
SCENARIO = long_scenario(turns=8, window=4000)
BOUND = 90.0        # seconds: far above any case's own time, only a hang reaches it
# the cases that wait for the timeout get 2 s a reply, the others 30 s: a reply of a loaded machine is
# slow, and a case must not fail on it (the first reply, a program start, always gets 30 s)
WAITS = {"hang", "no-newline-hang", "flood-count", "wrapper-child-hangs"}



def payload(tmp_path: Path, value) -> str:
    """A file holding the bytes (or the JSON of) `value`, for the modes that read one."""
    path = tmp_path / "payload"
    path.write_bytes(value if isinstance(value, bytes) else json.dumps(value).encode())
    return str(path)


def command(mode: str, pids: Path, wrap: str | None = None, at: int = 2) -> list[str]:
    argv = [sys.executable, str(HOSTILE), mode, str(pids), str(at)]
    if wrap is None:
        return argv
    return ["sh", "-c", wrap.format(cmd=" ".join(shlex.quote(a) for a in argv), pids=shlex.quote(str(pids)))]


def run(mode: str, tmp_path: Path, wrap: str | None = None, timeout: float = 30.0,
        at: int = 2) -> tuple[str | None, list[int], float]:
    """(the cell's error line or None, pids the strategy noted, seconds taken)."""
    pids = tmp_path / "pids"
    strategy = Exec(command(mode, pids, wrap, at), timeout=timeout, calls_writer=False)
    strategy.name = "hostile"
    started = time.monotonic()

    async def main():
        return await asyncio.wait_for(replay(SCENARIO, strategy, OfflineModel(), TOK, ReplayOptions(window=SCENARIO.window),
                                             io.StringIO(), io.StringIO(), "cell"), BOUND)

    error = None
    try:
        asyncio.run(main())
    except ExternalError as exc:
        error = str(exc)
    except TimeoutError:
        pytest.fail(f"{mode}: the cell did not end within {BOUND:g} s")
    noted = [int(x) for x in pids.read_text().split()] if pids.exists() else []
    return error, noted, time.monotonic() - started


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except (ProcessLookupError, OSError):
        return False


def none_left(pids: list[int], spare: tuple[int, ...] = ()) -> list[int]:
    deadline = time.monotonic() + 5
    left = [p for p in pids if p not in spare]
    while left and time.monotonic() < deadline:
        left = [p for p in left if alive(p)]
        time.sleep(0.05)
    return left


# mode -> what the cell's line says (None: the cell succeeds)
PROCESSES = {
    "hang": "no reply within 2 s",
    "no-newline-hang": "no reply within 2 s",
    "close-stdout": "closed its stdout but did not exit",
    "close-stdout-before-hello": "closed its stdout but did not exit",
    "kill-self": "was killed by signal 9",
    "term-self": "was killed by signal 15",
    "exit-3": "exited with code 3; its last stderr line: 'giving up'",
    "exit-before-hello": "exited with code 0",
    "banner": "its reply is not valid JSON",
    "hello-version-string": "it speaks protocol version '1'",
    "hello-wrong-type": "its first reply must be",
    "garbage-before-first-prepare": "its reply is not valid JSON",
    "flood-count": "it does not read what the bench sends",
    "stderr-flood": None,
    "fork-helper": None,
    "fork-helper-detached": None,
    "ignore-end": None,
    "garbage-after-end": None,
    "writer-after-reply": None,
    "writer-hostile-bodies": None,
    "writer-without-compaction": "it called the writer 1 time(s) but its reply has no \"compaction\" report",
    "ok": None,
}


@pytest.mark.parametrize("mode", list(PROCESSES))
def test_a_hostile_process_ends_its_cell_and_leaves_nothing_running(tmp_path, mode):
    # writer-after-reply calls once the bench has said `end`: no request is under way (a call right after a
    # reply races the bench's closing of that request, and is counted as the request's own)
    error, pids, _ = run(mode, tmp_path, timeout=2.0 if mode in WAITS else 30.0)
    says = PROCESSES[mode]
    if says is None:
        assert error is None, error
    else:
        assert error is not None and says in error and "\n" not in error, error
        assert error.startswith("external strategy python") and "request " in error, error
    assert pids and none_left(pids) == []


WRAPPED = {   # case -> (mode, a wrapper shell's command line, what the line says)
    "wrapper-child-hangs": ("hang", "{cmd}; true", "no reply within 2 s"),
    # the wrapper exits once its child runs (has noted its pid), the child holding the pipes
    "wrapper-exits-child-holds-pipes": ("hold", "{cmd} & until [ -s {pids} ]; do sleep 0.05; done; exit 0",
                                        "exited with code 0"),
    "wrapper-child-works": ("ok", "{cmd}; true", None),
    "wrapper-exec": ("ok", "exec {cmd}", None),
}


@pytest.mark.parametrize("case", list(WRAPPED))
def test_a_wrapper_and_its_child_end_together(tmp_path, case):
    mode, wrap, says = WRAPPED[case]
    error, pids, _ = run(mode, tmp_path, wrap, timeout=2.0 if case in WAITS else 30.0)
    assert (error is None) if says is None else (error is not None and says in error), error
    assert pids and none_left(pids) == []


def test_a_helper_that_leaves_the_group_cannot_make_the_bench_wait(tmp_path):
    error, pids, took = run("setsid-helper", tmp_path)
    try:
        assert error is None and took < BOUND
    finally:
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_line_longer_than_the_limit_fails_without_reading_it_all(tmp_path, monkeypatch):
    monkeypatch.setattr(P, "LINE_LIMIT", 1 << 20)
    error, pids, _ = run("huge-line", tmp_path)
    assert error is not None and "a reply line is longer than 1 MiB" in error
    assert none_left(pids) == []


WRITTEN = {"id": "w1", "role": "user", "tag": "summary", "text": "kept"}
REPLIES = {   # what the reply at request 2 merges in -> what the line says
    "keep-negative": ({"keep": -1}, '"keep" must be a whole number'),
    "keep-float": ({"keep": 1.0}, '"keep" must be a whole number'),
    "keep-bool": ({"keep": True}, '"keep" must be a whole number'),
    "keep-string": ({"keep": "3"}, '"keep" must be a whole number'),
    "keep-too-many": ({"keep": 10 ** 9}, '"keep" must be a whole number'),
    "messages-a-string": ({"messages": "u0"}, '"messages" must be a list'),
    "messages-a-number-item": ({"messages": [5]}, "messages[0] is int"),
    "messages-null-item": ({"messages": [None]}, "messages[0] is NoneType"),
    "unknown-id": ({"messages": ["nope"]}, "names unknown message id 'nope'"),
    "system-id": ({"messages": ["system"]}, "the system prompt is always sent first"),
    "no-tag": ({"messages": [{**WRITTEN, "tag": None}]}, "has no tag"),
    "blank-tag": ({"messages": [{**WRITTEN, "tag": "  "}]}, "has no tag"),
    "no-id": ({"messages": [{**WRITTEN, "id": ""}]}, "has no id"),
    "id-a-number": ({"messages": [{**WRITTEN, "id": 7}]}, "has no id"),
    "bad-role": ({"messages": [{**WRITTEN, "role": "root"}]}, "role 'root' is not one of"),
    "text-a-number": ({"messages": [{**WRITTEN, "text": 5}]}, "text must be a string"),
    "text-missing": ({"messages": [{k: v for k, v in WRITTEN.items() if k != "text"}]}, "text must be a string"),
    "tool-without-call": ({"messages": [{**WRITTEN, "role": "tool"}]}, 'a tool message needs "call"'),
    "parts-not-joining": ({"messages": [{**WRITTEN, "parts": [["x", "other"]]}]}, "parts do not join"),
    "parts-malformed": ({"messages": [{**WRITTEN, "parts": "x"}]}, "message 'w1'"),
    "calls-malformed": ({"messages": [{**WRITTEN, "role": "assistant", "calls": "x"}]}, "message 'w1'"),
    "calls-items-malformed": ({"messages": [{**WRITTEN, "role": "assistant", "calls": [5]}]}, "message 'w1'"),
    "t-a-string": ({"messages": [{**WRITTEN, "t": "soon"}]}, "message 'w1'"),
    "id-reused": ({"messages": ["u0", {**WRITTEN, "id": "u0"}]}, "id 'u0' already names another message"),
    "compaction-not-object": ({"compaction": [1]}, '"compaction" must be an object'),
    "compaction-ok-string": ({"compaction": {"ok": "yes"}}, "compaction.ok must be true or false"),
    "compaction-before-negative": ({"compaction": {"before": -5}}, "compaction.before must be a whole number"),
    "compaction-after-float": ({"compaction": {"after": 1.5}}, "compaction.after must be a whole number"),
    "compaction-problems-not-list": ({"compaction": {"problems": "bad"}}, "compaction.problems must be a list"),
    "compaction-problems-numbers": ({"compaction": {"problems": [1]}}, "compaction.problems must be a list"),
    "compaction-fields-not-object": ({"compaction": {"fields": [1]}}, "compaction.fields must be an object"),
    "compaction-fields-harness-key": ({"compaction": {"fields": {"ok": 1}}}, "are the harness's own keys"),
    "compaction-text-number": ({"compaction": {"text": 5}}, "compaction.text must be a string"),
    "compaction-fields-deep": ({"compaction": {"fields": json.loads("[" * 80 + "]" * 80)}}, "nested more than 64"),
    "wake-negative": ({"wake_above": -1}, '"wake_above" must be a whole number'),
    "wake-float": ({"wake_above": 1.5}, '"wake_above" must be a whole number'),
    "wake-string": ({"wake_above": "soon"}, '"wake_above" must be a whole number'),
    "count-texts-a-string": ({"count": {"type": "count", "texts": "abc"}}, '"count": texts must be a list'),
    "count-limit-negative": ({"count": {"type": "count", "texts": ["a"], "limit": -1}}, '"count": limit must be'),
    "count-limit-float": ({"count": {"type": "count", "texts": ["a"], "limit": 1.5}}, '"count": limit must be'),
    "error-message-object": ({"type": "error", "message": {"why": "x"}}, "the process reported an error"),
    "error-message-huge": ({"type": "error", "message": "x" * 1_000_000}, "the process reported an error"),
    "type-unknown": ({"type": "contex"}, 'expected a "context" (or "count") reply'),
    "type-hello-again": ({"type": "hello"}, 'expected a "context" (or "count") reply'),
}
RAW = {   # a reply line of raw bytes -> what the line says
    "not-json": (b"this is not json", "its reply is not valid JSON"),
    "not-utf8": (b'{"type": "context", "keep": 0, "messages": ["\xff\xfe"]}', "names unknown message id"),
    "null": (b"null", 'not a JSON object with a "type"'),
    "array": (b"[]", 'not a JSON object with a "type"'),
    "type-a-number": (b'{"type": 5}', 'not a JSON object with a "type"'),
    "nested-100000": (b"[" * 100_000, "nested too deeply"),
    "number-5000-digits": (b'{"type": "context", "keep": ' + b"9" * 5000 + b"}", "a number too long to read"),
    "nan-keep": (b'{"type": "context", "keep": NaN, "messages": []}', '"keep" must be a whole number'),
    "infinity-before": (b'{"type": "context", "keep": 0, "messages": [], "compaction": {"before": Infinity}}',
                        "compaction.before must be a whole number"),
    "lone-surrogate": (b'{"type": "context", "keep": 0, "messages": [{"id": "w", "tag": "s", "text": "\\ud800"}]}',
                       "lone UTF-16 surrogate"),
    "empty-line": (b"", "its reply is not valid JSON"),
    "duplicate-keys": (b'{"type": "context", "type": "count", "texts": 5}', '"count": texts must be a list'),
}


@pytest.mark.parametrize("case", list(REPLIES))
def test_a_reply_that_breaks_the_protocol_fails_its_cell_in_one_line(tmp_path, case):
    change, says = REPLIES[case]
    error, pids, _ = run("json@" + payload(tmp_path, change), tmp_path)
    assert error is not None and says in error and "\n" not in error, error
    assert "request 2 (after message" in error and len(error) < 1200, error
    assert none_left(pids) == []


@pytest.mark.parametrize("case", list(RAW))
def test_a_raw_reply_line_fails_its_cell_in_one_line(tmp_path, case):
    data, says = RAW[case]
    error, pids, _ = run("raw@" + payload(tmp_path, data), tmp_path)
    assert error is not None and says in error and "\n" not in error, error
    assert none_left(pids) == []


CONFIGS = {   # strategy.exec settings that are bad input before anything runs
    "command-with-nul": ({"command": ["python3", "a\0b"]}, "NUL"),
    "command-a-folder": ({"command": ["/tmp"]}, "not a program"),
    "command-empty": ({"command": []}, "command is not set"),
    "timeout-nan": ({"timeout": float("nan")}, "timeout must be"),
    "timeout-inf": ({"timeout": float("inf")}, "timeout must be"),
    "timeout-zero": ({"timeout": 0}, "timeout must be"),
    "timeout-string": ({"timeout": "30"}, "timeout must be"),
    "timeout-bool": ({"timeout": True}, "timeout must be"),
    "env-name-with-equals": ({"env": {"A=B": "1"}}, "env: 'A=B'"),
    "env-value-with-nul": ({"env": {"A": "x\0y"}}, "env: 'A'"),
    "env-secret": ({"env": {"MY_TOKEN": "x"}}, "env: MY_TOKEN: secrets come from the environment"),
    "cwd-missing": ({"cwd": "/no/such/folder"}, "cwd: '/no/such/folder' is not a folder"),
}


@pytest.mark.parametrize("case", list(CONFIGS))
def test_a_bad_exec_setting_is_refused_when_the_strategy_is_built(case):
    kw, says = CONFIGS[case]
    with pytest.raises(ValueError) as info:
        Exec(**{"command": [sys.executable, str(HOSTILE)], **kw})
    assert says in str(info.value)


def test_a_program_that_cannot_be_run_fails_its_cell(tmp_path):
    script = tmp_path / "strategy.py"
    script.write_text("print('hi')\n")
    os.chmod(script, 0o644)                        # a file, but not executable
    strategy = Exec([str(script)], timeout=1, calls_writer=False)
    strategy.name = "x"
    with pytest.raises(ExternalError) as info:
        asyncio.run(replay(SCENARIO, strategy, OfflineModel(), TOK, ReplayOptions(window=SCENARIO.window),
                           io.StringIO(), io.StringIO(), "cell"))
    assert "cannot start" in str(info.value) and "Permission denied" in str(info.value)


def test_the_bench_ends_every_strategy_group_when_it_exits(tmp_path):
    """A bench process that dies mid-cell (interrupted) takes the strategy process groups with it."""
    pids = tmp_path / "pids"
    code = f"""
import asyncio, io, sys
sys.path.insert(0, {str(Path(__file__).parent)!r})
from bench.harness.replay import ReplayOptions, replay
from bench.models.offline import OfflineModel
from bench.strategies.exec import Exec
from test_strategy_common import TOK, long_scenario
s = long_scenario(turns=8, window=4000)
st = Exec({command('hang', pids)!r}, timeout=3600, calls_writer=False)
st.name = "x"
async def main():
    task = asyncio.ensure_future(replay(s, st, OfflineModel(), TOK, ReplayOptions(window=s.window), io.StringIO(),
                                        io.StringIO(), "cell"))
    while not __import__("os").path.exists({str(pids)!r}) or len(open({str(pids)!r}).read().split()) < 1:
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)
    sys.exit(0)   # the bench exits while the process hangs
asyncio.run(main())
"""
    subprocess.run([sys.executable, "-c", code], timeout=120, check=False, capture_output=True)
    started = [int(x) for x in pids.read_text().split()]
    assert started and none_left(started) == []
