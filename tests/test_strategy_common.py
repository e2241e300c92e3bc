"""naive, context_editing, masking, codex, openai_compact and hybrid together: helpers the per-strategy tests share, the
pairing invariant on every request, config errors, and full runs offline and over HTTP."""
from __future__ import annotations

import asyncio
import csv
import io
import json
from pathlib import Path

import pytest

from bench.scenarios import loader
from bench.errors import BadInput
from bench.harness.logs import replay_requests
from bench.harness.model import Model, Reply, Usage
from bench.models.offline import OfflineModel
from bench.harness.replay import ReplayOptions, replay
from bench.harness.strategy import default_reserve, trigger_limit
from bench.tokens import tokenizer
from bench.strategies.codex import Codex
from bench.strategies.context_editing import ContextEditing
from bench.strategies.hybrid import Hybrid
from bench.strategies.masking import Masking
from bench.strategies.naive import Naive
from bench.strategies.openai_compact import OpenAICompact

TOK = tokenizer()
ROOT = Path(__file__).resolve().parent.parent
TOOLS = ("run", "read", "todo")


def long_scenario(turns: int = 30, *, window: int = 2500, lines: int = 8, user_every: int = 10):
    """A long session: each turn one call (tools rotate) whose output has 1..`lines`+4 lines."""
    events = [{"id": "u0", "role": "user", "text": "Process items 0 onwards in order. Never touch prod."}]
    for i in range(turns):
        tool = TOOLS[i % len(TOOLS)]
        events.append({"id": f"a{i}", "role": "assistant", "text": f"Item {i}: calling {tool}.",
                       "calls": [{"id": f"c{i}", "tool": tool, "args": {"item": i, "path": f"src/m{i}.py"}}]})
        body = "\n".join(f"item {i} line {j}: value {i * 100 + j} in src/m{i}.py" for j in range(1 + (i % (lines + 4))))
        events.append({"id": f"r{i}", "role": "tool", "call": f"c{i}", "text": body})
        if i % user_every == user_every - 1:
            events.append({"id": f"u{i + 1}", "role": "user", "text": f"Good. After item {i} keep going."})
    events.append({"id": "end", "role": "assistant", "text": "All items done."})
    return loader.from_events(events, id="long", window=window, user="Dana")


def gist(messages) -> str:
    """The first line of the first and the last message read: what a real summary repeats of its conversation."""
    lines = [m.text.strip().splitlines()[0][:120] for m in (messages[:1] + messages[-1:]) if m.text.strip()]
    return " / ".join(dict.fromkeys(lines))


def overlong(messages, max_tokens) -> str:
    """A real answer (the conversation's own lines, no loop) far over its budget."""
    source = [x for m in messages[1:-1] for x in m.text.splitlines() if x.strip()]
    lines: list[str] = []
    while TOK.count("\n".join(lines)) < 3 * max_tokens:
        lines += source
    return "\n".join(lines)


class Recorder(Model):
    """Records every writer request; answers with `inner` or with a summary naming what it read."""
    name = "recorder"

    def __init__(self, inner: Model | None = None, reply=None):
        self.inner, self.reply, self.requests = inner, reply, []

    async def chat(self, messages, *, tools=None, max_tokens=None, purpose=""):
        self.requests.append((list(messages), max_tokens, purpose))
        if self.inner is not None:
            return await self.inner.chat(messages, tools=tools, max_tokens=max_tokens, purpose=purpose)
        text = self.reply(messages, max_tokens) if self.reply else \
            "Summary of " + " ".join(m.id for m in messages[1:-1]) + ": " + gist(messages[1:-1])
        return Reply(text=text, usage=Usage(input_tokens=10, output_tokens=TOK.count(text)), model="recorder")


def run(s, strategy, writer: Model | None = None, window: int | None = None, name: str = "mine"):
    """Replay; returns (stats, requests as rebuilt message lists, compaction records)."""
    rq, cp = io.StringIO(), io.StringIO()
    strategy.name = name
    stats = asyncio.run(replay(s, strategy, writer or Recorder(), TOK, ReplayOptions(window=window or s.window),
                               rq, cp, "cell"))
    records = [json.loads(line) for line in rq.getvalue().splitlines()]
    agent = [r.messages for r in replay_requests(iter(records), s, TOK, True) if r.kind == "agent"]
    comps = [json.loads(line) for line in cp.getvalue().splitlines()]
    return stats, agent, comps


def assert_paired(request):
    """Every call has its result in the request and every result its call, in that order."""
    open_calls: set[str] = set()
    answered: set[str] = set()
    for m in request:
        if m.role == "tool":
            assert m.call_id in open_calls, f"result {m.id} without its call"
            answered.add(m.call_id)
        open_calls.update(c.id for c in m.calls)
    assert open_calls == answered, f"calls without results: {sorted(open_calls - answered)}"


STRATEGIES = {
    "naive": lambda: Naive(),
    "naive_keep": lambda: Naive(keep_last=3),
    "context_editing": lambda: ContextEditing(clear_at_least=0),
    "context_editing_inputs": lambda: ContextEditing(clear_tool_inputs=True, keep=1),
    "masking": lambda: Masking(keep=4),
    "codex": lambda: Codex(),
    "codex_cut": lambda: Codex(user_budget=8),
    "openai_compact": lambda: OpenAICompact(),
    "hybrid": lambda: Hybrid(keep=4, keep_turns=3),
}


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_no_request_orphans_a_call_or_result_and_all_fit(name):
    s = long_scenario()
    stats, requests, comps = run(s, STRATEGIES[name](), OfflineModel())
    assert comps, "the long scenario must make every strategy act"
    for r in requests:
        assert_paired(r)
    limit = trigger_limit(s.window, *default_reserve(s.window))
    assert stats.overflows == 0
    assert max(TOK.request_size([m.tokens for m in r]) for r in requests) <= limit


@pytest.mark.parametrize("name", ["naive", "context_editing", "masking"])
def test_compaction_records_say_what_happened(name):
    s = long_scenario()
    _, _, comps = run(s, STRATEGIES[name](), OfflineModel(), name=name)
    ids = {e.id for e in s.events}
    for c in comps:
        assert c["strategy"] == name and c["event"] in ids and c["ok"]
        assert c["after"] < c["before"]
    if name == "naive":
        assert all(c["text"] and c["calls"] and c["calls"][0]["purpose"] == "summary" for c in comps)
        assert all(c["calls"][0]["output_tokens"] > 0 for c in comps)
    else:
        assert all(not c["calls"] for c in comps)
        key = "cleared" if name == "context_editing" else "masked"
        assert all(set(c[key]) <= ids for c in comps)


@pytest.mark.parametrize("target, value", [
    ("bench.strategies.naive.Naive", {"budget": -1}), ("bench.strategies.naive.Naive", {"keep_last": "x"}),
    ("bench.strategies.context_editing.ContextEditing", {"keep": -2}),
    ("bench.strategies.context_editing.ContextEditing", {"exclude_tools": "run"}),
    ("bench.strategies.masking.Masking", {"polling": 0}), ("bench.strategies.codex.Codex", {"user_budget": -5}),
    ("bench.strategies.openai_compact.OpenAICompact", {"keep": "all"}),
    ("bench.strategies.openai_compact.OpenAICompact", {"compact_threshold": "x"}),
    ("bench.strategies.hybrid.Hybrid", {"keep_turns": 0}), ("bench.strategies.hybrid.Hybrid", {"budget": 0})])
def test_bad_config_is_one_line_naming_the_strategy(target, value):
    from bench.runner.plan import make_strategy

    with pytest.raises(BadInput) as exc:
        make_strategy("mine", {"_target_": target, **value})
    assert len(exc.value.problems) == 1 and exc.value.problems[0].startswith("strategy.mine:")
    assert next(iter(value)) in exc.value.problems[0]


def summary_rows(out: Path) -> list[dict]:
    with (out / "summary.csv").open() as fh:
        return list(csv.DictReader(fh))


def run_all(tmp_path: Path, *extra: str) -> tuple[int, list[dict]]:
    from bench.runner.run import run as bench_run

    out = tmp_path / "run"
    code = bench_run(["strategies=[naive,context_editing,masking]", "suite=smoke", f"out={out}", *extra]).code
    return code, summary_rows(out)


def check_rows(rows: list[dict]) -> None:
    scenarios = {p.stem for p in (ROOT / "src" / "bench" / "scenarios" / "hand").glob("*.yaml")}
    assert {(r["scenario"], r["strategy"]) for r in rows} >= {(s, n) for s in scenarios
                                                             for n in ("naive", "context_editing", "masking")}
    naive = [r for r in rows if r["strategy"] == "naive"]
    assert sum(int(r["compactions"]) for r in naive) > 0
    assert all(int(r["compaction_failures"]) == 0 for r in rows)


def test_run_offline_on_the_smoke_suite(tmp_path):
    code, rows = run_all(tmp_path)
    assert code == 0
    check_rows(rows)


def test_run_through_litellm_against_the_loopback_server(tmp_path, monkeypatch):
    pytest.importorskip("bench.models.litellm_model")
    from bench.testing.server import LoopbackServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback-test")
    with LoopbackServer() as srv:
        code, rows = run_all(tmp_path, "writer.model=openai/loopback", f"writer.api_base={srv.url}",
                             "responses.enabled=false")
        assert srv.calls > 0
    assert code == 0
    check_rows(rows)
    assert {r["writer"] for r in rows} == {"openai/loopback"}


def test_a_writer_failing_over_http_is_retried_then_recorded_and_the_run_goes_on():
    pytest.importorskip("bench.models.litellm_model")
    from bench.harness.model import ModelConfig
    from bench.models.litellm_model import LitellmModel
    from bench.testing.server import LoopbackServer

    async def no_wait(seconds):
        return None

    with LoopbackServer() as srv:
        writer = LitellmModel(ModelConfig(model="openai/loopback", api_base=srv.url, retries=1))
        writer.sleep = no_wait
        srv.fail("500", times=2)          # the first try and its one retry
        stats, requests, comps = run(long_scenario(turns=70), Naive(), writer)
        calls = srv.calls
    first, rest = comps[0], comps[1:]
    assert not first["ok"] and "model failed" in first["error"] and first["fallback"] == "drop_oldest"
    assert len(first["calls"]) == 1 and "error" in first["calls"][0]
    assert len(rest) >= 2 and all(c["ok"] and c["text"] and c["calls"][0]["output_tokens"] for c in rest)
    assert calls == 2 + len(rest) and stats.compaction_failures == 1
    for r in requests:
        assert_paired(r)
