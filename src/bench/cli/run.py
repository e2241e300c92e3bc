"""`compaction-bench run [OVERRIDES] [-m] [--config-dir DIR]`: the console of a run (bench.runner.run does it)."""
from __future__ import annotations

import sys
from typing import Any

from bench.cli.progress import Console
from bench.cli.run_help import text as help_text
from bench.errors import BadInput
from bench.harness.model import Model, is_stress
from bench.report.headline import console
from bench.results import failures
from bench.results.store import format_table
from bench.runner.config import user_dir
from bench.scoring.oracle import columns
from bench.runner.run import Outcome, run


def main(argv: list[str]) -> int:
    argv = config_dir_option(argv)
    if any(a in ("-h", "--help") for a in argv):
        print(help_text(user_dir(argv)))
        return 0
    multirun = any(a in ("-m", "--multirun") for a in argv)
    overrides = [a for a in argv if a not in ("-m", "--multirun")]
    bad = [a for a in overrides if a.startswith("-")]
    if bad:
        shown = bad[0].split("=", 1)[0] + ("=..." if "=" in bad[0] else "")   # an option's value may be a key
        raise BadInput(f"run: unknown option {shown} (overrides look like key=value)")
    verbose = _verbose(overrides)
    console = Console(verbose, line=lambda n, total, cell, row: f"[{n}/{total}] {cell.name}  {row['wall_s']}s{_notes(row)}",
                      alert=_alert)
    try:
        outcome = run(overrides, multirun, watch=console)
    finally:
        console.close()
    return show(outcome, verbose=verbose, started=True)


def _verbose(overrides: list[str]) -> bool:
    values = [o.split("=", 1)[1].strip().lower() for o in overrides if o.lstrip("+").startswith("verbose=")]
    return bool(values) and values[-1] in ("true", "1", "yes")


def show(o: Outcome, verbose: bool = False, paths: bool = True, started: bool = False) -> int:
    """Print what a run did: notes, errors, the per-strategy summary, where the files are (unless the
    folder is a scratch one its caller removes); the exit code. `started`: the console already said the
    folder and what was resumed."""
    for note in o.notes:
        print(f"note: {note}", file=sys.stderr)
    if o.resumed and not started:
        print(f"resuming {o.out}: {o.resumed} of {len(o.cells)} cells already done", file=sys.stderr)
    if o.shard:
        print(f"shard {o.shard}", file=sys.stderr)
    for model in o.models:
        _report_calls(model)
    for name, s in o.limiters.items():
        if s.calls:
            print(f"limiter {name}: {s.calls} requests, at most {s.peak} in flight, {s.rate_limited} rate-limited "
                  f"in {s.cuts} episode(s), {s.transient} transient errors", file=sys.stderr)
    for e in o.errors:
        print(f"error: {e}", file=sys.stderr)
    for w in o.warnings:
        print(f"warning: {w}", file=sys.stderr)
    if not verbose:
        for line in _apart(o.summary):
            print(line, file=sys.stderr)
    if verbose:
        print(format_table(o.summary))
    if o.summary:
        print(_headline(o))
        for line in _failures(o):
            print(line)
    if paths and (o.out / "report.html").exists():
        print(f"report: {o.out / 'report.html'}")
    if paths and (o.out / "repeats.csv").exists():
        print(f"repeats: each cell's mean and spread over its repeats, and probes' pass^k: {o.out / 'repeats.csv'}")
    if paths:
        print(f"results: {o.out}")
    for f in o.failures:
        print(f"error: {f}", file=sys.stderr)
    return o.code


def _headline(o: Outcome) -> str:
    """The report's per-strategy table as text; a summary the readers cannot take is said, not raised."""
    try:
        return console(o.out)
    except BadInput as exc:
        return f"(no summary: {exc.problems[0]})"


def _failures(o: Outcome) -> list[str]:
    """The run's failed compactions and non-answer cells, per strategy and writer, as the report's first screen
    says them (read from compactions.jsonl, so a resumed run's earlier cells count too)."""
    try:
        cells = failures.of_run(o.out)
    except BadInput as exc:
        return [f"(compactions.jsonl not read: {exc.problems[0]})"]
    return failures.sentences(cells)


def _alert(row: dict[str, Any]) -> str:
    """A cell's failures said even without verbose: a real writer's failed compactions and any writer's
    non-answers (a stress profile's failures are by design, and its sentence comes with the summary)."""
    return "; ".join(n for n in row.get("_failure_notes") or []
                     if n.startswith("NON-ANSWERS") or not is_stress(row.get("writer", "")))


def _apart(rows: list[dict[str, Any]]) -> list[str]:
    """Without verbose, what the per-cell lines would have said of whole sessions, once per scenario (rows as
    summary.csv holds them, text): a session that fits the window (out of the headline for every strategy)
    and metrics the oracle cannot score there ("not measurable here", never a low number)."""
    fits: list[str] = []
    unmeasured: dict[str, set[str]] = {}
    for row in rows:
        name = str(row.get("scenario"))
        if str(row.get("needs_compaction")) == "0" and name not in fits:
            fits.append(name)
        if row.get("unmeasured"):
            unmeasured.setdefault(name, set()).update(columns(row["unmeasured"]))
    out = [f"{name}: the session fits the window: left out of the headline means" for name in fits]
    out += [f"{name}: not measurable here: {', '.join(sorted(cols))}" for name, cols in unmeasured.items()]
    return out


def _notes(row: dict[str, Any]) -> str:
    """What a cell's console line must not hide: requests over the window, a session that fits the window
    (out of the headline for every strategy), metrics the oracle cannot score there, fallbacks."""
    notes = []
    if row.get("overflow_requests"):
        notes.append(f"{row['overflow_requests']} of {row['requests']} requests over the window"
                     + (" (oracle: ignores the window)" if row.get("oracle") else ""))
    if row.get("needs_compaction") == 0:
        notes.append("the session fits the window: left out of the headline means")
    if row.get("unmeasured"):
        notes.append(f"not measurable here: {', '.join(columns(row['unmeasured']))}")
    if row.get("_fallbacks"):
        tries = row["compactions"] + row["compaction_failures"]
        notes.append(f"{row['_fallbacks']} of {tries} compaction attempts fell back")
    notes += row.get("_failure_notes") or []
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


def config_dir_option(argv: list[str]) -> list[str]:
    """`--config-dir DIR` / `--config-dir=DIR` -> the override `config_dir=DIR`."""
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a == "--config-dir":
            if i + 1 >= len(argv):
                raise BadInput("run: --config-dir needs a folder (--config-dir DIR)")
            out.append(f"config_dir={argv[i + 1]}")
            i += 2
            continue
        out.append(f"config_dir={a.split('=', 1)[1]}" if a.startswith("--config-dir=") else a)
        i += 1
    return out
