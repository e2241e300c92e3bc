"""exec: the external-strategy protocol end to end. The worked examples (examples/external/naive.py, and
naive.mjs when node is here) score exactly what the built-in naive scores; the external truncate serves
exactly the built-in truncate's requests; the writer endpoint passes tool calls through, recognises the
cell's own messages, and serves only while a request is under way; the protocol's checks hold."""
from __future__ import annotations

import asyncio
import csv
import io
import json
import shutil
import sys
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from bench.harness.endpoint import WriterEndpoint
from bench.errors import ModelError
from bench.harness.logs import replay_requests
from bench.harness.model import Model, Reply, Usage
from bench.models.offline import OfflineModel
from bench.harness.replay import ReplayOptions, replay
from bench.cli import main as bench_main
from bench.harness.messages import make
from bench.scenarios import loader
from bench.scenarios.model import Call
from harden import cli
from bench.strategies.exec import Exec, ExternalError
from bench.strategies.truncate import Truncate
from test_strategy_common import TOK, long_scenario

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "src" / "bench" / "examples" / "external"
NODE = shutil.which("node")


def exec_spec(name: str, *command: str, **extra: object) -> str:
    items = ",".join([f"_target_:bench.strategies.exec.Exec", f"command:[{','.join(command)}]",
                      *(f"{k}:{v}" for k, v in extra.items())])
    return f"+strategy.{name}={{{items}}}"


def rows_of(path: Path) -> list[dict]:
    return list(csv.DictReader(path.open(encoding="utf-8")))


@pytest.fixture(scope="module")
def smoke_naive(tmp_path_factory):
    """One smoke run: the built-in naive, the Python example and (with node) the JavaScript example."""
    out = tmp_path_factory.mktemp("naive") / "run"
    names = ["naive", "naive_py"] + (["naive_js"] if NODE else [])
    specs = [exec_spec("naive_py", sys.executable, str(EXAMPLES / "naive.py"))]
    if NODE:
        specs.append(exec_spec("naive_js", NODE, str(EXAMPLES / "naive.mjs")))
    code, _, err = cli("run", "suite=smoke", f"strategies=[{','.join(names)}]", f"out={out}", *specs)
    assert code == 0, err
    return out, names


@pytest.mark.parametrize("external", ["naive_py", pytest.param("naive_js", marks=pytest.mark.skipif(
    not NODE, reason="node is not on PATH"))])
def test_the_external_naive_scores_exactly_what_the_built_in_naive_scores(smoke_naive, external):
    out, _ = smoke_naive
    rows = rows_of(out / "summary.csv")
    builtin = {(r["scenario"], r["writer"]): r for r in rows if r["strategy"] == "naive"}
    mine = {(r["scenario"], r["writer"]): r for r in rows if r["strategy"] == external}
    assert len(builtin) >= 6 and mine.keys() == builtin.keys()       # 3 scenarios x offline, offline:realistic
    assert any(float(r["compactions"]) > 0 for r in builtin.values())
    for key, want in builtin.items():
        for column, value in want.items():
            if column not in ("strategy", "wall_s"):
                assert mine[key][column] == value, (external, key, column)
    # and item by item: every check row, and the text of every compaction
    checks = rows_of(out / "checks.csv")
    strip = lambda r: {k: v for k, v in r.items() if k != "strategy"}   # noqa: E731
    assert [strip(r) for r in checks if r["strategy"] == external] == \
        [strip(r) for r in checks if r["strategy"] == "naive"]
    comps = [json.loads(ln) for ln in (out / "compactions.jsonl").read_text(encoding="utf-8").splitlines()]
    texts = lambda s: [(c["cell"].split("/")[0], c["text"], c["before"], c["after"], c["ok"])  # noqa: E731
                       for c in comps if c["strategy"] == s]
    assert texts(external) == texts("naive") and texts("naive")


def agent_requests(strategy, s, writer=None):
    rq, cp = io.StringIO(), io.StringIO()
    strategy.name = "x"
    stats = asyncio.run(replay(s, strategy, writer or OfflineModel(), TOK, ReplayOptions(window=s.window), rq, cp,
                               "cell"))
    records = [json.loads(line) for line in rq.getvalue().splitlines()]
    reqs = [[(m.id, m.hash, m.tag) for m in r.messages] for r in replay_requests(iter(records), s, TOK)
            if r.kind == "agent"]
    return stats, reqs, [json.loads(line) for line in cp.getvalue().splitlines()]


@pytest.mark.parametrize("args", [["--every-request"], []], ids=["every-request", "wake_above"])
def test_the_external_truncate_serves_exactly_the_built_in_truncates_requests(args):
    s = long_scenario(turns=120)
    want_stats, want, want_comps = agent_requests(Truncate(), s)
    stats, got, comps = agent_requests(Exec([sys.executable, str(EXAMPLES / "truncate.py"), *args],
                                            calls_writer=False), s)
    assert want_stats.compactions >= 5
    assert got == want
    assert (stats.requests, stats.input_tokens, stats.compactions) == \
        (want_stats.requests, want_stats.input_tokens, want_stats.compactions)
    assert [(c["before"], c["after"], c["dropped"]) for c in comps] == \
        [(c["before"], c["after"], c["dropped"]) for c in want_comps]


# ------------------------------------------------------------------ scripted processes


def script(tmp_path: Path, body: str) -> list[str]:
    """A process that answers begin with hello, then runs `body` per prepare (`msg`, `send`, `state`)."""
    path = tmp_path / "proc.py"
    path.write_text(textwrap.dedent("""\
        import json, os, sys, urllib.request
        def send(obj):
            sys.stdout.write(json.dumps(obj) + "\\n"); sys.stdout.flush()
        def receive():
            return json.loads(sys.stdin.readline())
        def chat(body):
            req = urllib.request.Request(os.environ["COMPACTION_BENCH_WRITER_URL"] + "/chat/completions",
                                         json.dumps(body).encode(), {"Content-Type": "application/json"})
            return json.loads(urllib.request.urlopen(req).read())
        begin = receive()
        send({"type": "hello", "version": 1})
        state = {"kept": 0, "begin": begin}
        for line in sys.stdin:
            msg = json.loads(line)
            if msg["type"] != "prepare":
                break
        """) + textwrap.indent(textwrap.dedent(body), "    "), encoding="utf-8")
    return [sys.executable, str(path)]


KEEP_ALL = """
ids = [m["id"] for m in msg["add"]]
reply = {"type": "context", "keep": state["kept"], "messages": ids}
state["kept"] += len(ids)
"""


def short():
    return long_scenario(turns=12, window=4000)


def run_script(tmp_path, body, writer=None, **kw):
    return agent_requests(Exec(script(tmp_path, body), calls_writer=False, **kw), short(), writer)


def failure(tmp_path, body, **kw) -> str:
    with pytest.raises(ExternalError) as info:
        run_script(tmp_path, body, **kw)
    return str(info.value)


def test_counts_come_from_the_bench_tokenizer_and_texts_are_cut_to_a_limit(tmp_path):
    body = KEEP_ALL + """
send({"type": "count", "texts": ["hello world", ""], "limit": 1})
counted = receive()
reply["messages"] = reply["messages"] + [{"id": f"n{msg['request']}", "role": "user", "tag": "note",
                                          "text": json.dumps(counted)}]
send(reply)
"""
    s = short()
    strategy = Exec(script(tmp_path, body), calls_writer=False)
    strategy.name = "x"
    asyncio.run(replay(s, strategy, OfflineModel(), TOK, ReplayOptions(window=s.window), io.StringIO(),
                       io.StringIO(), "cell"))
    notes = [m for m in strategy.messages if m.tag == "note"]   # each request's note replaces the last one
    assert [m.id for m in notes] == [f"n{sum(e.role == 'assistant' for e in s.events)}"]
    assert json.loads(notes[0].text) == {"type": "counted", "tokens": [TOK.count("hello world"), 0],
                                         "texts": [TOK.truncate("hello world", 1), ""]}


@pytest.mark.parametrize("body, says", [
    ('reply = {"type": "context", "keep": 10**6, "messages": []}\nsend(reply)', '"keep" must be a whole number'),
    (KEEP_ALL + 'reply["messages"].append("system")\nsend(reply)', "the system prompt is always sent first"),
    (KEEP_ALL + 'reply["messages"] += [{"id": "u0", "role": "user", "tag": "x", "text": "other"}]\nsend(reply)',
     "id 'u0' already names another message"),
    (KEEP_ALL + 'reply["compaction"] = {"fields": {"cell": "forged"}}\nsend(reply)',
     "cell are the harness's own keys"),
    (KEEP_ALL + 'reply["compaction"] = {"before": -1}\nsend(reply)', "compaction.before must be a whole number"),
    (KEEP_ALL + 'reply["wake_above"] = "soon"\nsend(reply)', '"wake_above" must be a whole number'),
    (KEEP_ALL + 'reply["messages"] += [{"id": "t", "role": "tool", "tag": "x", "text": "out"}]\nsend(reply)',
     'a tool message needs "call"'),
    (KEEP_ALL + 'reply["messages"] += [{"id": "p", "tag": "x", "text": "ab", "parts": [["x", "a"]]}]\nsend(reply)',
     "its parts do not join to its text"),
    ('send({"type": "error", "message": "cannot go on"})', "the process reported an error: 'cannot go on'"),
    ('send({"type": "contex"})', 'expected a "context" (or "count") reply'),
])
def test_a_reply_that_breaks_the_protocol_fails_naming_the_request_and_the_rule(tmp_path, body, says):
    line = failure(tmp_path, body)
    assert "request 1 (after message u0)" in line and says in line and "\n" not in line, line


def test_the_process_gets_the_endpoint_and_a_placeholder_key_never_the_real_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-secret-0000000000")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-real-secret-0000")
    monkeypatch.setenv("PLAIN_SETTING", "kept")
    report = tmp_path / "env.json"
    body = KEEP_ALL + f"""
keys = ["COMPACTION_BENCH_WRITER_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "PLAIN_SETTING",
        "MINE"]
open({str(report)!r}, "w").write(json.dumps({{k: os.environ.get(k) for k in keys}}))
send(reply)
"""
    run_script(tmp_path, body, env={"MINE": "from config"})
    env = json.loads(report.read_text())
    assert env["COMPACTION_BENCH_WRITER_URL"].startswith("http://127.0.0.1:")
    url = env["COMPACTION_BENCH_WRITER_URL"]
    assert url.endswith("/v1") and env["OPENAI_BASE_URL"] == url
    assert env["OPENAI_API_KEY"] == "compaction-bench-writer-endpoint" and env["ANTHROPIC_API_KEY"] is None
    assert env["PLAIN_SETTING"] == "kept" and env["MINE"] == "from config"


def test_a_secret_in_the_strategy_env_config_is_refused():
    with pytest.raises(ValueError, match="GITHUB_TOKEN"):
        Exec([sys.executable, "-c", "pass"], env={"GITHUB_TOKEN": "x"})


class Tooly(Model):
    """A writer that answers a request with tools by calling the first tool; records what it got."""
    name = "tooly"

    def __init__(self, fail: bool = False):
        self.got: list = []
        self.fail = fail

    async def chat(self, messages, *, tools=None, max_tokens=None, purpose=""):
        self.got.append((list(messages), tools, max_tokens))
        if self.fail:
            raise ModelError("tooly: failed after 4 tries: 500")
        if tools:
            name = tools[0]["function"]["name"]
            return Reply(text="", calls=(Call("call_1", name, {"section": "Goals", "text": "done"}),),
                         usage=Usage(input_tokens=50, output_tokens=7), model="tooly", finish="tool_calls")
        return Reply(text="A summary.", usage=Usage(input_tokens=50, output_tokens=3), model="tooly")


CHECKPOINT = KEEP_ALL + """
if msg["request"] == 2:
    tools = [{"type": "function", "function": {"name": "edit_mind", "parameters": {"type": "object"}}}]
    system = {"role": "system", "content": state["begin"]["system"]["text"]}
    user = {"role": "user", "content": [m for m in msg["add"] if m["role"] == "user"][0]["text"]} if any(
        m["role"] == "user" for m in msg["add"]) else {"role": "user", "content": "Dana: go on"}
    first = chat({"model": "any", "messages": [system, user, {"role": "user", "content": "Checkpoint now."}],
                  "tools": tools, "max_tokens": 99})
    call = first["choices"][0]["message"]["tool_calls"][0]
    second = chat({"model": "any", "max_tokens": 99, "messages": [
        system, {"role": "user", "content": "Checkpoint now."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "name": "edit_mind", "content": "ok"}]})
    text = second["choices"][0]["message"]["content"]
    reply["messages"].append({"id": "scene-1", "role": "user", "tag": "scene", "text": text})
    reply["compaction"] = {"text": text, "fields": {"call": call["function"]["name"],
                                                    "args": json.loads(call["function"]["arguments"]),
                                                    "usage": first["usage"]}}
send(reply)
"""


def test_tool_calling_passes_through_the_endpoint_and_each_call_is_logged_as_the_cells_writer_call(tmp_path):
    writer = Tooly()
    stats, reqs, comps = run_script(tmp_path, CHECKPOINT, writer=writer)
    (messages, tools, limit), (messages2, tools2, _) = writer.got
    assert tools[0]["function"]["name"] == "edit_mind" and limit == 99 and tools2 is None
    assert messages[0].tag == "system" and messages[0].id == "system"        # recognised: the cell's own prompt
    assert messages[-1].tag == "instruction"                                 # text the strategy wrote for the call
    assert messages2[2].calls[0].tool == "edit_mind" and messages2[3].call_id == "call_1"
    assert stats.model_calls == 2 and stats.compactions == 1
    comp = comps[0]
    assert comp["call"] == "edit_mind" and comp["args"] == {"section": "Goals", "text": "done"}   # fields, spread
    assert comp["usage"] == {"prompt_tokens": 50, "completion_tokens": 7, "total_tokens": 57}
    assert [c["purpose"] for c in comp["calls"]] == ["external", "external"]
    assert comp["calls"][0]["output_tokens"] == 7 and comp["calls"][0]["model"] == "tooly"
    assert any(tag == "scene" for req in reqs for _, _, tag in req)


def test_a_failing_writer_reaches_the_process_as_a_server_error_with_its_message(tmp_path):
    body = KEEP_ALL + """
if msg["request"] == 2:
    try:
        chat({"model": "any", "messages": [{"role": "user", "content": "Summarise."}]})
        error = None
    except urllib.error.HTTPError as exc:
        error = (exc.code, json.loads(exc.read())["error"]["message"])
    reply["compaction"] = {"ok": False, "error": f"model failed: {error}"}
send(reply)
"""
    stats, _, comps = run_script(tmp_path, body, writer=Tooly(fail=True))
    assert stats.compaction_failures == 1
    assert comps[0]["error"] == "model failed: (502, 'tooly: failed after 4 tries: 500')"
    assert comps[0]["calls"][0]["error"] == "tooly: failed after 4 tries: 500"


def test_the_endpoint_answers_only_while_a_request_is_under_way():
    async def main():
        ep = WriterEndpoint(Tooly(), TOK, asyncio.get_running_loop()).start()
        try:
            def post(body):
                req = urllib.request.Request(ep.url + "/chat/completions", json.dumps(body).encode(),
                                             {"Content-Type": "application/json"})
                try:
                    return 200, json.loads(urllib.request.urlopen(req).read())
                except urllib.error.HTTPError as exc:
                    return exc.code, json.loads(exc.read())

            msgs = {"messages": [{"role": "user", "content": "hi"}]}
            closed = await asyncio.to_thread(post, msgs)
            ep.open = True
            answered = await asyncio.to_thread(post, msgs)
            empty = await asyncio.to_thread(post, {"messages": []})
            return closed, answered, empty
        finally:
            ep.stop()

    closed, answered, empty = asyncio.run(main())
    assert closed[0] == 409 and "no strategy request is under way" in closed[1]["error"]["message"]
    assert answered[0] == 200 and answered[1]["choices"][0]["message"]["content"] == "A summary."
    assert answered[1]["object"] == "chat.completion" and answered[1]["usage"]["completion_tokens"] == 3
    assert empty[0] == 400


def test_the_endpoint_streams_to_an_sdk_client_and_reads_the_developer_role_as_the_system_prompt():
    """SDKs stream by default: the official OpenAI client, streaming, gets the writer's text and tool
    call back in pieces, and the usage when it asks for it; `developer` is the system prompt."""
    openai = pytest.importorskip("openai")

    class Long(Tooly):
        async def chat(self, messages, **kw):
            reply = await super().chat(messages, **kw)
            return Reply(text="word " * 200, usage=reply.usage, model="tooly") if not reply.calls else reply

    async def main():
        writer = Long()
        ep = WriterEndpoint(writer, TOK, asyncio.get_running_loop()).start()
        ep.open = True
        try:
            def call():
                client = openai.OpenAI(base_url=ep.url, api_key="none", max_retries=0)
                msgs = [{"role": "developer", "content": "You write summaries."}, {"role": "user", "content": "hi"}]
                pieces = list(client.chat.completions.create(model="any", messages=msgs, stream=True,
                                                             stream_options={"include_usage": True}))
                tools = [{"type": "function", "function": {"name": "edit_mind", "parameters": {"type": "object"}}}]
                called = list(client.chat.completions.create(model="any", messages=msgs, tools=tools, stream=True))
                return pieces, called

            pieces, called = await asyncio.to_thread(call)
            return writer, pieces, called
        finally:
            ep.stop()

    writer, pieces, called = asyncio.run(main())
    text = "".join(c.choices[0].delta.content or "" for c in pieces if c.choices)
    assert text == "word " * 200 and sum(1 for c in pieces if c.choices and c.choices[0].delta.content) >= 4
    assert pieces[-1].choices == [] and pieces[-1].usage.completion_tokens == 3
    assert [c.choices[0].finish_reason for c in pieces if c.choices][-1] == "stop"
    [tool] = [t for c in called for t in (c.choices[0].delta.tool_calls or ())]
    assert tool.function.name == "edit_mind" and json.loads(tool.function.arguments) == {"section": "Goals", "text": "done"}
    assert called[-1].choices[0].finish_reason == "tool_calls"
    first = writer.got[0][0]
    assert first[0].role == "system" and first[0].text == "You write summaries."


def test_time_spent_in_the_writer_does_not_count_against_the_timeout(tmp_path, monkeypatch):
    """The writer's call takes 1,000 s by the clocks the timeout reads (moved forward, not slept: the wait
    for the reply wakes past its deadline and counts again), far past the 30 s timeout; the process's own
    time, a Python start included, stays within it however loaded the machine (a 2 s budget that held a
    Python start failed under load)."""
    skipped = [0.0]
    perf, mono = time.perf_counter, time.monotonic
    monkeypatch.setattr(time, "perf_counter", lambda: perf() + skipped[0])
    monkeypatch.setattr(time, "monotonic", lambda: mono() + skipped[0])     # the event loop's clock

    class Slow(Tooly):
        async def chat(self, messages, **kw):
            skipped[0] += 1000.0
            return await super().chat(messages, **kw)

    body = KEEP_ALL + """
if msg["request"] == 2:
    chat({"model": "any", "messages": [{"role": "user", "content": "Summarise."}]})
    reply["compaction"] = {"text": "x"}
send(reply)
"""
    stats, _, _ = run_script(tmp_path, body, writer=Slow(), timeout=30)
    assert stats.compactions == 1 and skipped[0] == 1000.0


def test_the_litellm_writer_path_through_the_endpoint_matches_the_built_in_naive(tmp_path, loopback):
    """A real HTTP writer (litellm -> the loopback server): the external naive's calls are cached, counted and
    priced like the built-in's, so the summaries match column by column."""
    out = tmp_path / "run"
    code, _, err = cli("run", "scenarios=[scenarios/hand/injected-watch.yaml]", "strategies=[naive,naive_py]",
                       f"out={out}", "writer.model=openai/loop", "limits.cells=1",
                       f"writer.api_base={loopback.url}", f"responses.dir={tmp_path / 'cache'}",
                       exec_spec("naive_py", sys.executable, str(EXAMPLES / "naive.py")))
    assert code == 0, err
    rows = rows_of(out / "summary.csv")
    by = {s: {r["scenario"]: r for r in rows if r["strategy"] == s} for s in ("naive", "naive_py")}
    assert by["naive"].keys() == by["naive_py"].keys() == {"injected-watch"}
    for scenario, want in by["naive"].items():
        for column, value in want.items():
            if column not in ("strategy", "wall_s"):
                assert by["naive_py"][scenario][column] == value, (scenario, column)
    # the external calls were answered from the cache the built-in's filled (same requests, same key)
    comps = [json.loads(ln) for ln in (out / "compactions.jsonl").read_text(encoding="utf-8").splitlines()]
    calls = {s: [c for rec in comps if rec["strategy"] == s for c in rec["calls"]] for s in ("naive", "naive_py")}
    assert calls["naive"] and len(calls["naive_py"]) == len(calls["naive"])
    assert loopback.calls == len(calls["naive"]) and all(c["cached"] for c in calls["naive_py"])
    assert [c["input_tokens"] for c in calls["naive_py"]] == [c["input_tokens"] for c in calls["naive"]]


AT_RECORDED = """
ids = [m["id"] for m in msg["add"]]
points = {rc["after"] for rc in state["begin"]["recorded"]}
hit = [i for i, x in enumerate(ids) if x in points]
if hit:   # drop everything up to the harness's point, as a truncating compaction there
    reply = {"type": "context", "keep": 0, "messages": ids[hit[-1] + 1:] or ids[-1:],
             "compaction": {"fields": {"at_recorded": ids[hit[-1]]}}}
    state["kept"] = len(reply["messages"])
else:
    reply = {"type": "context", "keep": state["kept"], "messages": ids}
    state["kept"] += len(ids)
send(reply)
"""


def test_an_external_strategy_is_told_where_the_harness_compacted_never_what_it_installed(tmp_path):
    """begin.recorded: the imported session's compaction points, so a program may compact where the harness did
    (and stand beside `recorded` at the same points); what the harness installed is not in it."""
    from bench.strategies.exec.protocol import begin
    from transcripts import ROOT
    out = tmp_path / "cc.json"
    assert bench_main(["import", "claude-code", str(ROOT / "tests" / "data" / "claude-code-two-compactions.jsonl"),
                 "--out", str(out)]) == 0
    s = loader.load(out)
    assert len(s.compactions) == 2
    session = type("S", (), {"scenario": s.id, "user": s.user, "window": s.window, "limit": 1, "reserve_output": 1,
                             "margin": 1, "tok": TOK, "system": make(TOK, id="system", role="system", tag="system",
                                                                     text="x"), "recorded": s.compactions})()
    told = begin(session)["recorded"]
    assert [x["after"] for x in told] == [rc.after for rc in s.compactions] and told[0]["pre_tokens"] == 158211
    assert all(set(x) <= {"after", "trigger", "pre_tokens"} for x in told)
    _, _, comps = agent_requests(Exec(script(tmp_path, AT_RECORDED), calls_writer=False), s)
    assert [c["at_recorded"] for c in comps] == [rc.after for rc in s.compactions]
