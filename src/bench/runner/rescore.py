"""Re-score a finished run from its logs (`compaction-bench score RUN_DIR`), without replaying anything.

Scoring reads only the logs and the scenario's truth, so a scorer change can be reviewed on a big run
in the time scoring takes. The run's own config.yaml re-plans its cells (the same composition a run
makes), each cell's log lines are scored afresh, and summary.csv, checks.csv, requests.jsonl (whose
probe records the scorer writes again), repeats.csv and the report are rewritten in the run's order.
What the replay measured — events, requests, compactions, the replay's token counts, wall time — is
kept from the old summary row; every column the scorer computes is new.
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from bench.errors import BadInput, forked_pool
from bench.harness.logs import VERDICTS
from bench.report import write_report
from bench.results.repeats import write_spread
from bench.results.resume import summary_rows
from bench.results.store import SUMMARY_COLUMNS, append_csv, cell_key, cell_of, lines, read_config
from bench.runner.plan import Cell, plan
from bench.scoring import CHECK_COLUMNS, score_cell
from bench.scoring.memo import Memo
from bench.tokens import tokenizer



@dataclass
class Rescored:
    out: Path
    rows: list[dict[str, Any]] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)     # "cell: column old -> new", for the console


def rescore(run_dir: Path, progress: Callable[[int, int, str], None] | None = None) -> Rescored:
    run_dir = Path(run_dir)
    old = summary_rows(run_dir / "summary.csv")[0]
    if not old:
        raise BadInput(f"{run_dir}: no finished cell in summary.csv (is it a results folder?)")
    cells = _cells(run_dir, old)
    logs = {name: _by_cell(run_dir / name) for name in ("requests.jsonl", "compactions.jsonl")}   # the replay's
    scratch = run_dir / ".rescore"
    shutil.rmtree(scratch, ignore_errors=True)
    result = Rescored(run_dir)
    checks: list[dict[str, Any]] = []
    requests: list[str] = []
    verdicts: list[str] = []
    try:
        jobs = []
        for row in old:
            cell = cells[cell_key(row)]
            folder = scratch / cell.slug
            folder.mkdir(parents=True)
            kept = [line for line in logs["requests.jsonl"].get(cell.name, []) if not _probe(line)]
            (folder / "requests.jsonl").write_text("".join(kept), encoding="utf-8")
            (folder / "compactions.jsonl").write_text("".join(logs["compactions.jsonl"].get(cell.name, [])),
                                                      encoding="utf-8")
            jobs.append((cell, folder))
        for n, ((cell, folder), row, (scores, rows)) in enumerate(zip(jobs, old, _score_all(jobs)), 1):
            result.changed += [f"{cell.name}: {k} {row.get(k, '')} -> {_shown(v)}" for k, v in scores.items()
                               if k in SUMMARY_COLUMNS and str(row.get(k, "")) != _shown(v)]
            result.rows.append({**row, **scores})
            checks += rows
            requests += (folder / "requests.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
            verdicts += (folder / VERDICTS).read_text(encoding="utf-8").splitlines(keepends=True)
            if progress is not None:
                progress(n, len(old), cell.name)
        _replace(run_dir / "summary.csv", lambda p: append_csv(p, SUMMARY_COLUMNS, result.rows))
        _replace(run_dir / "checks.csv", lambda p: append_csv(p, CHECK_COLUMNS, checks))
        _replace(run_dir / "requests.jsonl", lambda p: p.write_text("".join(requests), encoding="utf-8"))
        _replace(run_dir / VERDICTS, lambda p: p.write_text("".join(verdicts), encoding="utf-8"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    write_spread(run_dir)
    write_report(run_dir, list({c.scenario.path: c.scenario for c in cells.values()}.values()))
    return result


def _score_all(jobs: list[tuple[Cell, Path]]) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """Score each (cell, its log folder), in order; on more than one core the scenarios are spread over
    forked workers, each scoring whole scenarios so its Memo serves all their cells."""
    groups: dict[str, list[int]] = {}
    for i, (cell, _) in enumerate(jobs):
        groups.setdefault(cell.scenario.id, []).append(i)
    workers = min(os.cpu_count() or 1, len(groups))
    if workers < 2:
        return _score_group(jobs)
    order = sorted(groups.values(), key=len, reverse=True)
    with forked_pool(workers) as pool:
        done = list(pool.map(_score_group, [[jobs[i] for i in g] for g in order]))
    out: list[Any] = [None] * len(jobs)
    for g, scored in zip(order, done):
        for i, s in zip(g, scored):
            out[i] = s
    return out


def _score_group(jobs: list[tuple[Cell, Path]]) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    memo = Memo()
    return [asyncio.run(score_cell(cell, folder, tokenizer(cell.encoding), oracle=cell.oracle, memo=memo))
            for cell, folder in jobs]


def _cells(run_dir: Path, rows: list[dict[str, str]]) -> dict[tuple[str, ...], Cell]:
    """The run's cells, planned again from its config.yaml, for every row of its summary."""
    cfg = read_config(run_dir)
    overrides = cfg.get("overrides")
    if not isinstance(overrides, list) or not all(isinstance(o, str) for o in overrides):
        raise BadInput(f"{run_dir / 'config.yaml'}: no 'overrides' list; only a folder a run wrote can be re-scored")
    if any("***" in o for o in overrides):
        raise BadInput(f"{run_dir / 'config.yaml'}: an override was redacted (a secret); re-run instead")
    kept = [o for o in overrides if not o.lstrip("+~").startswith(("out=", "shard=", "resume="))]
    cells, _, _ = plan([*kept, f"out={run_dir}"], "sweep" in cfg)
    by_key = {c.key: c for c in cells}
    missing = [r for r in rows if cell_key(r) not in by_key]
    if missing:
        raise BadInput(f"{run_dir / 'summary.csv'}: cell {'/'.join(cell_key(missing[0]))} is not in the plan its "
                       f"config.yaml makes here (other scenario files or strategies?)"
                       + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    return by_key


def _by_cell(path: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    if path.exists():
        for line in lines(path.read_text(encoding="utf-8", errors="surrogateescape")):
            name = cell_of(line)
            if name is not None:
                out.setdefault(name, []).append(line)
    return out


def _probe(line: str) -> bool:
    return json.loads(line).get("kind") == "probe"


def _shown(v: Any) -> str:
    """A value as summary.csv writes it (`append_csv`)."""
    return "" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v)


def _replace(path: Path, write: Callable[[Path], None]) -> None:
    """Write beside, then swap in: an interrupted re-score leaves the old file whole."""
    tmp = path.with_name(f".{path.name}.rescore")
    tmp.unlink(missing_ok=True)
    write(tmp)
    if not tmp.exists():      # nothing to write (a run without checks)
        tmp.write_text("", encoding="utf-8")
    os.replace(tmp, path)


__all__ = ["rescore", "Rescored"]
