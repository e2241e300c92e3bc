"""The report's first screen: what the run was, one row per strategy, and sentences computed from them.

One weighting everywhere (DESIGN §7): a cell's score is its mean over the cell's agent requests, and a
strategy's score is the plain mean over its cells — each session counts once, whatever its length.
Reference rows are the oracle (the results' `oracle` column) and `truncate` (the floor a strategy must
beat); they are shown first and left out of "best".
"""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any
from bench.results.stats import interval as bootstrap
from bench import __version__
from bench.report import data
from bench.report import factorial as F
from bench.results.store import format_table, load, not_measurable, read_config
from bench.scoring.metric import HEADLINE
from bench.scoring import metrics as M

REFERENCE = ("truncate",)     # a no-memory floor, named by the issue that asked for the headline

# (summary column, header shown, higher is better): the scores, then beside them cost relative to the oracle,
# the counts (requests over the window) and compactions.
METRICS = [(m.column, m.label, m.higher) for m in M.shown(HEADLINE) if m.direction in ("higher", "lower")]
BESIDE = [("cost_vs_full", "cost ×full", False),
          *[(m.column, m.label, False) for m in M.shown(HEADLINE) if m.direction == "count"],
          ("compactions", "compactions", None)]
COST_GLOSS = "cost over `full`'s on the same scenario"


def directions() -> str:
    """The headline caption's sentence on which way each column is better."""
    metrics = M.shown(HEADLINE)
    glossed = [f"{m.label} ({m.gloss})" if m.gloss else m.label for d in ("lower", "count") for m in metrics
               if m.direction == d]
    return (f"{', '.join(m.label for m in metrics if m.higher)}: higher is better; "
            f"{', '.join([*glossed, f'cost ×full ({COST_GLOSS})'])}: lower is better.")


def interval(values) -> tuple[float, float] | None:
    """The 95% interval of a strategy's mean over its cells (`values`: one score per cell).

    This is the one place the report asks for uncertainty: every headline cell and finding reads it.
    bench/results/stats.py bootstraps the mean over the cells (each a session, with its repeats averaged), so
    offline runs, which are deterministic, get intervals from the spread over scenarios alone."""

    iv = bootstrap([[float(v)] for v in values])
    return None if iv is None else (iv.low, iv.high)


def identity(summary, cfg: dict[str, Any]) -> list[str]:
    """Lines naming the run: models by role, cache profile, price model, scenarios, bench version."""

    def section(key: str) -> dict[str, Any]:
        v = cfg.get(key)
        return v if isinstance(v, dict) else {}

    writers = sorted(set(summary["writer"].astype(str))) if not summary.empty else []
    bench = section("bench")
    version = bench.get("version") or __version__
    commit = bench.get("commit") or git_commit()
    price = section("price").get("model") or section("cache").get("price_model", "?")
    return [f"Writers: {', '.join(f'`{w}`' for w in writers) or '?'}; agent (probes): "
            f"`{section('agent').get('model', '?')}`; judge: `{section('judge').get('model', '?')}`.",
            f"Cache profile `{section('cache').get('name', '?')}`; prices of `{price}` (litellm's cost map); "
            f"{summary['scenario'].nunique() if not summary.empty else 0} scenarios, {len(summary)} cells; "
            f"compaction-bench {version}" + (f" at commit `{commit}`" if commit else "")
            + ("" if bench else " (read when the report was built: the run did not record it)") + "."]


def git_commit(root: Path | None = None) -> str:
    """The checkout's commit (short), with `+changes` when its tracked files differ; "" outside git."""
    root = root or Path(__file__).resolve().parents[3]
    if not (root / ".git").exists():
        return ""
    try:
        sha = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"], capture_output=True,
                             text=True, timeout=5).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""
    return f"{sha}+changes" if sha and dirty else sha


def with_cost_vs_full(summary):
    """`cost_vs_full`: a cell's cost over the oracle's cost on the same scenario, window and seed (the
    scenario's size cancels out); empty where the run has no oracle cell to compare with."""
    if "oracle" not in summary.columns or "cost_usd" not in summary.columns:
        return summary.assign(cost_vs_full=float("nan"))
    oracle = summary[summary["oracle"].fillna(0).astype(float) > 0]
    base = oracle.groupby(["scenario", "window", "seed"])["cost_usd"].mean()
    keys = list(zip(summary["scenario"], summary["window"], summary["seed"]))
    ref = [base.get(k, float("nan")) for k in keys]
    return summary.assign(cost_vs_full=[c / r if r and r == r else float("nan") for c, r in zip(summary["cost_usd"], ref)])


def is_reference(name: str, oracle: bool) -> bool:
    return oracle or name.split(data.SEP)[0] in REFERENCE


def table(cells):
    """One row per strategy: cells, each headline metric's cell mean (and its interval, when there is
    one), cost relative to the oracle, overflow and compactions per cell; reference rows first."""
    import pandas as pd

    rows = []
    for strategy, g in cells.groupby("strategy", sort=True):
        oracle = bool("oracle" in g.columns and (g["oracle"].fillna(0).astype(float) > 0).any())
        row: dict[str, Any] = {"strategy": strategy, "reference": is_reference(str(strategy).split(" (")[0], oracle),
                               "cells": len(g)}
        for col, _, _ in METRICS + BESIDE:
            if col in g.columns and g[col].notna().any():
                row[col] = float(g[col].mean())
                if col not in M.COUNTS and col != "compactions":   # counts that mostly say scenario size
                    row[f"{col} interval"] = interval(g[col].dropna().to_numpy())
        # read beside cost and cache, never apart from them (the Pareto view)
        known = data.retention(g)
        if known.notna().any():
            row["retention"] = float(known.mean())
        if "cache_hit_rate" in g.columns and g["cache_hit_rate"].notna().any():
            row["cache_hit_rate"] = float(g["cache_hit_rate"].mean())
        rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    return out.sort_values(["reference", "strategy"], ascending=[False, True], kind="stable").reset_index(drop=True)


def shown(t) -> tuple[list[str], list[list[Any]]]:
    """The headline table as report columns and rows (an interval, when known, beside its mean)."""
    cols = [(c, h) for c, h, _ in METRICS + BESIDE if c in t.columns]
    header = ["strategy", "cells", *[h for _, h in cols]]
    rows = []
    for r in t.to_dict("records"):
        cells = [f"{r['strategy']} (reference)" if r["reference"] and "(oracle)" not in r["strategy"] else r["strategy"],
                 r["cells"]]
        for c, _ in cols:
            v, iv = r.get(c), r.get(f"{c} interval")
            if v is None or v != v:
                cells.append(None)
            elif iv and iv[1] - iv[0] > 1e-9:    # a degenerate interval (all cells equal) is just the mean
                cells.append(f"{v:.3f} [{iv[0]:.2f}, {iv[1]:.2f}]")
            else:
                cells.append(float(v))
        rows.append(cells)
    return header, rows


EQUAL = 0.005   # retention closer than this is equal knowledge


def pareto(t, price: str = "cost_vs_full", cheaper: bool = True):
    """Per strategy (the oracle left out: it ignores the window): (name, price, retention, dominated by) on
    one price column — `cost_vs_full` (lower is better) or `cache_hit_rate` (higher) — against retention
    (goal, constraints, facts), the Pareto view: a strategy is dominated when another is at least as cheap
    (or as cached) and knows at least as much, better on one of them."""
    if price not in t.columns or "retention" not in t.columns:
        return []
    pts = [(str(r["strategy"]), float(r[price]), float(r["retention"])) for r in t.to_dict("records")
           if "(oracle)" not in str(r["strategy"]) and r.get(price) == r.get(price) and r.get("retention") == r.get("retention")]
    better = (lambda a, b: a <= b) if cheaper else (lambda a, b: a >= b)
    out = []
    for name, p, k in pts:
        over = [o for o, q, j in pts if o != name and better(q, p) and j >= k - 1e-12 and (q != p or j > k + 1e-12)]
        out.append((name, p, k, over))
    return sorted(out, key=lambda x: x[1] if cheaper else -x[1])


def pareto_findings(t) -> list[str]:
    """Cost and cache never alone: the strategies on the front of cost (then cache hit rate) against
    retention, the ones that are dearer and know no more, and whether the cheapest (most cached) strategy is
    cheaper at equal knowledge or cheaper by knowing less."""
    out = []
    for price, label, cheaper in (("cost_vs_full", "cost ×full", True), ("cache_hit_rate", "cache hit rate", False)):
        pts = pareto(t, price, cheaper)
        if len(pts) < 2:
            continue
        front = [f"{n} ({p:.3f}, retention {k:.3f})" for n, p, k, over in pts if not over]
        behind = [f"{n} ({p:.3f}, {k:.3f}: {over[0]} is {'cheaper' if cheaper else 'more cached'} and knows as "
                  "much or more)" for n, p, k, over in pts if over]
        text = (f"{label} read with retention (goal, constraints, facts; a Pareto view): on the front, "
                f"{'cheapest' if cheaper else 'most cached'} first: {', '.join(front)}")
        text += f"; behind it: {'; '.join(behind)}." if behind else "."
        top, rest = pts[0], pts[1:]
        most = max(rest, key=lambda x: x[2])
        word = "cheapest" if cheaper else "most cached"
        if most[2] > top[2] + EQUAL:
            text += (f" The {word}, {top[0]}, is {'cheaper' if cheaper else 'more cached'} by knowing less: retention "
                     f"{top[2]:.3f} against {most[0]}'s {most[2]:.3f}.")
        else:
            text += f" The {word}, {top[0]}, is {'cheaper' if cheaper else 'more cached'} at equal or better knowledge."
        out.append(text)
    return out


def stress_findings(summary) -> list[str]:
    """Per stress profile: each strategy's largest drop (or rise, for leakage) against the same strategy
    with `offline` on the same scenarios (the robustness section's numbers)."""

    keys = [c for c, _, _ in METRICS if c in summary.columns]
    rob = data.robustness(summary, keys)
    out = []
    for writer, g in rob.groupby("writer", sort=True) if not rob.empty else ():
        parts = []
        for r in g.to_dict("records"):
            worst = data.worst_harm(r, METRICS)
            if worst is not None:
                parts.append(f"{r['strategy']} {worst[1]} {worst[2]:+.3f}" if worst[0] > 0 else
                             f"{r['strategy']} loses nothing")
        if parts:
            out.append(f"Under the `{writer}` stress writer, each strategy's largest harm: {'; '.join(parts)} "
                       "(see Robustness to writer errors).")
    return out


def findings(t, idle, summary, summary_all=None) -> list[str]:
    """Sentences from the numbers: the best strategy per metric and its lead, whether the leads are
    tested, cells where a strategy never compacted, overflow, and the cheapest relative to the oracle."""
    out: list[str] = []
    if t.empty:
        return out
    contenders = t[~t["reference"]]
    tested = False
    for col, header, higher in METRICS:
        if higher is None or col not in contenders.columns or contenders[col].notna().sum() < 1:
            continue
        ranked = contenders.dropna(subset=[col]).sort_values(col, ascending=not higher, kind="stable")
        best = ranked.iloc[0]
        ties = ranked[ranked[col] == best[col]]["strategy"].tolist()
        if len(ties) == len(ranked) > 1:
            out.append(f"{header}: every strategy scores {best[col]:.3f}.")
            continue
        text = f"{header}: " + (f"{', '.join(ties[:-1])} and {ties[-1]} tie at {best[col]:.3f}" if len(ties) > 1
                                else f"{best['strategy']} is best at {best[col]:.3f}")
        rest = ranked[ranked[col] != best[col]]
        if not rest.empty:
            nxt = rest.iloc[0]
            text += f", {abs(best[col] - nxt[col]):.3f} ahead of {nxt['strategy']} ({nxt[col]:.3f})"
            a, b = best.get(f"{col} interval"), nxt.get(f"{col} interval")
            if a and b:
                tested = True
                text += " — significant (95% intervals apart)" if (a[0] > b[1] or b[0] > a[1]) else \
                    " — not significant (95% intervals overlap)"
        refs = t[t["reference"]].dropna(subset=[col]) if col in t.columns else t.iloc[0:0]
        if not refs.empty:
            text += "; reference " + ", ".join(f"{r['strategy']} {r[col]:.3f}" for _, r in refs.iterrows())
        out.append(text + ".")
    if not tested:
        out.append("No intervals yet: the leads above are not tested for significance (each mean is over "
                   "the cells in the table's `cells` column).")
    if idle is not None and not idle.empty:
        names = sorted(set(idle["scenario"].astype(str)))
        out.append(f"{len(names)} session(s) fit the window ({', '.join(names[:6])}{' ...' if len(names) > 6 else ''}): "
                   "the oracle's largest request is within it, so no strategy needs to compact there; their cells "
                   "are left out of every strategy's means.")
    if "overflow_requests" in t.columns:
        for _, r in contenders[contenders["overflow_requests"].fillna(0) > 0].iterrows():
            out.append(f"{r['strategy']} sent {r['overflow_requests']:.1f} requests per cell over the window "
                       "(they keep nothing).")
    out.extend(pareto_findings(t))
    out.extend(stress_findings(summary_all) if summary_all is not None else [])
    if "cost_vs_full" not in t.columns or t["cost_vs_full"].isna().all():
        out.append("No oracle cells in this run, so cost is not shown relative to `full` (add `full` to "
                   "`strategies=`).")
    return out


def console(run_dir: Path) -> str:
    """The headline as plain text for the console: one row per strategy, the same numbers as report.html."""

    summary = load(run_dir)
    if summary.empty:
        return "(no finished cells)"
    summary = data.labelled(with_cost_vs_full(summary))
    cfg = read_config(run_dir)
    main = data.compared(summary, cfg)
    writers = list(dict.fromkeys(main["writer"].astype(str)))
    scored, _ = data.headline(main)
    t = table(data.per_writer(scored, len(writers)))
    if t.empty:
        return "(no cell in the headline: every session fits the window)"
    cols = [c for c, _, _ in METRICS + BESIDE if c in t.columns]
    names = dict((c, h) for c, h, _ in METRICS + BESIDE)
    rows = [{"strategy": r["strategy"] + (" *" if r["reference"] else ""), "cells": r["cells"],
             **{names[c]: "" if r.get(c) != r.get(c) else f"{r[c]:.3f}" if c != "compactions" else f"{r[c]:.1f}"
                for c in cols}} for r in t.to_dict("records")]
    lines = not_measurable(summary.to_dict("records"))
    return format_table(rows, ["strategy", "cells", *[names[c] for c in cols]]) + \
        (f"\n(* reference rows; one row per strategy · writer ({', '.join(writers)}), never pooled; cell means over "
         "the headline cells: sessions that need compaction)" if len(writers) > 1 else
         f"\n(* reference rows; cell means over the headline cells: {writers[0] if writers else '?'} writer, "
         "sessions that need compaction)") + \
        "".join(f"\n{x}; left out of the means and the gate" for x in lines) + _factorial(scored, cfg)


def _factorial(scored, cfg: dict[str, Any]) -> str:
    """Writer × agent on the console: per strategy and headline metric, each factor's main effect and the
    interaction (the report's "Writer × agent" section has the means, intervals and the variance split)."""
    cells = scored[~scored["strategy"].str.endswith(" (oracle)")]
    agent = str((cfg.get("agent") or {}).get("model", "offline")) if isinstance(cfg.get("agent"), dict) else "offline"
    if cells.empty or not F.applies(cells, agent):
        return ""
    fx = F.effects(cells, [c for c, _, higher in METRICS if higher is not None], agent)
    if fx.empty:
        return ""
    names = {c: h for c, h, _ in METRICS}
    rows = [{"strategy": r["strategy"], "metric": names.get(r["metric"], r["metric"]),
             **{k: f"{r[k]:+.3f}" for k in ("writer effect", "agent effect", "interaction")}}
            for r in fx.to_dict("records")]
    return "\n\nwriter × agent (main effects and interaction; the report has the means and the variance split):\n" + \
        format_table(rows, ["strategy", "metric", "writer effect", "agent effect", "interaction"])


__all__ = ["console", "interval", "identity", "table", "shown", "findings", "pareto", "pareto_findings",
           "with_cost_vs_full", "git_commit", "METRICS", "directions"]
