"""The report's sections after the headline, each a function adding its blocks to the document.

Every table and figure uses the cells of the headline (offline writer, strategies that compacted) unless
it says otherwise, each cell weighing the same, and one colour per strategy (`figures.Colours`).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from bench.errors import BadInput
from bench.report.render import Doc, Table
from bench.report import figures, headline, readings
from bench.results.trace import cells as run_cells
from bench.harness.strategy import default_reserve, trigger_limit
from bench.report.data import _count
from bench.results.trace import cells, labels, leak_sentence
from bench.report import lost as L
from bench.report import data
from bench.report import factorial as F
from bench.report import writers as W
from bench.scoring import metrics as M
from bench.scoring.cache_sim import Profile
from bench.scoring.metric import ROBUSTNESS
from bench.scoring.pricing import cost, rates
from bench.report.data import saved


def rows(df, columns: list[str]) -> list[list[Any]]:
    return [[None if v != v else v for v in row] for row in df[columns].itertuples(index=False)]


def frame(doc: Doc, df, note: str, empty: str) -> None:
    """A DataFrame as a table with its note, or the sentence that says there is nothing to show."""
    if df.empty:
        doc.p(empty)
    else:
        doc.table(Table(list(df.columns), rows(df, list(df.columns)), note))


def section(cfg: dict[str, Any], key: str) -> dict[str, Any]:
    """A config section as a mapping; a section of another shape reads as absent."""
    value = cfg.get(key)
    return value if isinstance(value, dict) else {}


def windows(doc: Doc, scored) -> None:
    """A headline table per window when a scenario ran under several windows (a window sweep)."""

    if scored.empty or scored.groupby("scenario")["window"].nunique().max() < 2:
        return
    doc.h("By window")
    for window, g in scored.groupby("window", sort=True):
        cols, body = headline.shown(headline.table(g))
        doc.table(Table(cols, body, f"Window {int(window):,} tokens: {g['scenario'].nunique()} scenarios."))


def sawtooth_series(records, compactions, cells, cfg: dict[str, Any], by_writer: bool = False) -> dict:
    """Per scenario: the window, the default trigger, and per strategy (`by_writer`: per strategy · writer)
    its agent requests' sizes and the requests that follow a compaction (the given cells; a scenario's first
    window only)."""

    wanted: dict[str, tuple[str, str, int]] = {}
    firsts: dict[str, int] = {}
    for c in run_cells(cells):
        firsts.setdefault(c.scenario, c.window)
        if c.window == firsts[c.scenario]:
            wanted[c.name] = (c.scenario, f"{c.strategy}{data.SEP}{c.writer}" if by_writer else c.strategy, c.window)
    sizes: dict[str, list[tuple[int, int]]] = {}
    for r in records:
        if r.get("kind") == "agent" and r.get("cell") in wanted:
            sizes.setdefault(r["cell"], []).append((_count(r.get("i")), _count(r.get("tokens"))))

    starts: dict[str, list[int]] = {}
    for c in compactions:
        if c.get("ok") is True and c.get("cell") in wanted:
            starts.setdefault(c["cell"], []).append(_count(c.get("request")))
    out: dict[str, dict] = {}
    for name, (scenario, strategy, window) in wanted.items():
        if name not in sizes:
            continue
        reserve, margin = default_reserve(window)
        reserve = cfg["reserve_output"] if isinstance(cfg.get("reserve_output"), int) else reserve
        margin = cfg["margin"] if isinstance(cfg.get("margin"), int) else margin
        s = out.setdefault(scenario, {"window": window, "trigger": trigger_limit(window, reserve, margin), "lines": {}})
        reqs = sizes[name]
        after = {next((k for k, (i, _) in enumerate(reqs) if i >= st), None) for st in starts.get(name, [])}
        s["lines"][strategy] = ([t for _, t in reqs], sorted(k for k in after if k is not None))
    return out


def lost(doc: Doc, run: Any, checks, scored_checks, summary, compactions, records) -> None:
    """What was lost (most lost items, the compaction before each) and every leak with its sentence
    (found in the request rebuilt from `records`, requests.jsonl as the report read it)."""

    by_cell: dict[str, list[dict[str, Any]]] = {}
    for c in compactions:
        by_cell.setdefault(str(c.get("cell")), []).append(c)
    names: dict[str, dict[str, str]] = {}

    def says(sid: Any) -> dict[str, str]:
        """The scenario's truth labels, kept beside the run while its file is unchanged."""

        sid = str(sid)
        if sid not in names:
            path = run.path(sid)
            compute = lambda: labels(sc) if (sc := run.scenario(sid)) is not None else {}  # noqa: E731
            keep = run.dir / ".report-cache" / f"labels-{sid}.json"
            names[sid] = compute() if path is None else saved(path, sid, compute, keep)
        return names[sid]

    top = L.most_lost(scored_checks, by_cell, says)
    doc.h("What was lost")
    frame(doc, top, "Per strategy, the items lost at the largest share of the requests where they were in force "
                    "(headline cells; from checks.csv), the request at which each was first missing, the compaction "
                    "just before it and the start of that compaction's text."
                    + ("" if any(names.values()) else " The run's scenarios were not found from here, so items are "
                       "shown by id."), "No truth item was lost at any request of the headline cells.")
    known = {c.name: c for c in cells(summary)}
    found: dict[tuple, str] = {}
    logged: dict[str, list[dict[str, Any]]] | None = None

    def sentence(cell: str, request: int, injection: str) -> str:
        rc = known.get(cell)
        if rc is None or run.judge(rc) is None:
            return ""
        nonlocal logged
        if (cell, request, injection) not in found:
            if logged is None:      # once for every leak, not a pass over the whole log per leak
                logged = {}
                for rec in records:
                    logged.setdefault(rec.get("cell"), []).append(rec)
            msgs = next((r.messages for r in run.requests(rc, logged.get(cell, [])) if r.i == request), [])
            found[(cell, request, injection)] = leak_sentence(run.judge(rc), msgs, injection)
        return found[(cell, request, injection)]

    leaked = L.leaks(checks, sentence)
    frame(doc, leaked, "Every cell (stress profiles included) where an injection leaked: the share of requests "
                       "showing it, the first, the route the scorer found and the sentence that carried it.",
          "No injected background instruction leaked into the user's voice in any cell.")


def robustness(doc: Doc, summary) -> None:

    if not data.stressed(summary).any():
        return
    doc.h("Robustness to writer errors")
    doc.p("The strategies that call a writer, replayed with the offline writer under stress profiles "
          "(`offline:NAME`, docs/models.md): the same writer, made to paraphrase the user, loosen bans, "
          "write a background request as the user's, forget old goals, report a finished subtask as the "
          "whole task, and blur exact references, at documented rates. They show how much a design "
          "depends on a faithful writer; they are not measurements of any LLM. Each change is against "
          "the same strategy with `offline` on the same scenarios.")
    keys = [m.column for m in M.shown(ROBUSTNESS)]
    rob = data.robustness(summary[~summary["strategy"].str.endswith(" (oracle)")], keys)
    if not rob.empty:
        cols = ["strategy", "writer", "cells", *[c for m in keys for c in (m, f"{m} change") if c in rob.columns]]
        doc.table(Table(cols, rows(rob, cols), "Leakage, revived options: a rise is worse; the rest: a drop is "
                                               "worse."))


def writers(doc: Doc, summary, compactions, cfg: dict[str, Any], quality: list[str], given: list[str] = ()) -> None:
    """Each writer against the reference writer per strategy (paired, with a verdict), the cell means side
    by side, and the writer's work."""
    if summary["writer"].nunique() < 2:
        return
    doc.h("Writers")
    ref = W.reference([w for w in given if len(given) > 1] or ["offline"])
    scored, _ = data.headline(summary[~summary["strategy"].str.endswith(" (oracle)")])
    vs = W.versus(scored, [m for m in quality if m not in M.COUNTS], ref)
    if not vs.empty:
        cols = list(vs.columns)
        doc.table(Table(cols, rows(vs, cols), f"Each writer against `{ref}` (the reference: the first writer "
                                              "given, else `offline`), per strategy and metric, on the cells both "
                                              "ran (same scenario, window and seed; sessions that need compaction). "
                                              "The difference is writer minus reference with its paired 95% "
                                              "interval (bootstrap over scenarios); better or worse when the whole "
                                              "interval is on one side of 0, else tied."))
    table = W.pivot(summary, [m for m in quality if m not in M.COUNTS] + ["cost_usd", "compaction_failures"])
    if not table.empty:
        cols = list(table.columns)
        doc.table(Table(cols, rows(table, cols), "Cell means per strategy and metric, one column per writer "
                                                 "(stress profiles included)."))
    work = W.work(compactions, price(cfg))
    if not work.empty:
        cols = list(work.columns)
        doc.table(Table(cols, rows(work, cols), "The writer's work: latency and output tokens per compaction, "
                                                "retries, failed compactions, repairs, and the writer's cost per "
                                                "cell apart from the agent's (a real model's reported cost, else "
                                                "the run's prices with no cache discount)."))


def factorial(doc: Doc, cells, cfg: dict[str, Any], quality: list[str]) -> None:
    """Writer × agent: main effects and interaction, then the variance split when there are repeats."""
    cells = cells[~cells["strategy"].str.endswith(" (oracle)")]
    agent = str(section(cfg, "agent").get("model", "offline"))
    metrics = [m for m in quality if m not in M.COUNTS]
    if cells.empty or not F.applies(cells, agent):
        return
    doc.h("Writer × agent")
    fx = F.effects(cells, metrics, agent)
    frame(doc, fx, "Each writer × agent mean on the scenarios every combination ran (sessions that need "
                   "compaction), each factor's main effect (two levels: second minus first, in the order given, "
                   "with its 95% interval over scenarios; more: the spread of the level means) and their "
                   "interaction (the difference of differences; more levels: the largest). An interaction as large "
                   "as a main effect means the writer's lead depends on the agent reading its memory.",
          "No strategy ran every writer × agent combination on a common scenario.")
    var = F.variance(cells, metrics, agent)
    if not var.empty:
        frame(doc, var, "Where the spread comes from (variances of cell scores, per strategy, writer and agent): "
                        "the session (between scenarios), the writer's seed (the repeats), the agent's seed "
                        "(`agent.seed`, swept apart so the two are crossed) and their interaction. Without "
                        "`agent.seed` swept the repeat's seed drives both and one part is given for the two. A "
                        "deterministic agent's seed part is 0.", "")


def price(cfg: dict[str, Any]):
    """(input tokens, output tokens) -> dollars at the run's price model; 0 when it cannot be priced."""

    try:
        profile = Profile.from_dict(section(cfg, "cache"))
        r = rates(section(cfg, "price").get("model") or profile.price_model, profile)
    except (BadInput, KeyError, TypeError, ValueError):
        return lambda i, o: 0.0
    return lambda i, o: cost(r, i, 0, 0, o)


def probes(doc: Doc, checks) -> None:

    kinds = data.probe_kinds(checks)
    if kinds.empty:
        return
    doc.h("Probes by kind")
    cols = ["strategy", "kind", "probes", "unanswerable", "passed", "failed_to_run", "pass_rate"]
    doc.table(Table(cols, rows(kinds, cols), "Unanswerable: the same agent fails the probe even with the oracle's "
                                             "full context, so it says nothing about the strategy and is left out "
                                             "of pass_rate (per cell the share of what the oracle could answer, "
                                             "then the mean over cells). A probe whose agent or judge failed "
                                             "counts as not passed."))


def link_viewer(doc: Doc, run_dir: Path) -> None:
    doc.link("The viewer: every cell's requests, compactions and contexts, item by item (view.html)", "view.html")
    if not (run_dir / "view.html").exists():
        doc.p(f"view.html is written by `compaction-bench view {run_dir}` (a few seconds, even for a large "
              "run; `--cell ID` for one cell).")


SWEPT = re.compile(r"^(?P<base>[^\[]+)\[(?:.*,)?(?:strategy\.\w+\.)?trigger_at=(?P<at>[^,\]]+)")
SWEEP_METRICS = [*M.HIGHER, *data.COST]   # retention beside what it costs


def trigger_sweep(scored):
    """Per strategy and `trigger_at` value of a sweep (`-m trigger_at=0.5,0.7,0.9`): the cell means."""
    import pandas as pd

    found = scored["strategy"].astype(str).str.extract(SWEPT)
    rows = scored.assign(base=found["base"], trigger_at=pd.to_numeric(found["at"], errors="coerce"))
    rows = rows[rows["trigger_at"].notna() & ~rows["strategy"].astype(str).str.endswith(" (oracle)")]
    if rows.empty or rows.groupby("base")["trigger_at"].nunique().max() < 2:
        return pd.DataFrame()
    cols = [c for c in SWEEP_METRICS if c in rows.columns]
    out = rows.groupby(["base", "trigger_at"])[cols].mean().reset_index()
    out.insert(2, "cells", rows.groupby(["base", "trigger_at"]).size().values)
    return out.rename(columns={"base": "strategy"}).round(4)


def triggers(doc: Doc, scored, paint, colours) -> None:
    """Trigger against retention and cost, when the run swept `trigger_at`."""
    table = trigger_sweep(scored)
    if table.empty:
        return
    doc.h("Trigger sweep")
    cols = list(table.columns)
    doc.table(Table(cols, rows(table, cols), "Cell means per strategy and `trigger_at` (a share of the window, or "
                                             "tokens above 1): an earlier trigger compacts more often; read the "
                                             "retention columns beside the cost and the cache hit rate."))
    drawn = [c for c in cols if c in M.HIGHER or c in ("cost_usd", "cache_hit_rate")]
    doc.figure(paint(figures.lines, table, "trigger_at", drawn, "trigger_sweep",
                     "Retention, cost and cache hit rate against trigger_at, one line per strategy.", colours),
               readings.sweep(table, "trigger_at"))
