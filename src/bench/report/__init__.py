"""The memory-eval report of a run: report.md, a self-contained report.html and figures/*.png.

`compaction-bench report RUN_DIR` re-renders it from the run's files alone
(summary.csv, checks.csv, requests.jsonl, config.yaml), so a report can be
rebuilt after the fact or for a run copied from elsewhere.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from bench.results import failures
from bench.results.store import read_config
from bench.report.render import Doc, Table, markdown, to_html
from bench.report.figures import Painter
from bench.harness.logs import read_jsonl
from bench.results.store import load, not_measurable
from bench.results.trace import Run
from bench.report import data, figures, headline, readings, screen
from bench.report import calibration, ledger
from bench.report import sections as S
from bench.scoring.metric import CELLS
from bench.scoring.metrics import COUNTS, shown

if TYPE_CHECKING:
    from bench.scenarios.model import Scenario

USAGE = "usage: compaction-bench report RUN_DIR"
OFFLINE_NOTE = ("`offline` is the built-in deterministic extractive stand-in (it keeps original sentences under "
                "a budget and answers by extraction); it is not an LLM, and its numbers measure the strategies' "
                "mechanics, not a model's judgement. As a writer it keeps every background line under its "
                "`[Harness: …]` label, so provenance leakage is 0 with it unless the harness drops the markers "
                "(`markers=false`); its stress profiles (`offline:NAME`) err on purpose and can leak.")


def write_report(run_dir: Path, scenarios: Iterable[Scenario] = (), figures: bool | None = None) -> Path:
    """Write report.md, report.html and figures/*.png into `run_dir`; returns report.md's path.
    `scenarios`: the run's, when the caller has them loaded (else they are read from config.yaml's paths).
    `figures`: draw them; None = the run's `report.figures` (config.yaml; true when it does not say)."""

    run_dir = Path(run_dir)
    if figures is None:
        figures = drawn(read_config(run_dir))
    if figures:
        with Painter() as paint:
            doc = build(run_dir, scenarios, paint)
            doc.resolve()
        folder = run_dir / "figures"
        folder.mkdir(exist_ok=True)
        for f in doc.figures():
            (folder / f"{f.name}.png").write_bytes(f.png)
    else:
        doc = build(run_dir, scenarios, NO_FIGURES)
    (run_dir / "report.html").write_text(to_html(doc), encoding="utf-8")
    path = run_dir / "report.md"
    path.write_text(markdown(doc), encoding="utf-8")
    return path


def drawn(cfg: dict) -> bool:
    """A run's `report.figures` setting (conf/config.yaml): figures drawn unless it says false."""
    report = cfg.get("report")
    return not (isinstance(report, dict) and report.get("figures") is False)


def NO_FIGURES(draw: Callable[..., Any], *args: Any, **kw: Any) -> None:
    """A `paint` that draws nothing (`report.figures=false`): every figure and its reading left out."""
    return None


def build(run_dir: Path, scenarios: Iterable[Scenario] = (), paint: Callable[..., Any] | None = None) -> Doc:
    """The report as blocks; `paint(figure_function, *args)` draws a figure (a `figures.Painter` draws it
    in another process; the default, here)."""
    import pandas as pd

    paint = paint or (lambda draw, *a, **kw: draw(*a, **kw))
    summary = load(run_dir)
    checks = load(run_dir, "checks") if (run_dir / "checks.csv").exists() else pd.DataFrame(
        columns=["scenario", "strategy", "writer", "window", "seed", "metric", "point", "check_point", "score",
                 "kind", "item", "detail"])
    if "kind" not in checks.columns:          # runs from before checks.csv had a kind column
        checks = checks.assign(kind=float("nan"))
    cfg = read_config(run_dir)
    records = list(read_jsonl(run_dir / "requests.jsonl"))
    compactions = list(read_jsonl(run_dir / "compactions.jsonl"))
    doc = Doc(f"compaction-bench report: {run_dir.name}")
    for line in headline.identity(summary, cfg):
        doc.p(line)
    if paint is NO_FIGURES:
        doc.p("Figures not drawn (`report.figures=false`): the tables only; `compaction-bench report --figures "
              "RUN_DIR` draws them.")
    if summary.empty:
        doc.p("No finished cells.")
        return doc
    summary = data.labelled(headline.with_cost_vs_full(summary.assign(retention=data.retention(summary))))
    main = data.compared(summary, cfg)           # the writers compared: one row per strategy and writer
    several = main["writer"].nunique()
    scored, idle = data.headline(main)
    mine = data.cell_rows(checks, scored)      # the headline cells' check rows (cell names: strategy unlabelled)
    rows_of = lambda df: data.per_writer(df, several)   # noqa: E731
    scored, idle, mine_rows = rows_of(scored), rows_of(idle), rows_of(mine)
    colours = figures.Colours([*summary["strategy"], *scored["strategy"]])
    table = headline.table(scored)
    screen.section(doc, summary, scored, table, paint, colours)
    doc.h("Headline")
    cols, body = headline.shown(table)
    doc.table(Table(cols, body, ("One row per strategy and writer (`strategy · writer`: the writers' cells are "
                                 "never pooled); " if several > 1 else "One row per strategy; ") + "reference rows first (the oracle `full`, which ignores "
                                "the window, and `truncate`, which keeps no memory). Each score is a mean over "
                                "cells, each cell's score a mean over every agent request of its session: the "
                                f"weighting of every table and figure here. {headline.directions()} Sessions that "
                                "fit the window (the oracle's largest request is within it, so no strategy needs "
                                "to compact) are left out for every strategy alike (listed below); a metric the "
                                "oracle cannot score on a scenario is left out there (not measurable, below).",
                     id="headline"))
    for sentence in headline.findings(table, idle, main, summary[~summary["strategy"].str.endswith(" (oracle)")]):
        doc.p(sentence)
    for sentence in failures.sentences(failures.read(compactions)):   # failed compactions, non-answers
        doc.p(sentence)
    for sentence in not_measurable(summary.to_dict("records")):
        doc.p(f"{sentence}: the oracle itself, which holds every event, does not score it, so the scorer cannot "
              "read this metric there; it is left empty in every cell of the scenario and out of the means and "
              "the gate (`scenarios validate` names the cause).")
    S.link_viewer(doc, run_dir)
    roles = {str(S.section(cfg, r).get("model")) for r in ("agent", "judge")}
    if "offline" in set(summary["writer"].astype(str)) | roles:
        doc.p(OFFLINE_NOTE)
    quality, cost = data.present(summary, data.QUALITY), data.present(summary, data.COST)
    S.windows(doc, scored)
    S.triggers(doc, scored, paint, colours)
    if not idle.empty:
        icols = ["scenario", "strategy", "writer", "window", *data.present(idle, quality)]
        doc.table(Table(icols, S.rows(idle, icols), "Cells of sessions that fit the window (the oracle's largest "
                                                    "request is within it): no strategy needs to compact there, "
                                                    "so every strategy's cells of them are left out of the means "
                                                    "above, whatever it did."))

    doc.h("The sawtooth")
    series = S.sawtooth_series(records, compactions, main, cfg, several > 1)
    doc.figure(paint(figures.sawtooth, series,
                                "Tokens sent per agent request against request number, one panel per scenario "
                                "(the headline's writer; a scenario's first window): the window (solid), the "
                                "default trigger min(0.9 window, window - reserve - margin) (dotted; a strategy "
                                "may set its own), and each compaction (a dot on the first request after it).",
                                colours), readings.sawtooth(series))

    doc.h("Strategies")
    per = data.by(scored, ["strategy"], quality + cost + ["cost_vs_full"])
    ccols = ["strategy", *data.present(per, cost + ["cost_vs_full"])]
    doc.table(Table(ccols, S.rows(per, ccols), "Tokens and cost: means per cell (one session)."))
    ledger.section(doc, scored)
    _intervals(doc, scored, quality, run_dir)
    drawn = data.present(per, ["goal_retention", "constraint_fidelity", "fact_retention", "provenance_leakage"])
    doc.figure(paint(figures.bars, per, "strategy", drawn,
                            "quality", "Goal retention, constraint fidelity, fact retention (higher is better) "
                                       "and provenance leakage (lower is better): cell means per strategy.",
                            colours=colours), readings.bars(per, "strategy", drawn, ("provenance_leakage",)))
    outcomes = data.compaction_outcomes(compactions)
    if not outcomes.empty:
        ocols = list(outcomes.columns)
        doc.table(Table(ocols, S.rows(outcomes, ocols), "Compaction attempts over all cells: failed (nothing "
                                                        "changed), fell back (and to what), needed a repair."))
    S.lost(doc, Run(run_dir, cfg, scenarios), checks, mine, summary, compactions, records)
    S.robustness(doc, summary)
    S.writers(doc, summary, compactions, cfg, quality, data.given_writers(summary, cfg))
    S.factorial(doc, data.headline(main)[0], cfg, quality)

    doc.h("Drift under repeated compaction")
    drifted = data.drift(mine_rows)
    doc.figure(paint(figures.drift, drifted,
                             "Change in score since the cell's first check point (the first request after its "
                             "first compaction) against the number of compactions so far, in bins 1, 2, 3-4, "
                             "5-8, ...; averaged over cells, so a scenario's size or difficulty cancels out "
                             "(from checks.csv).", colours), readings.drift(drifted))

    doc.h("Cost against retention")
    _pareto(doc, table)
    doc.figure(paint(figures.scatter, scored, "cost_vs_full", "retention", "cost",
                               "One point per cell: its cost relative to `full` on the same scenario (1 = the "
                               "oracle's cost; dashed) against its mean retention (goal, constraints, facts).",
                               colours, xline=1.0), readings.scatter(scored, "cost_vs_full", "retention"))

    doc.h("Prompt-cache hit rate by provider")
    grid = data.cache_grid(run_dir / "requests.jsonl", records, main, rows_of(main)["strategy"])
    if not grid.empty:
        gcols = list(grid.columns)
        doc.table(Table(gcols, S.rows(grid, gcols), "Each run's logs re-simulated under every bundled profile "
                                                    "(conf/cache/); the run itself used "
                                                    f"`{S.section(cfg, 'cache').get('name', '?')}`."))
        doc.figure(paint(figures.bars, grid, "strategy", gcols[1:], "cache", "Cache hit rate per strategy and provider.",
                                colours=colours), readings.bars(grid, "strategy", gcols[1:]))

    doc.h("Per scenario")
    pivot = scored.pivot_table(index="scenario", columns="strategy", values="retention", aggfunc="mean", sort=False)
    doc.figure(paint(figures.heatmap, pivot, "scenarios", "Mean retention (goal, constraints, facts) per scenario and "
                                                   "strategy (headline cells)."), readings.heatmap(pivot))
    kinds = data.constraint_kinds(mine_rows)
    if not kinds.empty:
        doc.h("Constraints by kind")
        kcols = [str(c) for c in kinds.columns]
        doc.table(Table(kcols, S.rows(kinds, list(kinds.columns)),
                        "Per kind, in each cell the mean over its constraints of each one's score over the requests "
                        "where it was in force (1 verbatim, 0.5 keys only, 0 lost), then the mean over cells. It "
                        "weighs constraints, not requests, so it differs from constraint_fidelity, which weighs "
                        "every request equally."))
    S.probes(doc, mine_rows)
    doc.h("All cells")
    # what the cell paid (cost ×full beside the cost it is made of), then the shares (the cache's hits)
    money = [m.column for m in sorted(shown(CELLS), key=lambda m: m.aggregate != "total")]
    money = [x for c in money for x in ([c, "cost_vs_full"] if c == "cost_usd" else [c])]
    acols = ["scenario", "strategy", "writer", *data.present(summary, ["compactions", *quality, *money])]
    doc.table(Table(acols, S.rows(summary, acols)))
    calibration.section(doc, headline.git_commit(), str(S.section(cfg, "bench").get("commit") or ""))
    calibration.judge(doc, S.section(cfg, "judge"), S.section(cfg, "probes"), mine_rows)
    return doc


def _pareto(doc: Doc, t) -> None:
    """Cost and cache beside retention, one row per strategy: what each saves and what it knows (the Pareto
    view of headline.pareto); a saving is never shown apart from what it costs in knowledge."""
    cost = {n: over for n, _, _, over in headline.pareto(t, "cost_vs_full", True)}
    cache = {n: over for n, _, _, over in headline.pareto(t, "cache_hit_rate", False)}
    rows = []
    for r in t.to_dict("records"):
        name = str(r["strategy"])
        if name not in cost and name not in cache:
            continue
        say = lambda over, word: "" if over is None else "on the front" if not over else f"{over[0]} {word}"   # noqa: E731
        rows.append([name, r.get("retention"), r.get("cost_vs_full"), r.get("cache_hit_rate"),
                     say(cost.get(name), "is cheaper and knows at least as much"),
                     say(cache.get(name), "is more cached and knows at least as much")])
    if rows:
        doc.table(Table(["strategy", "retention", "cost ×full", "cache hit rate", "cost against retention",
                         "cache against retention"], [[None if v != v else v for v in row] for row in rows],
                        "Cost and cache are read with what the strategy knows (retention: the mean of goal, "
                        "constraints and facts), never alone: a strategy is behind another that is at least as "
                        "cheap (as cached) and knows at least as much. Cheaper by knowing less is a trade, not a "
                        "gain; a constant prefix raises the hit rate and lowers cost while the agent knows less."))


def _intervals(doc: Doc, scored, quality: list[str], run_dir: Path) -> None:
    """The headline means with their 95% intervals and a verdict against the first strategy."""

    iv = data.intervals(scored, [m for m in quality if m not in COUNTS])
    if iv.empty:
        return
    ref = [c for c in iv.columns if c.startswith("vs ")]
    repeats = int(scored.groupby(["scenario", "strategy", "writer", "window"])["seed"].nunique().max())
    cols = ["strategy", "metric", "cells", "mean [95%]", *ref]
    doc.table(Table(cols, S.rows(iv, cols), "95% intervals: bootstrap over scenarios and repeats "
                                           f"({repeats} per cell; bench/results/stats.py). The verdict is against the first "
                                           "strategy, paired by scenario and seed: better or worse when the whole "
                                           "interval of the difference is on one side of 0, else tied. Offline "
                                           "runs are deterministic: their intervals come from the scenarios "
                                           "alone."))
    pk = data.pass_k(run_dir)
    if not pk.empty:
        pcols = list(pk.columns)
        doc.table(Table(pcols, S.rows(pk, pcols), "Probes over repeats: probe_pass_rate is the mean pass rate; "
                                                 "probe_pass_k counts a probe as kept only when it passed in every "
                                                 "repeat (pass^k)."))


__all__ = ["write_report"]
