"""`compaction-bench run`'s library half: plan the cells, run the missing ones into a results folder,
write repeats.csv and the report, and say how it went. Nothing here prints; the CLI does (bench.cli.run).
"""
from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from bench import __version__
from bench.errors import BadInput, private, run_stoppable
from bench.harness.model import Model, is_stress
from bench.parsing import bounded_yaml, flatten
from bench.report import write_report
from bench.report.headline import git_commit
from bench.results.repeats import write_spread
from bench.results.resume import done_cells, prune_unfinished, repair_summary, summary_rows
from bench.models.limiter import ACCOUNTS, Limits, share
from bench.results.shards import AUTO, auto_spec, put_in_plan_order, select, shard_spec, write_plan
from bench.results.store import cell_key, dump_yaml, read_csv, write_scenarios
from bench.runner.cells import Progress, run_cells
from bench.runner.config import redact, redact_override
from bench.runner.plan import Cell, out_dir, plan
from bench.runner.settings import parse, result_changes


class Watch(Protocol):
    """What a console is told while a run goes: the folder and the work first (so a reader knows where to look
    before the first cell ends), each finished cell, and each phase after the cells (a report can take a while).
    The runner calls it; the CLI prints."""

    def started(self, out: Path, todo: int, total: int) -> None: ...

    def cell(self, n: int, total: int, cell: Cell, row: dict[str, Any]) -> None: ...

    def phase(self, what: str) -> None: ...


@dataclass
class Outcome:
    """What a run did, for the CLI to show: the folder, the rows it finished, and what went wrong."""
    out: Path
    cells: list[Cell]                          # the cells this run (or shard) covers, in plan order
    rows: list[dict[str, Any]] = field(default_factory=list)       # cells finished now
    summary: list[dict[str, str]] = field(default_factory=list)    # every finished cell of the folder, plan order
    resumed: int = 0                           # cells already in the folder
    notes: list[str] = field(default_factory=list)       # repaired rows of an interrupted run
    errors: list[str] = field(default_factory=list)      # failed cells
    warnings: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)    # the run as a whole measured nothing of a role, or no report
    models: list[Model] = field(default_factory=list)    # the real writer models, with their call counts
    limiters: dict[str, Any] = field(default_factory=dict)   # account -> its limiter's LimiterStats
    shard: str = ""                            # I/N (and where shard=auto read it), when a shard

    @property
    def code(self) -> int:
        return 1 if self.errors or self.failures else 0


def run(overrides: list[str], multirun: bool = False, progress: Progress | None = None,
        watch: Watch | None = None) -> Outcome:
    """Plan, run what the folder lacks, and write repeats.csv and the report. `watch` (else `progress`, one call
    per finished cell) hears how it goes."""
    from omegaconf import OmegaConf

    cells, cfg, cfgs = plan(overrides, multirun)
    settings = parse(cfg)
    planned, spec, source = cells, *_shard(settings.shard)
    if spec is not None:
        cells = select(cells, spec)
    limits = settings.limits
    if not limits.shared and share(limits.in_flight, spec) < 1:
        raise BadInput(f"limits.in_flight: {limits.in_flight} calls in flight split over {spec[1]} shards leaves "
                       f"shard {spec[0]} none; raise it to {spec[1]} or more, or share one budget with "
                       f"limits.shared=DIR")
    ACCOUNTS.configure(limits, spec)
    out = out_dir(cfg)
    configs = [redact(OmegaConf.to_container(c, resolve=True)) for c in cfgs]
    try:
        out.mkdir(parents=True, exist_ok=True)
        lock = _lock(out)
    except OSError as exc:
        raise BadInput(f"out: cannot write results to {out}: {exc.strerror or exc}")
    try:
        _check_same_settings(out / "config.yaml", configs)
        if spec is not None and (out / "shard.json").exists():
            write_plan(out, spec, [c.name for c in planned])     # another shard's folder: said as such
        _check_same_cells(out, cells, configs)
        if spec is not None:
            write_plan(out, spec, [c.name for c in planned])
        write_scenarios(out, list({c.scenario.id: c.scenario for c in planned}.values()))
        shutil.rmtree(out / ".cells", ignore_errors=True)
        (out / "config.yaml").write_text(dump_yaml({**configs[0], "bench": _bench(),
                                                    "overrides": [redact_override(o) for o in overrides],
                                                    **({"sweep": configs} if len(configs) > 1 else {})}))
        result = run_cells_in(out, cells, int(cfg.concurrency), progress, limits, watch)
        result.shard = f"{spec[0]}/{spec[1]}{f' (from {source})' if source else ''}" if spec else ""
        return result
    finally:
        lock.close()


def _shard(value: str | None) -> tuple[tuple[int, int] | None, str]:
    """(I, N) of `shard=`, and the environment variable it came from with `shard=auto`."""
    if value is not None and AUTO.fullmatch(str(value).strip()):
        return auto_spec(str(value), os.environ)
    return shard_spec(value), ""


def _bench() -> dict[str, str]:
    """The code that made the run, for the report's first screen: version and git commit (when a checkout)."""
    return {"version": __version__, "commit": git_commit()}


def _lock(out: Path):
    """One run at a time per folder: two writers would interleave rows and scratch files. Forked
    workers close their copy of the lock (errors.private), so a killed run's workers cannot keep the
    folder locked against the run that resumes it."""
    import fcntl

    fh = private((out / ".lock").open("w"))
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        fh.close()
        raise BadInput(f"out: another run is writing to {out}; wait for it or choose another out=")
    return fh


def run_cells_in(out: Path, cells: list[Cell], concurrency: int, progress: Progress | None = None,
                 limits: Limits | None = None, watch: Watch | None = None) -> Outcome:
    """Run the cells `out` lacks (a row that is not whole is not a finished cell), then repeats.csv and
    the report."""
    result = Outcome(out, cells)
    result.notes = repair_summary(out)     # a row cut by a full disk or a power cut is not a finished cell
    done = done_cells(out)
    prune_unfinished(out)   # drops lines of a cell interrupted before its summary row
    todo = [c for c in cells if c.key not in done]
    result.resumed = len(cells) - len(todo)
    if watch is not None:
        watch.started(out, len(todo), len(cells))
        progress = watch.cell
    models: dict[str, Model] = {}
    real_cells = (limits or Limits()).cells or 4 * (limits or Limits()).in_flight
    result.rows, result.errors = run_stoppable(run_cells(todo, out, concurrency, progress, models, real_cells))
    result.limiters = {name: lim.stats for name, lim in ACCOUNTS.by.items()}
    result.models = [m for m in models.values() if getattr(m, "progress", None) is not None]
    shutil.rmtree(out / ".cells", ignore_errors=True)
    put_in_plan_order(out, [c.name for c in cells])   # stored as they finished; kept in the plan's order
    oracle = sum(r.get("_oracle_unrun", 0) for r in result.rows)
    if oracle:   # the oracle's answer decides what counts; one that failed to run counts nowhere, and says so
        result.warnings.append(f"{oracle} oracle probe(s) failed to run (agent or judge model failed with the "
                               f"oracle's context): left out of probes_answerable; see checks.csv")
    unrun = sum(r["_probes_unrun"] for r in result.rows)
    if unrun:   # a failing agent or judge shows in probe_pass_rate only as misses; say so out loud
        result.warnings.append(f"{unrun} probe(s) failed to run (agent or judge model failed); see checks.csv")
    result.failures, warnings = _role_failures(result.rows)
    result.warnings += warnings
    summary = read_csv(out / "summary.csv")
    if summary:
        write_spread(out)
        if watch is not None:
            watch.phase("writing report")
        try:
            write_report(out, list({c.scenario.path: c.scenario for c in cells}.values()))
        except (OSError, BadInput) as exc:   # the cells are stored; only the report is missing
            why = exc.problems[0] if isinstance(exc, BadInput) else f"{exc.strerror or exc}: {exc.filename or out}"
            result.failures.append(f"report not written: {why} (fix it, then `compaction-bench report {out}`)")
    order = {c.key: i for i, c in enumerate(cells)}   # workers finish in any order; the table keeps the plan's
    summary.sort(key=lambda r: order.get(cell_key(r), len(order)))
    result.summary = summary
    return result


def _role_failures(rows: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """(failures, warnings): a run whose model calls all failed measured nothing but the failures, one
    line per such role, and exit 1. Some failed calls are a warning (they are failed compactions, counted
    in the summary)."""
    by: dict[str, list[int]] = {}
    for r in rows:
        n = by.setdefault(str(r.get("writer")), [0, 0])
        n[0] += r.get("_writer_calls", 0)
        n[1] += r.get("_writer_failed", 0)
    out, warnings = [], []
    for writer, (calls, failed) in by.items():
        if calls and failed == calls:
            out.append(f"writer {writer}: all {calls} calls failed after their retries (compactions.jsonl says "
                       f"why); the scores measure the failures, not the strategy")
        elif failed:
            warnings.append(f"writer {writer}: {failed} of {calls} calls failed after their retries (failed "
                            f"compactions in the summary)")
    answers: dict[str, list] = {}
    for r in rows:
        n = answers.setdefault(str(r.get("writer")), [0, 0, []])
        n[0] += r.get("_answers", 0)
        n[1] += r.get("_non_answers", 0)
        if r.get("_non_answer_cell"):
            n[2].append("/".join(str(r.get(k)) for k in ("scenario", "strategy", "writer", "window", "seed")))
    for writer, (answered, nons, cells) in answers.items():
        if answered and nons == answered and not is_stress(writer):
            out.append(f"writer {writer}: none of its answers did the task: all {answered} compactions it answered "
                       f"were answered with non-answers (cut at max_tokens, empty, a loop, a chat reply; "
                       f"compactions.jsonl calls[].non_answer says which)")
        elif cells:
            warnings.append(f"writer {writer}: answered every compaction of {len(cells)} cell(s) with a non-answer: "
                            f"{', '.join(cells[:4])}{' ...' if len(cells) > 4 else ''}")
    probes, unrun = sum(r.get("_probes", 0) for r in rows), sum(r.get("_probes_unrun", 0) for r in rows)
    if probes and unrun == probes:
        out.append(f"agent/judge: all {probes} probes failed to run (checks.csv says why)")
    return out, warnings


def _check_same_cells(out: Path, cells: list[Cell], configs: list[dict]) -> None:
    """A folder resumed, or extended (more strategies, more scenarios), holds only cells of this plan:
    cells of another window, suite or seed would be kept beside the new ones under a config.yaml that
    no longer says how they were made."""
    rows, _ = summary_rows(out / "summary.csv")
    planned = {c.key for c in cells}
    stray = sorted({cell_key(r) for r in rows} - planned)
    if not stray:
        return
    try:
        old = bounded_yaml((out / "config.yaml").read_text(encoding="utf-8-sig")) or {}
    except (OSError, yaml.YAMLError, UnicodeDecodeError, RecursionError):
        old = {}
    changed = []
    if isinstance(old, dict) and len(configs) == 1:
        a, b = flatten(old), flatten(configs[0])
        changed = [k for k in ("suite", "scenarios", "strategies", "stress", "writer.model", "window", "seed", "repeats")
                   if any(x == k or x.startswith(k + ".") for x in set(a) | set(b))
                   and {x: v for x, v in a.items() if x == k or x.startswith(k + ".")}
                   != {x: v for x, v in b.items() if x == k or x.startswith(k + ".")}]
    why = f" (other {', '.join(changed)})" if changed else ""
    raise BadInput(f"out: {out} holds {len(stray)} cell(s) this run does not plan, e.g. {'/'.join(stray[0])}{why}; "
                   f"use a new out=, or settings whose cells include them to resume or extend it")


def _check_same_settings(path: Path, configs: list[dict]) -> None:
    """Cells already in a folder were computed with its config; finishing them under other settings would mix runs."""
    if not path.exists():
        return
    try:
        old = bounded_yaml(path.read_text(encoding="utf-8-sig")) or {}
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


__all__ = ["run", "run_cells_in", "Outcome", "Watch"]
