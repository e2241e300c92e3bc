"""`compaction-bench run`: scenarios x strategies x writers -> results/<run-id>/.

Each cell (one scenario, strategy, writer, window, seed) is replayed into its
own scratch logs, scored from those logs, then appended to the run's
requests.jsonl / compactions.jsonl and given its summary row. A cell is either
finished (it has a row) or not there at all, so an interrupted run resumes by
replaying only the cells without a row.
"""
from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import os
import secrets
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.scenarios import loader
from bench.runner.config import compose, config_dirs, config_file, did_you_mean, scenario_bases, expand_sweeps, redact, redact_override
from bench.errors import BadInput
from bench.models import build as build_model
from bench.harness.model import Model, ModelConfig, is_offline
from bench.models.cache import ANSWERED, responses_dir
from bench.harness.replay import ReplayOptions, replay
from bench.results.store import KEY_COLUMNS, SUMMARY_COLUMNS, append_csv, cell_key, done_cells, format_table, read_csv, write_scenarios
from bench.scenarios.model import Scenario
from bench.runner.settings import check_run, result_changes
from bench.scoring import settings
from bench.harness.strategy import Strategy
from bench.tokens import encoding_for, tokenizer


@dataclass(frozen=True)
class Cell:
    scenario: Scenario
    strategy: str
    strategy_cfg: dict[str, Any]
    writer: ModelConfig
    window: int
    seed: int
    markers: bool = True
    reserve_output: int | None = None
    margin: int | None = None
    encoding: str = "o200k_base"
    agent: ModelConfig = field(default_factory=ModelConfig)
    judge: ModelConfig = field(default_factory=ModelConfig)
    scoring: Any = None   # bench.scoring.Scoring: cache profile, price model, probe settings
    variant: str = ""     # the swept settings (other than writer, window, seed) that set this cell apart
    oracle: bool = False  # its strategy class is one the run's config names in `oracles:`

    @property
    def label(self) -> str:
        """The strategy column: the strategy's name, plus its variant when a sweep made several."""
        return f"{self.strategy}[{self.variant}]" if self.variant else self.strategy

    @property
    def key(self) -> tuple[str, ...]:
        return (self.scenario.id, self.label, self.writer.model, str(self.window), str(self.seed))

    @property
    def name(self) -> str:
        return "/".join(self.key)

    @property
    def slug(self) -> str:
        return hashlib.sha1(self.name.encode()).hexdigest()[:12]


def model_config(node: Any, seed: int, cache_dir: str | None = None, refresh: bool = False) -> ModelConfig:
    from omegaconf import OmegaConf

    data = OmegaConf.to_container(node, resolve=True) if not isinstance(node, dict) else dict(node)
    known = {f for f in ModelConfig.__dataclass_fields__}
    extra = {k: v for k, v in data.items() if k not in known}
    return ModelConfig(**{k: v for k, v in data.items() if k in known and k not in ("extra", "cache_dir", "refresh")},
                       extra={**data.get("extra", {}), **extra}, seed=seed,
                       cache_dir=data.get("cache_dir", cache_dir), refresh=bool(data.get("refresh", refresh)))


def strategy_config(cfg: Any, name: str) -> dict[str, Any]:
    from omegaconf import OmegaConf

    if name in cfg.strategy:
        return OmegaConf.to_container(cfg.strategy[name], resolve=True)
    own = config_file("strategy", name, cfg)   # a file in a strategy/ folder works without a defaults entry
    if own is not None:
        return OmegaConf.to_container(OmegaConf.load(own), resolve=True)
    if "." in name:
        return {"_target_": name}
    known = sorted({*cfg.strategy, *(p.stem for d in config_dirs(cfg) for p in (d / "strategy").glob("*.yaml"))})
    raise BadInput(f"strategies: unknown strategy '{name}'{did_you_mean(name, known)} (configured: {', '.join(known)}; "
                   f"a file strategy/{name}.yaml in conf/ or your config_dir, or a dotted class path)")


def make_strategy(name: str, spec: dict[str, Any]) -> Strategy:
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    try:
        strategy = instantiate(spec, _convert_="all")
    except (InstantiationException, TypeError, ValueError, ImportError) as exc:
        cause = exc.__cause__ or exc
        raise BadInput(f"strategy.{name}: cannot build {spec.get('_target_')}: {' '.join(str(cause).split())}")
    if not isinstance(strategy, Strategy):
        raise BadInput(f"strategy.{name}: {spec.get('_target_')} is not a bench.strategy.Strategy")
    strategy.name = name
    return strategy


def plan(overrides: list[str], multirun: bool) -> tuple[list[Cell], Any, list[Any]]:
    """Compose every sweep combination and list the cells to run."""
    combos = expand_sweeps(overrides) if multirun else [overrides]
    cfgs = [compose(c) for c in combos]
    variants = sweep_labels(combos)
    cells: list[Cell] = []
    cache: dict[tuple, list[Scenario]] = {}
    for cfg, variant in zip(cfgs, variants):
        patterns, names = check_run(cfg)
        if tuple(patterns) not in cache:
            cache[tuple(patterns)] = loader.load_all(loader.expand(patterns, base=scenario_bases(cfg)))
        responses = cfg.get("responses") or {}
        cache_dir = responses_dir(bool(responses.get("enabled", True)), responses.get("dir"))
        refresh = bool(responses.get("refresh", False))
        scoring = settings(cfg)
        seeds = range(cfg.seed, cfg.seed + int(cfg.get("repeats") or 1))   # repeats: one cell per seed
        writers = {(name, seed): _writers(model_config(cfg.writer, seed, cache_dir, refresh), cfg, name)
                   for name in names for seed in seeds}
        for scenario in cache[tuple(patterns)]:
            for name in names:
                for i in range(len(writers[name, seeds[0]])):
                    for seed in seeds:
                        w = writers[name, seed][i]
                        cells.append(Cell(scenario, name, strategy_config(cfg, name), w,
                                          cfg.window or scenario.window, seed, cfg.markers, cfg.reserve_output,
                                          cfg.margin, cfg.encoding or encoding_for(w.model),
                                          model_config(cfg.agent, seed, cache_dir, refresh),
                                          model_config(cfg.judge, seed, cache_dir, refresh), scoring, variant,
                                          _oracle(cfg, name)))
    _check_room(cells)
    for c in {c.label: c for c in cells}.values():
        make_strategy(c.strategy, c.strategy_cfg)  # fail on a bad strategy config before anything runs
    unique: dict[tuple, Cell] = {}
    for c in cells:
        unique.setdefault(c.key, c)
    return list(unique.values()), cfgs[0], cfgs


def _oracle(cfg: Any, name: str) -> bool:
    """The run's config, not the strategy, says which classes are oracles (a strategy cannot declare it)."""
    return strategy_config(cfg, name).get("_target_") in list(cfg.get("oracles") or ())


def _writers(writer: ModelConfig, cfg: Any, name: str) -> list[ModelConfig]:
    """The writer, plus its stress profiles (config `stress:`) when it is the plain offline writer and
    the strategy calls a writer: a run shows how much a design depends on a faithful writer."""
    profiles = list(cfg.get("stress") or ())
    if writer.model != "offline" or not profiles:
        return [writer]
    if not getattr(make_strategy(name, strategy_config(cfg, name)), "calls_writer", False):
        return [writer]
    return [writer, *(replace(writer, model=f"offline:{p}") for p in profiles)]


def _check_room(cells: list[Cell]) -> None:
    """A window= (or reserve_output= / margin=) that leaves no room for any request is bad input, one line
    per setting: every request would overflow whatever the strategy did, and score as lost."""
    from bench.scenarios.validate import room

    seen: set[tuple] = set()
    found: dict[tuple, list[str]] = {}
    for c in cells:
        key = (c.scenario.id, c.window, c.reserve_output, c.margin, c.encoding)
        if key not in seen:
            seen.add(key)
            why = room(c.scenario, c.window, c.reserve_output, c.margin, c.encoding)
            if why:
                found.setdefault((c.window, c.reserve_output, c.margin), []).append(f"scenario {c.scenario.id}: {why}")
    lines = [f"window: {whys[0]}" + (f" (and {len(whys) - 1} more scenarios)" if len(whys) > 1 else "")
             for whys in found.values()]
    if lines:
        raise BadInput(lines)


def sweep_labels(combos: list[list[str]]) -> list[str]:
    """Per sweep combination, the swept settings that the summary's key columns do not already show."""
    shown = {"writer.model", "window", "seed", "scenarios", "strategies", "suite", "out"}
    parsed = [dict(o.lstrip("+~").split("=", 1) for o in combo if "=" in o) for combo in combos]
    keys = [k for k in dict.fromkeys(k for p in parsed for k in p)
            if k not in shown and len({p.get(k) for p in parsed}) > 1]
    return [",".join(f"{k}={p.get(k, '')}" for k in keys) for p in parsed]


def out_dir(cfg: Any) -> Path:
    if cfg.out:
        return Path(str(cfg.out))
    if cfg.get("resume"):
        from bench.results.store import latest_run

        latest = latest_run()
        if latest is None:
            raise BadInput("resume: no earlier run under results/ to resume (give out=DIR)")
        return latest
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("results") / f"{stamp}-{secrets.token_hex(2)}"  # two runs in one second stay apart


async def run_cell(cell: Cell, model: Model, out: Path) -> dict[str, Any]:
    """Replay and score one cell, then add it to the run's files; returns its summary row."""
    row, checks = await compute_cell(cell, model, out)
    store_cell(out, cell, row, checks)
    return row


async def compute_cell(cell: Cell, model: Model, out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Replay and score one cell into its own scratch folder (out/.cells/<slug>): its summary row and
    checks rows. Touches no shared file, so offline cells can run in worker processes."""
    from bench.scoring import score_cell

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
    scores, checks = await score_cell(cell, scratch, tok, oracle=cell.oracle)
    row.update(scores)
    row["wall_s"] = round(stats.wall_s + time.perf_counter() - started, 3)
    row["_fallbacks"] = stats.fallbacks   # shown on the console; not summary columns
    row["_probes_unrun"] = sum(str(c.get("detail", "")).startswith("failed to run") for c in checks)
    row["_probes"] = sum(c.get("point") == "probe" for c in checks)
    row["_writer_calls"], row["_writer_failed"] = calls, failed
    return row, checks


def _forget_rejected(path: Path, answered: list) -> tuple[int, int]:
    """(writer calls, failed calls) of a cell, from its compactions; the cached answers of each compaction
    the strategy rejected (it records an error: an invalid checkpoint after its repair, an empty summary)
    are forgotten, so a later run asks again rather than replaying a failure as a good answer."""
    from bench.harness.logs import read_jsonl

    records = [(rec, c) for rec in read_jsonl(path) for c in rec.get("calls") or ()]
    if len(records) == len(answered):      # one logged call per model call, in the same order
        keys: dict[int, tuple[Any, list[str]]] = {}
        for (rec, _), (cache, key) in zip(records, answered):
            if rec.get("error") and cache is not None:
                keys.setdefault(id(cache), (cache, []))[1].append(key)
        for cache, ks in keys.values():
            cache.forget(ks)
    return len(records), sum(bool(c.get("error")) for _, c in records)


def store_cell(out: Path, cell: Cell, row: dict[str, Any], checks: list[dict[str, Any]]) -> None:
    """Append a computed cell's logs, checks and summary row to the run's files (the parent process only)."""
    scratch = out / ".cells" / cell.slug
    for name in ("requests.jsonl", "compactions.jsonl"):
        with (out / name).open("a", encoding="utf-8") as dst, (scratch / name).open(encoding="utf-8") as src:
            shutil.copyfileobj(src, dst)
    if checks:
        from bench.scoring import CHECK_COLUMNS
        append_csv(out / "checks.csv", CHECK_COLUMNS, checks)
    append_csv(out / "summary.csv", SUMMARY_COLUMNS, [row], durable=True)   # the row is what marks the cell done
    shutil.rmtree(scratch, ignore_errors=True)


def _offline(cell: Cell) -> bool:
    return all(is_offline(m.model) for m in (cell.writer, cell.agent, cell.judge))


def _compute_offline(cell: Cell, out: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A worker process's job: one offline cell, start to finish (its own model; no network)."""
    return asyncio.run(compute_cell(cell, build_model(cell.writer), out))


async def run_cells(cells: list[Cell], out: Path, concurrency: int) -> tuple[list[dict], list[str]]:
    """Offline cells are independent and CPU-bound: with concurrency > 1 they run in that many worker
    processes (both cores); cells with a real model run here, their calls bounded per model."""
    models: dict[str, Model] = {}  # one per distinct config, so its concurrency bound spans cells
    for c in cells:
        if _model_key(c.writer) not in models:
            models[_model_key(c.writer)] = build_model(c.writer)
    sem = asyncio.Semaphore(max(1, concurrency))
    rows: list[dict] = []
    errors: list[str] = []
    total = len(cells)
    offline = [c for c in cells if _offline(c)]
    if offline and concurrency > 1:     # loaded once here, the workers fork with it and the report reuses it
        from bench.tokens import tokenizer

        for encoding in sorted({c.encoding for c in offline}):
            tokenizer(encoding)
    pools, groups = _pools(offline, concurrency)
    index = {c.key: i for i, c in enumerate(cells)}

    def failed(cell: Cell, exc: BaseException) -> None:
        from bench.models.litellm_model import scrub   # an exception's text may quote a key from the environment

        why = scrub(f"{type(exc).__name__}: {' '.join(str(exc).split())}")[:2000]
        errors.append(f"{cell.name}: {why}")
        with (out / "errors.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"cell": cell.name, "error": why}) + "\n")

    # Cells are stored in plan order, whatever order the workers finish in, so two runs of the same
    # plan write identical files; a finished cell waits in `ready` only until the ones before it are
    # stored, and an interruption stores whatever is ready (a resume then finishes the rest).
    ready: dict[int, tuple[Cell, dict, list] | None] = {}
    stored = 0

    def flush(everything: bool = False) -> None:
        nonlocal stored
        for i in sorted(ready) if everything else ():
            done = ready.pop(i)
            if done is not None:
                store_cell(out, *done)
        while stored in ready:
            done = ready.pop(stored)
            if done is not None:
                store_cell(out, *done)
            stored += 1

    async def one(i: int, cell: Cell, pool: Any = None) -> None:
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
            ready[i] = None
            flush()
            return
        ready[i] = (cell, row, checks)
        flush()
        rows.append(row)
        print(f"[{len(rows) + len(errors)}/{total}] {cell.name}  {row['wall_s']}s{_notes(row)}", file=sys.stderr)

    async def worker(pool: Any) -> None:
        """Takes the next scenario (largest first) when it is down to its last cell, so it never waits
        for the parent to store a cell and hand it another one."""
        running: set[asyncio.Future] = set()
        while groups:
            running |= {asyncio.ensure_future(one(index[c.key], c, pool)) for c in groups.pop(0)}
            while len(running) > 1:
                done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()       # a BadInput stops the run, as from any cell
        if running:
            await asyncio.gather(*running)

    grouped = {c.key for g in groups for c in g}
    try:
        await asyncio.gather(*(worker(p) for p in pools),
                             *(one(i, c) for i, c in enumerate(cells) if c.key not in grouped))
    finally:
        flush(everything=True)
        for pool in pools:
            pool.shutdown(wait=True, cancel_futures=True)
    for model in models.values():
        _report_calls(model)
    return rows, errors


def _pools(cells: list[Cell], concurrency: int) -> tuple[list[Any], list[list[Cell]]]:
    """Single-process executors, one per worker, and the offline cells grouped by scenario, largest
    first. A worker runs a whole group, so the findings per message and the oracle's probe answers it
    caches are computed once per scenario; each takes the next group when it is free (a fixed split
    by size guesses the cost of a scenario's cells, and one worker then idles while the other ends)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    groups: dict[tuple, list[Cell]] = {}
    for c in cells:
        groups.setdefault((c.scenario.id, c.scenario.path), []).append(c)
    n = min(max(1, concurrency), os.cpu_count() or 1, len(groups))
    if n < 2:
        return [], []
    pools = [ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) for _ in range(n)]
    weight = {k: len(g) * sum(len(e.text) for e in g[0].scenario.events) for k, g in groups.items()}
    return pools, [groups[k] for k in sorted(groups, key=lambda k: -weight[k])]


def _notes(row: dict[str, Any]) -> str:
    """What a cell's console line must not hide: requests over the window, a strategy that never
    compacted (its scores are the oracle's, not the strategy's), fallbacks."""
    from bench.audit import never_compacted     # the one rule of which cells the headline leaves out

    notes = []
    if row.get("overflow_requests"):
        notes.append(f"{row['overflow_requests']} of {row['requests']} requests over the window"
                     + (" (oracle: ignores the window)" if row.get("oracle") else ""))
    if never_compacted(row):
        notes.append("never compacted: left out of the headline means")
    if row.get("_fallbacks"):
        tries = row["compactions"] + row["compaction_failures"]
        notes.append(f"{row['_fallbacks']} of {tries} compaction attempts fell back")
    return "".join(f"  {n}" for n in notes)


def _report_calls(model: Model) -> None:
    """One line per real writer model: what the run cost in calls, retries and cache hits."""
    progress = getattr(model, "progress", None)
    if progress is None:
        return
    progress.close()
    s = progress.stats
    print(f"writer {model.name}: {s.calls} calls, {s.http} HTTP requests, {s.retries} retries, "
          f"{s.cache_hits} cache hits, {s.failures} failed", file=sys.stderr)


def _model_key(cfg: ModelConfig) -> str:
    return json.dumps(asdict(cfg), sort_keys=True, default=str)


def run(overrides: list[str], multirun: bool = False) -> int:
    from omegaconf import OmegaConf

    from bench.runner.settings import shard_spec

    cells, cfg, cfgs = plan(overrides, multirun)
    planned, spec = cells, shard_spec(cfg.get("shard"))
    if spec is not None:
        from bench.results.shards import select

        cells = select(cells, spec)
    out = out_dir(cfg)
    configs = [redact(OmegaConf.to_container(c, resolve=True)) for c in cfgs]
    try:
        out.mkdir(parents=True, exist_ok=True)
        lock = _lock(out)
    except OSError as exc:
        raise BadInput(f"out: cannot write results to {out}: {exc.strerror or exc}")
    try:
        _check_same_settings(out / "config.yaml", configs)
        if spec is not None:
            from bench.results.shards import write_plan

            write_plan(out, spec, [c.name for c in planned])
        write_scenarios(out, list({c.scenario.id: c.scenario for c in planned}.values()))
        shutil.rmtree(out / ".cells", ignore_errors=True)
        (out / "config.yaml").write_text(_dump({**configs[0], "bench": _bench(),
                                                "overrides": [redact_override(o) for o in overrides],
                                                **({"sweep": configs} if len(configs) > 1 else {})}))
        return _run_cells_in(out, cells, cfg)
    finally:
        lock.close()


def _bench() -> dict[str, str]:
    """The code that made the run, for the report's first screen: version and git commit (when a checkout)."""
    from bench import __version__
    from bench.report.headline import git_commit

    return {"version": __version__, "commit": git_commit()}


def _lock(out: Path):
    """One run at a time per folder: two writers would interleave rows and scratch files."""
    import fcntl

    fh = (out / ".lock").open("w")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        raise BadInput(f"out: another run is writing to {out}; wait for it or choose another out=")
    return fh


def _run_cells_in(out: Path, cells: list[Cell], cfg: Any) -> int:
    from bench.results.store import prune_unfinished, repair_summary

    for note in repair_summary(out):     # a row cut by a full disk or a power cut is not a finished cell
        print(f"note: {note}", file=sys.stderr)
    done = done_cells(out)

    prune_unfinished(out)   # drops lines of a cell interrupted before its summary row
    todo = [c for c in cells if c.key not in done]
    if done:
        print(f"resuming {out}: {len(cells) - len(todo)} of {len(cells)} cells already done", file=sys.stderr)
    rows, errors = asyncio.run(run_cells(todo, out, int(cfg.concurrency)))
    shutil.rmtree(out / ".cells", ignore_errors=True)
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    unrun = sum(r["_probes_unrun"] for r in rows)
    if unrun:   # a failing agent or judge shows in probe_pass_rate only as misses; say so out loud
        print(f"warning: {unrun} probe(s) failed to run (agent or judge model failed); see checks.csv",
              file=sys.stderr)
    failures = _role_failures(rows)
    summary = read_csv(out / "summary.csv")
    if summary:
        from bench.results.repeats import write_spread
        from bench.report import write_report

        write_spread(out)
        try:
            write_report(out, list({c.scenario.path: c.scenario for c in cells}.values()))
        except (OSError, BadInput) as exc:   # the cells are stored; only the report is missing
            why = exc.problems[0] if isinstance(exc, BadInput) else f"{exc.strerror or exc}: {exc.filename or out}"
            failures.append(f"report not written: {why} (fix it, then `compaction-bench report {out}`)")
    order = {c.key: i for i, c in enumerate(cells)}   # workers finish in any order; the table keeps the plan's
    summary.sort(key=lambda r: order.get(cell_key(r), len(order)))
    if cfg.get("verbose"):
        print(format_table(summary))
    if summary:
        print(_headline(out))
    if (out / "report.html").exists():
        print(f"report: {out / 'report.html'}")
    if (out / "repeats.csv").exists():
        print(f"repeats: each cell's mean and spread over its repeats, and probes' pass^k: {out / 'repeats.csv'}")
    print(f"results: {out}")
    for f in failures:
        print(f"error: {f}", file=sys.stderr)
    return 1 if errors or failures else 0


def _headline(out: Path) -> str:
    """The report's per-strategy table as text; a summary the readers cannot take is said, not raised."""
    from bench.report.headline import console

    try:
        return console(out)
    except BadInput as exc:
        return f"(no summary: {exc.problems[0]})"


def _role_failures(rows: list[dict[str, Any]]) -> list[str]:
    """A run whose model calls all failed measured nothing but the failures: one line per such role, and
    exit 1. Some failed calls are a warning (they are failed compactions, counted in the summary)."""
    by: dict[str, list[int]] = {}
    for r in rows:
        n = by.setdefault(str(r.get("writer")), [0, 0])
        n[0] += r.get("_writer_calls", 0)
        n[1] += r.get("_writer_failed", 0)
    out = []
    for writer, (calls, failed) in by.items():
        if calls and failed == calls:
            out.append(f"writer {writer}: all {calls} calls failed after their retries (compactions.jsonl says "
                       f"why); the scores measure the failures, not the strategy")
        elif failed:
            print(f"warning: writer {writer}: {failed} of {calls} calls failed after their retries (failed "
                  f"compactions in the summary)", file=sys.stderr)
    probes, unrun = sum(r.get("_probes", 0) for r in rows), sum(r.get("_probes_unrun", 0) for r in rows)
    if probes and unrun == probes:
        out.append(f"agent/judge: all {probes} probes failed to run (checks.csv says why)")
    return out


def _check_same_settings(path: Path, configs: list[dict]) -> None:
    """Cells already in a folder were computed with its config; finishing them under other settings would mix runs."""
    if not path.exists():
        return
    import yaml

    try:
        old = loader.bounded_yaml(path.read_text(encoding="utf-8-sig")) or {}
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError):
        return
    if not isinstance(old, dict) or "sweep" in old or len(configs) > 1:
        return  # sweep cells carry their variant in the key
    try:
        changed = result_changes(old, configs[0])
    except RecursionError:
        raise BadInput(f"out: {path}: nested too deeply to tell whether its cells used these settings; "
                       "use a new out=") from None
    if changed:
        shown = ", ".join(changed[:6]) + (" ..." if len(changed) > 6 else "")
        raise BadInput(f"out: {path.parent} holds a run made with other settings ({shown}); "
                       "use a new out= or the same settings to resume it")


def _dump(data: dict) -> str:
    """YAML without anchors and aliases (a sweep repeats the same settings), which readers refuse."""
    import yaml

    class Plain(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

    return yaml.dump(data, Dumper=Plain, sort_keys=False, allow_unicode=True)


__all__ = ["run", "plan", "Cell", "run_cell"]
