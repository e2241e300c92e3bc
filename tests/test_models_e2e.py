"""`compaction-bench run` with a litellm writer pointed at the loopback server.

A strategy's writer goes litellm -> HTTP -> server -> offline model and back;
the usage the run records is what the server reported; a second run is served
from the response cache; a writer that keeps failing becomes compaction
failures while every cell still completes; the API key never lands on disk.
"""
from __future__ import annotations

import json
from pathlib import Path

from bench.cli import main
from bench.harness.messages import make
from bench.results.store import read_csv
from bench.harness.strategy import Compaction, Strategy

SMOKE = ["suite=smoke", "writer.model=openai/test", "writer.backoff=0.01", "concurrency=1"]


class Summarise(Strategy):
    """The smallest writer-using strategy: everything so far becomes one summary. It lets
    ModelError escape, so the harness (not the strategy) must record the failure."""

    async def compact(self) -> Compaction:
        before = self.size()
        ask = make(self.session.tok, id="ask", role="user", text="Summarise the conversation so far.",
                   tag="instruction")
        reply = await self.session.writer.chat([self.session.system, *self.messages, ask], max_tokens=60,
                                               purpose="summary")
        self.messages = [self.session.message(id="summary", role="user", text=reply.text, tag="summary")]
        return Compaction(before=before, after=self.size(), text=reply.text)


def run(server, out: Path, *extra: str) -> tuple[int, list[dict], list[dict]]:
    code = main(["run", *SMOKE, f"writer.api_base={server.url}", f"out={out}", *extra])
    rows = read_csv(out / "summary.csv") if (out / "summary.csv").exists() else []
    comps = [json.loads(line) for line in (out / "compactions.jsonl").read_text().splitlines()] \
        if (out / "compactions.jsonl").exists() else []
    return code, rows, comps


def writer_calls(comps: list[dict]) -> list[dict]:
    return [c for comp in comps for c in comp["calls"]]


def test_baselines_make_no_writer_call(loopback, tmp_path):
    code, rows, _ = run(loopback, tmp_path / "r", "strategies=[truncate,full]", f"responses.dir={tmp_path / 'c'}")
    assert code == 0 and len(rows) == 6 and loopback.calls == 0


def test_writer_through_http_usage_retries_cache_and_no_key(loopback, tmp_path, api_key):
    args = ("strategies=[naive,test_models_e2e.Summarise]", "window=800", f"responses.dir={tmp_path / 'cache'}")
    loopback.cached_tokens = 32
    loopback.fail("429", times=2, retry_after=0.01)
    code, rows, comps = run(loopback, tmp_path / "first", *args)
    assert code == 0 and len(rows) == 6
    calls = writer_calls(comps)
    assert calls and loopback.calls == len(calls) + 2 and loopback.auth_seen == loopback.calls
    assert sum(c["retries"] for c in calls) == 2 and not any(c["cached"] for c in calls)
    served = loopback.usage
    assert sum(int(r["compaction_input_tokens"]) for r in rows) == sum(u["prompt_tokens"] for u in served)
    assert sum(int(r["compaction_output_tokens"]) for r in rows) == sum(u["completion_tokens"] for u in served)
    assert all(c["cached_input_tokens"] == min(32, c["input_tokens"]) for c in calls)
    assert {r["strategy"] for r in rows if int(r["compactions"])} == {"naive", "test_models_e2e.Summarise"}

    before = loopback.calls
    code, rows2, comps2 = run(loopback, tmp_path / "second", *args)
    assert code == 0 and loopback.calls == before                  # zero HTTP calls
    again = writer_calls(comps2)
    assert len(again) == len(calls) and all(c["cached"] for c in again)
    assert [c["input_tokens"] for c in again] == [c["input_tokens"] for c in calls]   # original usage

    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert api_key.encode() not in path.read_bytes(), path


def test_failing_writer_is_a_compaction_failure_and_the_run_completes(loopback, tmp_path):
    loopback.fail("500", times=10_000)
    code, rows, comps = run(loopback, tmp_path / "r", "strategies=[naive,test_models_e2e.Summarise,truncate]",
                            "window=800", "writer.retries=1", "responses.enabled=false")
    assert code == 1 and len(rows) == 9          # every cell done, and the exit code says the writer failed
    by = {(r["scenario"], r["strategy"]): r for r in rows}
    for (scenario, strategy), row in by.items():
        if strategy == "truncate":
            assert int(row["compactions"]) > 0 and int(row["compaction_failures"]) == 0
        else:
            assert int(row["compaction_failures"]) > 0 and int(row["compactions"]) == 0, (scenario, strategy)
    failed = [c for c in comps if not c["ok"]]
    assert failed and all("failed after 2 tries" in c["error"] for c in failed)
    assert all(call.get("error") for c in failed for call in c["calls"])
    assert loopback.calls == 2 * len([call for c in failed for call in c["calls"]])
