"""Results store: an interrupted run resumes with only the missing cells and no duplicated lines."""
from __future__ import annotations

import json
from collections import Counter

from bench.cli import main as cli
from bench.results.resume import prune_unfinished
from bench.results.store import SUMMARY_COLUMNS, append_csv, read_csv

ARGS = ["scenarios=[scenarios/hand/injected-watch.yaml]", "strategies=[truncate,naive]", "probes.enabled=false"]


def cells_of(path):
    return Counter(json.loads(x)["cell"] for x in path.read_text().splitlines())


def test_resume_finishes_only_missing_cells(tmp_path):
    out = tmp_path / "run"
    assert cli(["run", *ARGS, f"out={out}"]) == 0
    full = {n: cells_of(out / n) for n in ("requests.jsonl", "compactions.jsonl")}
    checks = len(read_csv(out / "checks.csv"))
    rows = read_csv(out / "summary.csv")
    # interrupt: the last cell lost its summary row after its logs and checks were appended
    lines = (out / "summary.csv").read_text().splitlines(keepends=True)
    (out / "summary.csv").write_text("".join(lines[:-1]))
    assert cli(["run", *ARGS, f"out={out}"]) == 0
    assert sorted(r["strategy"] for r in read_csv(out / "summary.csv")) == sorted(r["strategy"] for r in rows)
    assert {n: cells_of(out / n) for n in full} == full
    assert len(read_csv(out / "checks.csv")) == checks
    before = (out / "summary.csv").read_text()
    assert cli(["run", *ARGS, "resume=true", f"out={out}"]) == 0      # nothing left to do
    assert (out / "summary.csv").read_text() == before


def test_prune_drops_a_half_written_last_log_line(tmp_path):
    done = {"scenario": "s", "strategy": "naive", "writer": "offline", "window": 1000, "seed": 0}
    append_csv(tmp_path / "summary.csv", SUMMARY_COLUMNS, [done])
    ok = json.dumps({"cell": "s/naive/offline/1000/0", "i": 0}) + "\n"
    lines = [ok, json.dumps({"cell": "s/truncate/offline/1000/0", "i": 0}) + "\n", "[1, 2]\n", '{"cell": "s/naive/of']
    (tmp_path / "requests.jsonl").write_text("".join(lines))
    (tmp_path / "compactions.jsonl").write_bytes(ok.encode() + b'{"cell": "\xff')
    assert prune_unfinished(tmp_path) == 4
    assert (tmp_path / "requests.jsonl").read_text() == ok and (tmp_path / "compactions.jsonl").read_text() == ok
