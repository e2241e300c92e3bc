"""The memory-eval report of a run: report.md, a self-contained report.html and figures/*.png.

`compaction-bench report RUN_DIR` re-renders it from the run's files alone
(summary.csv, checks.csv, requests.jsonl, config.yaml), so a report can be
rebuilt after the fact or for a run copied from elsewhere.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..errors import BadInput
from .render import Doc, Table, markdown, to_html

USAGE = "usage: compaction-bench report RUN_DIR"
OFFLINE_NOTE = ("`offline` is the built-in deterministic extractive stand-in (it keeps original sentences under "
                "a budget and answers by extraction); it is not an LLM, and its numbers measure the strategies' "
                "mechanics, not a model's judgement. As a writer it keeps every background line under its "
                "`[Harness: …]` label, so provenance leakage is 0 with it unless the harness drops the markers "
                "(`markers=false`); its stress profiles (`offline:NAME`) err on purpose and can leak.")


def write_report(run_dir: Path) -> Path:
    """Write report.md, report.html and figures/*.png into `run_dir`; returns report.md's path."""
    run_dir = Path(run_dir)
    doc = build(run_dir)
    figures = run_dir / "figures"
    figures.mkdir(exist_ok=True)
    for f in doc.figures():
        (figures / f"{f.name}.png").write_bytes(f.png)
    (run_dir / "report.html").write_text(to_html(doc), encoding="utf-8")
    path = run_dir / "report.md"
    path.write_text(markdown(doc), encoding="utf-8")
    return path


def _config(run_dir: Path) -> dict[str, Any]:
    """config.yaml as a mapping ({} when absent); BadInput when it is not UTF-8 YAML holding a mapping."""
    import yaml

    path = run_dir / "config.yaml"
    if not path.exists():
        return {}
    from ..loader import bounded_yaml

    try:
        cfg = bounded_yaml(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise BadInput(f"{path}{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}")
    if cfg is None:
        return {}
    if not isinstance(cfg, dict):
        raise BadInput(f"{path}: expected a mapping of config keys, got a {type(cfg).__name__}")
    return cfg


def _section(cfg: dict[str, Any], key: str) -> dict[str, Any]:
    """A config section as a mapping; a section of another shape reads as absent."""
    value = cfg.get(key)
    return value if isinstance(value, dict) else {}


def _rows(df, columns: list[str]) -> list[list[Any]]:
    return [[None if v != v else v for v in row] for row in df[columns].itertuples(index=False)]


def build(run_dir: Path) -> Doc:
    import pandas as pd

    from ..logs import read_jsonl
    from ..results import load
    from . import data, figures

    summary = load(run_dir)
    checks = load(run_dir, "checks") if (run_dir / "checks.csv").exists() else pd.DataFrame(
        columns=["strategy", "metric", "point", "check_point", "score", "kind", "item"])
    if "kind" not in checks.columns:          # runs from before checks.csv had a kind column
        checks = checks.assign(kind=float("nan"))
    cfg = _config(run_dir)
    records = list(read_jsonl(run_dir / "requests.jsonl"))
    doc = Doc(f"compaction-bench report: {run_dir.name}")
    _models(doc, summary, cfg)
    if summary.empty:
        doc.p("No finished cells.")
        return doc
    summary = data.labelled(summary.assign(retention=data.retention(summary)))
    scored, idle = data.headline(summary[~data.stressed(summary)])

    doc.h("Strategies")
    doc.p("Every score is a mean over every agent request of a session (not only the requests after a "
          "compaction), then over cells. A request over the window keeps nothing (no provider would serve "
          "it), except for the oracle, which ignores the window by design and is scored as if it had been "
          "served; `overflow_requests` counts them per cell.")
    quality, cost = data.present(summary, data.QUALITY), data.present(summary, data.COST)
    per = data.by(scored, ["strategy"], quality + cost)
    cols = ["strategy", *data.present(per, quality)]
    doc.table(Table(cols, _rows(per, cols), "Means over the cells where the strategy compacted at least once. "
                                            "Leakage, stale constraints, revived rejected options and overflow: "
                                            "lower is better."))
    if not idle.empty:
        icols = ["scenario", "strategy", "writer", "window", *data.present(idle, quality)]
        doc.table(Table(icols, _rows(idle, icols), "Cells where the strategy never compacted: the session fit, "
                                                   "so these scores are the oracle's context, not the "
                                                   "strategy's; left out of the means above."))
    _intervals(doc, scored, quality, run_dir)
    cols = ["strategy", *data.present(per, cost)]
    doc.table(Table(cols, _rows(per, cols), "Tokens and cost: means per cell (one session)."))
    doc.figure(figures.bars(per, "strategy", data.present(per, ["goal_retention", "constraint_fidelity",
                                                                "provenance_leakage"]),
                            "quality", "Goal retention, constraint fidelity (higher is better) and provenance "
                                       "leakage (lower is better) per strategy."))

    outcomes = data.compaction_outcomes(list(read_jsonl(run_dir / "compactions.jsonl")))
    if not outcomes.empty:
        ocols = list(outcomes.columns)
        doc.table(Table(ocols, _rows(outcomes, ocols), "Compaction attempts over all cells: failed (nothing "
                                                       "changed), fell back (and to what), needed a repair."))

    if summary["writer"].nunique() > 1:
        doc.h("Writer models")
        per_w = data.by(summary, ["writer", "strategy"], quality + ["cost_usd", "compaction_failures"])
        wcols = ["writer", "strategy", *data.present(per_w, quality + ["cost_usd", "compaction_failures"])]
        doc.table(Table(wcols, _rows(per_w, wcols)))
        doc.figure(figures.bars(data.by(summary, ["writer"], data.RETENTION), "writer",
                                data.present(summary, data.RETENTION), "writers",
                                "Retention per writer model, over every strategy and scenario."))

    if data.stressed(summary).any():
        doc.h("Robustness to writer errors")
        doc.p("The strategies that call a writer, replayed with the offline writer under stress profiles "
              "(`offline:NAME`, docs/models.md): the same writer, made to paraphrase the user, loosen bans, "
              "write a background request as the user's, forget old goals, report a finished subtask as the "
              "whole task, and blur exact references, at documented rates. They show how much a design "
              "depends on a faithful writer; they are not measurements of any LLM. Each change is against "
              "the same strategy with `offline` on the same scenarios.")
        keys = ["goal_retention", "constraint_fidelity", "provenance_leakage", "fact_retention", "decision_retention",
                "rejected_revived", "probe_pass_rate"]
        rob = data.robustness(summary[~summary["strategy"].str.endswith(" (oracle)")], keys)
        if not rob.empty:
            rcols = ["strategy", "writer", "cells", *[c for m in keys for c in (m, f"{m} change") if c in rob.columns]]
            doc.table(Table(rcols, _rows(rob, rcols), "Leakage, revived options: a rise is worse; the rest: a "
                                                      "drop is worse."))

    doc.h("Drift under repeated compaction")
    doc.figure(figures.drift(data.drift(checks), "Mean score at check points against the number of "
                                                 "compactions so far, in bins 1, 2, 3-4, 5-8, ... "
                                                 "(from checks.csv)."))

    doc.h("Cost against retention")
    doc.figure(figures.scatter(summary, "cost_usd", "retention", "cost",
                               "One point per cell: dollar cost of the session against its mean retention "
                               "(goal, constraints, facts)."))

    doc.h("Prompt-cache hit rate by provider")
    grid = data.cache_grid(run_dir / "requests.jsonl", records, summary)
    if not grid.empty:
        gcols = list(grid.columns)
        doc.table(Table(gcols, _rows(grid, gcols), "Each run's logs re-simulated under every bundled profile "
                                                   "(conf/cache/); the run itself used "
                                                   f"`{_section(cfg, 'cache').get('name', '?')}`."))
        doc.figure(figures.bars(grid, "strategy", gcols[1:], "cache", "Cache hit rate per strategy and provider."))

    doc.h("Per scenario")
    pivot = summary.pivot_table(index="scenario", columns="strategy", values="retention", aggfunc="mean", sort=False)
    doc.figure(figures.heatmap(pivot, "scenarios", "Mean retention (goal, constraints, facts) per scenario and "
                                                   "strategy."))
    kinds = data.constraint_kinds(checks)
    if not kinds.empty:
        doc.h("Constraints by kind")
        kcols = [str(c) for c in kinds.columns]
        doc.table(Table(kcols, _rows(kinds, list(kinds.columns)), "Constraint fidelity over every request: "
                                                                  "1 verbatim, 0.5 keys only, 0 lost."))
    _probes(doc, checks)
    doc.h("All cells")
    ccols = ["scenario", "strategy", "writer", *data.present(summary, ["compactions", *quality, "cost_usd",
                                                                                  "overflow_cost_usd",
                                                                                  "cache_hit_rate"])]
    doc.table(Table(ccols, _rows(summary, ccols)))
    return doc


def _intervals(doc: Doc, scored, quality: list[str], run_dir: Path) -> None:
    """The headline means with their 95% intervals and a verdict against the first strategy."""
    from . import data

    iv = data.intervals(scored, [m for m in quality if m != "overflow_requests"])
    if iv.empty:
        return
    ref = [c for c in iv.columns if c.startswith("vs ")]
    repeats = int(scored.groupby(["scenario", "strategy", "writer", "window"])["seed"].nunique().max())
    cols = ["strategy", "metric", "cells", "mean [95%]", *ref]
    doc.table(Table(cols, _rows(iv, cols), "95% intervals: bootstrap over scenarios and repeats "
                                           f"({repeats} per cell; bench/stats.py). The verdict is against the first "
                                           "strategy, paired by scenario and seed: better or worse when the whole "
                                           "interval of the difference is on one side of 0, else tied. Offline "
                                           "runs are deterministic: their intervals come from the scenarios "
                                           "alone."))
    pk = data.pass_k(run_dir)
    if not pk.empty:
        pcols = list(pk.columns)
        doc.table(Table(pcols, _rows(pk, pcols), "Probes over repeats: probe_pass_rate is the mean pass rate; "
                                                 "probe_pass_k counts a probe as kept only when it passed in every "
                                                 "repeat (pass^k)."))


def _models(doc: Doc, summary, cfg: dict[str, Any]) -> None:
    writers = sorted(set(summary["writer"].astype(str))) if not summary.empty else []
    role = lambda r: str(_section(cfg, r).get("model", "?"))  # noqa: E731
    price = _section(cfg, "price").get("model") or _section(cfg, "cache").get("price_model", "?")
    doc.p(f"Writer model(s): {', '.join(writers) or '?'}; agent (probes): {role('agent')}; "
          f"judge: {role('judge')}. Cache profile: {_section(cfg, 'cache').get('name', '?')}; "
          f"prices: {price} from litellm's bundled cost map.")
    if "offline" in writers or "offline" in (role("agent"), role("judge")):
        doc.p(OFFLINE_NOTE)


def _probes(doc: Doc, checks) -> None:
    from . import data

    kinds = data.probe_kinds(checks)
    if kinds.empty:
        return
    doc.h("Probes by kind")
    cols = ["strategy", "kind", "probes", "unanswerable", "passed", "failed_to_run", "pass_rate"]
    doc.table(Table(cols, _rows(kinds, cols), "Unanswerable: the same agent fails the probe even with the oracle's "
                                              "full context, so it says nothing about the strategy and is left out "
                                              "of pass_rate (the share of what the oracle could answer). A probe "
                                              "whose agent or judge failed counts as not passed."))


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help") or len(argv) != 1:
        print(USAGE, file=sys.stderr if len(argv) != 1 else sys.stdout)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    run_dir = Path(argv[0])
    if not (run_dir / "summary.csv").exists():
        raise BadInput(f"{run_dir}: no summary.csv (is it a results directory?)")
    try:
        path = write_report(run_dir)
    except OSError as exc:   # figures/ is a file, report.html a directory, the folder read-only
        raise BadInput(f"{exc.filename or run_dir}: cannot write the report: {exc.strerror or exc}") from None
    print(f"report: {path} and {path.with_suffix('.html')}")
    return 0


__all__ = ["write_report", "main"]
