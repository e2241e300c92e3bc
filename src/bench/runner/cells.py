"""Replaying, scoring and storing cells: the run's engine.

Each cell (one scenario, strategy, writer, window, seed) is replayed into its own scratch logs, scored
from those logs, then appended to the run's requests.jsonl / compactions.jsonl and given its summary
row the moment it finishes (the run sorts its files into plan order at the end). A cell is either
finished (it has a row) or not there at all, so an interrupted run loses no finished cell and resumes
by replaying only the cells without a row.
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable

from bench.errors import BadInput, forked_pool
from bench.harness.logs import CELL_LOGS, read_jsonl
from bench.harness.model import Model, ModelConfig, is_offline
from bench.harness.replay import ReplayOptions, replay
from bench.models import build as build_model
from bench.models.cache import ANSWERED
from bench.models.litellm_model import scrub
from bench.results import failures
from bench.results.store import KEY_COLUMNS, SUMMARY_COLUMNS, append_csv
from bench.runner.plan import Cell, make_strategy
from bench.scoring import CHECK_COLUMNS, score_cell, warm
from bench.scoring.memo import Memo
from bench.tokens import tokenizer

# What this process's scoring keeps between the cells it runs (a forked worker starts from a copy).
MEMO = Memo()
# Called after each finished cell: (finished so far, cells in all, the cell, its summary row).
Progress = Callable[[int, int, Cell, dict], None]


async def run_cell(cell: Cell, model: Model, out: Path) -> dict[str, Any]:
    """Replay and score one cell, then add it to the run's files; returns its summary row."""
    row, checks = await compute_cell(cell, model, out)
    store_cell(out, cell, row, checks)
    return row


async def compute_cell(cell: Cell, model: Model, out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Replay and score one cell into its own scratch folder (out/.cells/<slug>): its summary row and
    checks rows. Touches no shared file, so offline cells can run in worker processes."""
    scratch = out / ".cells" / cell.slug
    scratch.mkdir(parents=True, exist_ok=True)
    tok = tokenizer(cell.encoding)
    strategy = make_strategy(cell.strategy, cell.strategy_cfg)
    opts = ReplayOptions(window=cell.window, markers=cell.markers, reserve_output=cell.reserve_output,
                         margin=cell.margin)
    answered: list = []              # (cache, key) of each writer call, to forget what the strategy rejected
    token = ANSWERED.set(answered)
    try:
        with (scratch / "requests.jsonl").open("w", encoding="utf-8") as rq, \
                (scratch / "compactions.jsonl").open("w", encoding="utf-8") as cp:
            stats = await replay(cell.scenario, strategy, model, tok, opts, rq, cp, cell.name)
    finally:
        ANSWERED.reset(token)
    calls, failed = _forget_rejected(scratch / "compactions.jsonl", answered)
    row: dict[str, Any] = dict(zip(KEY_COLUMNS, cell.key))
    row.update({k: getattr(stats, k) for k in SUMMARY_COLUMNS if hasattr(stats, k)})
    started = time.perf_counter()
    scores, checks = await score_cell(cell, scratch, tok, oracle=cell.oracle, memo=MEMO)
    row.update(scores)
    row["wall_s"] = round(stats.wall_s + time.perf_counter() - started, 3)
    row["_fallbacks"] = stats.fallbacks   # shown on the console; not summary columns
    row["_probes_unrun"] = sum(str(c.get("detail", "")).startswith("failed to run") for c in checks)
    row["_probes"] = sum(c.get("point") == "probe" for c in checks)
    row["_oracle_unrun"] = sum("; oracle failed to run" in str(c.get("detail", "")) for c in checks)
    row["_writer_calls"], row["_writer_failed"] = calls, failed
    mine = failures.read(read_jsonl(scratch / "compactions.jsonl")).get(cell.name)
    row["_answers"], row["_non_answers"] = (mine.answered, mine.non_answers) if mine else (0, 0)
    row["_failure_notes"] = failures.cell_note(mine) if mine else []
    row["_non_answer_cell"] = bool(mine and mine.flagged)
    return row, checks


def _forget_rejected(path: Path, answered: list) -> tuple[int, int]:
    """(writer calls, failed calls) of a cell, from its compactions; the cached answers of each compaction
    the run recorded as failed (ok false or an error: an invalid checkpoint after its repair, an empty
    summary) are forgotten, so a later run asks again rather than replaying a failure as a good answer.
    Calls pair with the log's in order; when they cannot be paired (a call no compaction record holds),
    every answer of a cell with a failed compaction is forgotten: asking again costs a call, replaying a
    rejected answer costs the result."""
    records = [(rec, c) for rec in read_jsonl(path) for c in rec.get("calls") or ()]
    rejected = lambda rec: rec.get("ok") is False or bool(rec.get("error"))   # noqa: E731
    keys: dict[int, tuple[Any, list[str]]] = {}
    if len(records) == len(answered):      # one logged call per model call, in the same order
        pairs = [(cache, key) for (rec, _), (cache, key) in zip(records, answered) if rejected(rec)]
    else:
        pairs = list(answered) if any(rejected(rec) for rec in read_jsonl(path)) else []
    for cache, key in pairs:
        if cache is not None:
            keys.setdefault(id(cache), (cache, []))[1].append(key)
    for cache, ks in keys.values():
        cache.forget(ks)
    return len(records), sum(bool(c.get("error")) for _, c in records)


def store_cell(out: Path, cell: Cell, row: dict[str, Any], checks: list[dict[str, Any]]) -> None:
    """Append a computed cell's logs, checks and summary row to the run's files (the parent process only)."""
    scratch = out / ".cells" / cell.slug
    for name in CELL_LOGS:
        if not (scratch / name).exists():     # verdicts.jsonl: none when the cell was never scored
            continue
        with (out / name).open("a", encoding="utf-8") as dst, (scratch / name).open(encoding="utf-8") as src:
            shutil.copyfileobj(src, dst)
    if checks:
        append_csv(out / "checks.csv", CHECK_COLUMNS, checks)
    append_csv(out / "summary.csv", SUMMARY_COLUMNS, [row], durable=True)   # the row is what marks the cell done
    shutil.rmtree(scratch, ignore_errors=True)


def _offline(cell: Cell) -> bool:
    return all(is_offline(m.model) for m in (cell.writer, cell.agent, cell.judge))


def _compute_offline(cell: Cell, out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A worker process's job: one offline cell, start to finish (its own model; no network)."""
    return asyncio.run(compute_cell(cell, build_model(cell.writer), out))


async def run_cells(cells: list[Cell], out: Path, concurrency: int, progress: Progress | None = None,
                    models: dict[str, Model] | None = None, real_cells: int | None = None) -> tuple[list[dict], list[str]]:
    """Offline cells are independent and CPU-bound: with concurrency > 1 they run in that many worker
    processes (both cores). Cells with a real model mostly wait on the network, so up to `real_cells`
    (default `concurrency`) run here at once, each one's calls in order, and the account's limiter
    (bench.models.limiter) decides how many calls are in flight. `models` (filled here, one per distinct
    writer config) lets the caller read each real model's call counts."""
    models = {} if models is None else models   # one per distinct config, so its bound spans cells
    for c in cells:
        if _model_key(c.writer) not in models:
            models[_model_key(c.writer)] = build_model(c.writer)
    sem = asyncio.Semaphore(max(1, real_cells or concurrency))
    rows: list[dict] = []
    errors: list[str] = []
    total = len(cells)
    offline = [c for c in cells if _offline(c)]
    if offline and concurrency > 1:     # loaded once here, the workers fork with it and the report reuses it
        for encoding in sorted({c.encoding for c in offline}):
            tokenizer(encoding)
    pools, groups = _pools(offline, concurrency)

    def failed(cell: Cell, exc: BaseException) -> None:
        why = scrub(f"{type(exc).__name__}: {' '.join(str(exc).split())}")[:2000]
        errors.append(f"{cell.name}: {why}")
        with (out / "errors.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"cell": cell.name, "error": why}) + "\n")

    async def one(cell: Cell, pool: Any = None) -> None:
        try:
            if pool is not None:
                loop = asyncio.get_running_loop()
                row, checks = await loop.run_in_executor(pool, _compute_offline, cell, out)
            else:
                async with sem:
                    row, checks = await compute_cell(cell, models[_model_key(cell.writer)], out)
        except BadInput:
            raise
        except Exception as exc:  # a strategy bug fails its cell, not the run
            failed(cell, exc)
            return
        store_cell(out, cell, row, checks)    # at once: a cell the console calls finished is on disk
        rows.append(row)
        if progress is not None:
            progress(len(rows) + len(errors), total, cell, row)

    async def worker(pool: Any) -> None:
        """Takes the next scenario (largest first) when it is down to its last cell, so it never waits
        for the parent to store a cell and hand it another one."""
        running: set[asyncio.Future] = set()
        while groups:
            running |= {asyncio.ensure_future(one(c, pool)) for c in groups.pop(0)}
            while len(running) > 1:
                done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()       # a BadInput stops the run, as from any cell
        if running:
            await asyncio.gather(*running)

    grouped = {c.key for g in groups for c in g}
    try:
        await asyncio.gather(*(worker(p) for p in pools),
                             *(one(c) for c in cells if c.key not in grouped))
    except BaseException:
        for pool in pools:      # interrupted: a worker's unfinished cell is not waited for
            _end_workers(pool)
        raise
    finally:
        for pool in pools:
            pool.shutdown(wait=True, cancel_futures=True)
    return rows, errors


def _quiet_worker() -> None:
    """A worker leaves Ctrl-C and SIGTERM to the parent, which kills it (its unfinished cell is not
    wanted): no traceback from each worker when a terminal or a CI runner signals the whole group."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """Kill a pool's worker processes (ProcessPoolExecutor has no public way before Python 3.14)."""
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            proc.kill()
        except (OSError, ValueError):
            pass


def _pools(cells: list[Cell], concurrency: int) -> tuple[list[Any], list[list[Cell]]]:
    """Single-process executors, one per worker, and the offline cells grouped by scenario, largest
    first. A worker runs a whole group, so the findings per message and the oracle's probe answers it
    caches are computed once per scenario; each takes the next group when it is free (a fixed split
    by size guesses the cost of a scenario's cells, and one worker then idles while the other ends).
    With fewer scenarios than workers (a run over one scenario), the largest groups are halved so every
    worker has cells, and the parent works out their scenarios' scoring index before the workers fork
    from it: they share it instead of each building its own."""
    groups: dict[tuple, list[Cell]] = {}
    for c in cells:
        groups.setdefault((c.scenario.id, c.scenario.path), []).append(c)
    n = min(max(1, concurrency), os.cpu_count() or 1, len(cells))
    if n < 2:
        return [], []
    weight = {k: len(g) * sum(len(e.text) for e in g[0].scenario.events) for k, g in groups.items()}
    order = [groups[k] for k in sorted(groups, key=lambda k: -weight[k])]
    split = False
    while len(order) < n:
        big = max(range(len(order)), key=lambda i: (len(order[i]) > 1, len(order[i])))
        if len(order[big]) < 2:
            break
        g = order.pop(big)
        order[big:big] = [g[:(len(g) + 1) // 2], g[(len(g) + 1) // 2:]]
        split = True
    if split:
        for c in {(c.scenario.id, c.scenario.path, c.markers): c for g in order for c in g}.values():
            warm(MEMO, c.scenario, tokenizer(c.encoding), c.markers)
    pools = [forked_pool(1, _quiet_worker)
             for _ in range(min(n, len(order)))]
    return pools, order


def _model_key(cfg: ModelConfig) -> str:
    return json.dumps(asdict(cfg), sort_keys=True, default=str)
