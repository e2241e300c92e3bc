"""The numbers a report shows, computed from a run's files with pandas (imported on use)."""
from __future__ import annotations

from pathlib import Path
from typing import Any
from bench.results.store import KEY_COLUMNS
from bench.results.store import KEY_COLUMNS as KEY
from bench.scoring.cache_sim import hit_rates, load_profile, profile_names
from bench.errors import BadInput
from bench.scoring.metric import TOKENS
from bench.scoring.metrics import RETENTION as M_RETENTION, SCORES, higher_is_better, shown
from bench.results.stats import interval, paired_interval, verdict
from bench.results.store import fitting, in_headline, read_csv

QUALITY = SCORES   # every metric the gate checks by default, in summary.csv's order
COST = ["compactions", "compaction_failures", *(m.column for m in shown(TOKENS))]
RETENTION = M_RETENTION
DRIFT = {"goal": "goal", "constraint": "constraint", "fact": "fact"}


def present(df, columns: list[str]) -> list[str]:
    """Columns that exist and hold at least one value (a metric no cell had stays out of tables)."""
    return [c for c in columns if c in df.columns and df[c].notna().any()]


def by(df, keys: list[str], columns: list[str]):
    """Mean per group of the columns present, groups in first-seen order."""
    cols = present(df, columns)
    return df.groupby(keys, sort=False)[cols].mean().reset_index()


def headline(df):
    """(cells in the headline means, cells left out): the cells of sessions that need compaction — the
    oracle's largest request does not fit the window (`store.fitting`) — for every strategy alike, the oracle
    included. A session that fits is shown apart for everyone: whether a strategy reported compactions there
    never decides whether its cell counts."""
    import pandas as pd

    fit = fitting(df.to_dict("records"))
    if not fit:
        return df, df.iloc[0:0]
    keep = [in_headline(r, fit) for r in df[["scenario", "window"]].to_dict("records")]
    mask = pd.Series(keep, index=df.index, dtype=bool)
    return df[mask], df[~mask]


def labelled(df):
    """The strategy column with the oracle marked as such."""
    if "oracle" not in df.columns:
        return df
    mark = df["oracle"].fillna(0).astype(float) > 0
    return df.assign(strategy=[f"{s} (oracle)" if m else s for s, m in zip(df["strategy"], mark)])


def stressed(df):
    """Cells whose writer is a stress profile (offline:NAME): shown in the robustness section, kept out
    of the headline means, which compare strategies under one writer."""
    return df["writer"].astype(str).str.startswith("offline:")


def given_writers(summary, cfg: dict[str, Any]) -> list[str]:
    """The writers the run was asked to compare (`writer.model`, each sweep value in order), as against the
    stress profiles `stress:` adds beside the offline writer; a run that does not say falls back on every
    writer that is not a stress profile, then on every writer."""
    configs = cfg.get("sweep") if isinstance(cfg.get("sweep"), list) else [cfg]
    named = [str(c.get("writer", {}).get("model")) for c in configs if isinstance(c, dict)
             and isinstance(c.get("writer"), dict) and c["writer"].get("model") is not None]
    ran = list(dict.fromkeys(summary["writer"].astype(str))) if not summary.empty else []
    given = [w for w in dict.fromkeys(named) if w in ran]
    return given or [w for w in ran if not w.startswith("offline:")] or ran


def compared(summary, cfg: dict[str, Any]):
    """The cells of the writers the run compares (`given_writers`): the headline's, one row per strategy and
    writer when there are several. The others (stress profiles beside `offline`) are the robustness section's."""
    return summary[summary["writer"].astype(str).isin(given_writers(summary, cfg))]


SEP = " · "   # strategy · writer: a row label when a run compares writers


def per_writer(df, writers: int | None = None):
    """The strategy column as `strategy · writer` when the frame holds several writers (or `writers` > 1):
    every table and figure grouped by strategy then shows one row per strategy and writer, never the
    writers' cells pooled."""
    if df.empty or "writer" not in df.columns or (writers or df["writer"].nunique()) < 2:
        return df
    return df.assign(strategy=[f"{s}{SEP}{w}" for s, w in zip(df["strategy"], df["writer"].astype(str))])


def robustness(df, metrics: list[str]):
    """Per strategy: each metric under `offline` and under each stress profile that ran, with the change
    from `offline` (same scenarios only, so a drop is the writer's errors, not other sessions)."""
    import pandas as pd

    stress = df[stressed(df)]
    rows = []
    for (strategy, writer), cells in stress.groupby(["strategy", "writer"], sort=True):
        base = df[(df["strategy"] == strategy) & (df["writer"] == "offline") & df["scenario"].isin(cells["scenario"])]
        if base.empty:
            continue
        row = {"strategy": strategy, "writer": writer, "cells": len(cells)}
        for m in metrics:
            if m in df.columns and cells[m].notna().any():
                new, old = cells[m].mean(), base[m].mean()
                row[m] = new
                row[f"{m} change"] = new - old
        rows.append(row)
    return pd.DataFrame(rows)


def worst_harm(row: dict[str, Any], metrics) -> tuple[float, str, float] | None:
    """A robustness row's largest harm (harm, metric label, change): the biggest drop of a higher-is-better
    metric or rise of a lower-is-better one; `metrics`: (column, label, higher) triples."""
    worst = None
    for c, h, up in metrics:
        ch = row.get(f"{c} change")
        if ch is None or ch != ch or up is None:
            continue
        harm = -ch if up else ch
        if worst is None or harm > worst[0]:
            worst = (harm, h, ch)
    return worst


def retention(df):
    """Mean of the retention metrics a cell has (goal, constraints, facts): one number per cell."""
    cols = present(df, RETENTION)
    return df[cols].mean(axis=1, skipna=True) if cols else df.index.to_series() * float("nan")


def cell_rows(checks, cells):
    """The checks.csv rows of the given cells (summary rows), matched on the key columns."""

    if checks.empty or cells.empty:
        return checks.iloc[0:0]
    def key(df):   # checks.csv names the oracle's cells by the strategy alone (the summary here is labelled)
        parts = [df[c].astype(str).str.replace(r"\.0$", "", regex=True) if c in ("window", "seed") else
                 df[c].astype(str).str.replace(r" \(oracle\)$", "", regex=True) if c == "strategy" else
                 df[c].astype(str) for c in KEY_COLUMNS]
        out = parts[0]
        for p in parts[1:]:
            out = out + "/" + p
        return out

    return checks[key(checks).isin(set(key(cells)))]


def drift(checks):
    """Change in score since each cell's first check point, per strategy, metric and compaction number,
    averaged over cells (each cell weighs the same; a scenario's own level cancels out). A check point's
    score is the mean over the items in force at that request. Compaction numbers are binned by powers
    of two (1, 2, 3-4, 5-8, ...), since strategies compact from a few times to hundreds of times a session."""

    rows = checks[checks["point"].isin(["compaction", "final"]) & checks["metric"].isin(list(DRIFT))
                  & checks["check_point"].notna() & checks["score"].notna()]
    if rows.empty:
        return rows
    rows = rows.assign(score=rows["score"].astype(float), check_point=rows["check_point"].astype(int))
    per = rows.groupby([*KEY_COLUMNS, "metric", "check_point"], sort=True)["score"].mean().reset_index()
    first = per.groupby([*KEY_COLUMNS, "metric"])["score"].transform("first")
    per = per.assign(score=per["score"] - first)
    per = per.assign(check_point=per["check_point"].map(lambda n: 0 if n <= 0 else 1 << (n - 1).bit_length()))
    per = per.groupby([*KEY_COLUMNS, "metric", "check_point"], sort=True)["score"].mean().reset_index()
    return per.groupby(["strategy", "metric", "check_point"], sort=True)["score"].mean().reset_index()


def constraint_kinds(checks):
    """Constraint fidelity per strategy and constraint kind (ban, must, preference, ...): in each cell, the
    mean over that kind's constraints of each one's mean over the requests where it was in force
    (checks.csv `point=all`); then the mean over cells, like every table. It weighs constraints, not
    requests, so it is not constraint_fidelity broken down: a constraint in force for two requests
    counts as much as one in force for two hundred."""

    rows = checks[(checks["metric"] == "constraint") & checks["kind"].notna() & (checks["point"] == "all")]
    if rows.empty:
        return rows
    rows = rows.assign(score=rows["score"].astype(float))
    per = rows.groupby([*KEY_COLUMNS, "kind"], sort=False)["score"].mean().reset_index()
    return per.pivot_table(index="strategy", columns="kind", values="score", aggfunc="mean", sort=True).reset_index()


def probe_kinds(checks):
    """Per strategy and probe kind: probes, passed, failed to run (counts over cells), and the pass rate as
    a mean over cells of each cell's rate (failures count as not passed), like every other score."""

    rows = checks[checks["metric"] == "probe"]
    if rows.empty:
        return rows
    oracle = rows["oracle"] if "oracle" in rows.columns else float("nan")
    rows = rows.assign(ran=rows["score"].notna(), passed=rows["score"].fillna(0).astype(float),
                       unanswerable=(oracle == 0))
    rows = rows.assign(counted=~rows["unanswerable"], passed_counted=rows["passed"] * ~rows["unanswerable"])
    g = rows.groupby(["strategy", "kind"], sort=True)
    out = g.agg(probes=("item", "size"), unanswerable=("unanswerable", "sum"), counted=("counted", "sum"),
                passed=("passed_counted", "sum"), ran=("ran", "sum")).reset_index()
    out["passed"] = out["passed"].astype(int)
    out["unanswerable"] = out["unanswerable"].astype(int)
    out["failed_to_run"] = (out["probes"] - out["ran"]).astype(int)
    per = rows.groupby([*KEY, "kind"], sort=True).agg(counted=("counted", "sum"), passed=("passed_counted", "sum"))
    per = per[per["counted"] > 0].assign(rate=lambda d: d["passed"] / d["counted"]).reset_index()
    rate = per.groupby(["strategy", "kind"])["rate"].mean()
    out["pass_rate"] = [rate.get((s, k), float("nan")) for s, k in zip(out["strategy"], out["kind"])]
    return out.drop(columns=["ran", "counted"])


def cache_grid(path: Path, records: list[dict[str, Any]], summary, labels=None) -> Any:
    """Cache hit rate per strategy (`labels`: one row label per summary row, e.g. strategy · writer) and
    provider profile, re-simulated from requests.jsonl's records."""
    import pandas as pd

    profiles = [load_profile(n).for_model(load_profile(n).price_model) for n in profile_names() if n != "none"]
    try:
        rates = saved(path, repr(profiles), lambda: hit_rates(records, profiles),
                      path.parent / ".report-cache" / "cache-grid.json")
    except (KeyError, TypeError, IndexError, ValueError, AttributeError) as exc:
        raise BadInput(f"{path}: a request record lacks or mangles a field the cache simulator needs "
                       f"({type(exc).__name__}: {exc})")
    if not rates:
        return pd.DataFrame()
    keys = ["scenario", "strategy", "writer", "window", "seed"]
    names = summary[keys].astype(str).agg("/".join, axis=1)
    labels = summary["strategy"] if labels is None else labels
    rows = [{"strategy": s, **rates[n]} for n, s in zip(names, labels) if n in rates]
    return pd.DataFrame(rows).groupby("strategy", sort=False).mean().reset_index() if rows else pd.DataFrame()


def saved(source: Path, settings: str, compute, keep: Path):
    """`compute()`'s result (JSON), kept in the file `keep` and reused while `source` (its size and
    modification time) and `settings` are the same. Re-simulating every request under every cache
    profile, or validating a large scenario for its truth's labels, is most of a report's time, and a
    re-rendered report reads the same files."""
    import hashlib
    import json

    try:
        st = source.stat()
    except OSError:
        return compute()
    stamp = f"{source.resolve()}:{st.st_size}:{st.st_mtime_ns}:{hashlib.sha256(settings.encode()).hexdigest()[:16]}"
    try:
        kept = json.loads(keep.read_text(encoding="utf-8"))
        if isinstance(kept, dict) and kept.get("stamp") == stamp and "value" in kept:
            return kept["value"]
    except (OSError, ValueError):
        pass
    result = compute()
    try:
        keep.parent.mkdir(exist_ok=True)
        keep.write_text(json.dumps({"stamp": stamp, "value": result}), encoding="utf-8")
    except OSError:
        pass
    return result


def _text(value: Any) -> str:
    """A log field read as text whatever a damaged or hand-edited log holds there."""
    return "" if value is None or value is False else value if isinstance(value, str) else str(value)


def _count(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError, OverflowError):
        return 0


def compaction_outcomes(records: list[dict[str, Any]]):
    """Per strategy: compaction attempts, how many failed, fell back (and to what) or needed a repair.
    A strategy whose compactions all fall back never really compacts; the summary's counts alone hide that."""
    import pandas as pd

    rows = [{"strategy": str(r.get("strategy", "?")), "ok": r.get("ok") is True, "fallback": _text(r.get("fallback")),
             "repairs": _count(r.get("repairs")), "writer": _writer(_text(r.get("cell")))} for r in records]
    if not rows:
        return pd.DataFrame()
    df = per_writer(pd.DataFrame(rows))
    kind = df["fallback"].str.split(":").str[0].str.strip()
    out = df.assign(failed=~df["ok"], fell_back=df["fallback"] != "", repaired=df["repairs"] > 0).groupby(
        "strategy", sort=True).agg(attempts=("ok", "size"), failed=("failed", "sum"), fell_back=("fell_back", "sum"),
                                   repaired=("repaired", "sum")).reset_index()
    kinds = kind[df["fallback"] != ""].groupby(df["strategy"]).agg(lambda k: ", ".join(
        f"{name} {n}" for name, n in k.value_counts().items()))
    out["fallbacks"] = [kinds.get(s, "") for s in out["strategy"]]
    return out


def _writer(cell: str) -> str:
    """The writer of a cell name scenario/strategy/writer.../window/seed (a writer may hold '/')."""
    parts = cell.split("/")
    return "/".join(parts[2:-2]) if len(parts) >= 5 else ""


def intervals(df, metrics: list[str]):
    """Per strategy and metric: the mean with its 95% interval (bench.results.stats: bootstrap over scenarios and
    repeats) and a verdict against the first strategy, paired by scenario, window and seed. Offline
    cells are deterministic, so their intervals come from the scenarios alone."""
    import pandas as pd

    strategies = list(dict.fromkeys(df["strategy"]))
    if not strategies:
        return pd.DataFrame()
    ref = strategies[0]
    rows = []
    # rows per strategy · writer pair across writers on the same session; a strategy pooling writers keeps them apart
    pooled = bool((df.groupby("strategy")["writer"].nunique() > 1).any())
    for m in present(df, metrics):
        vals = df[df[m].notna()]
        keyed = {s: {(r["scenario"], r["window"], r["writer"] if pooled else "", r["seed"]): r[m]
                     for r in g[["scenario", "window", "writer", "seed", m]].to_dict("records")}
                 for s, g in vals.groupby("strategy", sort=False)}
        for s in strategies:
            if s not in keyed:
                continue
            by_scen: dict = {}
            for (scen, *_), v in keyed[s].items():
                by_scen.setdefault(scen, []).append(float(v))
            iv = interval(by_scen.values())
            row = {"strategy": s, "metric": m, "cells": len(keyed[s]), "mean [95%]": iv.text() if iv else ""}
            if s != ref and ref in keyed:
                pairs: dict = {}
                for k, v in keyed[s].items():
                    if k in keyed[ref]:
                        pairs.setdefault(k[0], []).append((float(keyed[ref][k]), float(v)))
                diff = paired_interval(pairs.values()) if pairs else None
                row[f"vs {ref}"] = f"{verdict(diff, higher_is_better(m))} {diff.text()}" if diff else ""
            rows.append(row)
    return pd.DataFrame(rows)


def pass_k(run_dir: Path):
    """Mean probe pass^k per strategy and writer from repeats.csv (empty without repeats or probes)."""
    import pandas as pd

    rows = [r for r in read_csv(run_dir / "repeats.csv") if r.get("probe_pass_k") not in (None, "")]
    if not rows:
        return pd.DataFrame()
    df = pd.DataFrame(rows)
    df = df.assign(probe_pass_k=df["probe_pass_k"].astype(float), probe_pass_rate=pd.to_numeric(
        df["probe_pass_rate"], errors="coerce"), repeats=df["repeats"].astype(int))
    return df.groupby(["strategy", "writer"], sort=False).agg(
        cells=("probe_pass_k", "size"), repeats=("repeats", "max"), probe_pass_rate=("probe_pass_rate", "mean"),
        probe_pass_k=("probe_pass_k", "mean")).reset_index()
