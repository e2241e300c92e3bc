"""What was lost: per strategy, the truth items it most often lost, after which compaction each was first
missing, and that compaction's text; every leaked injection with the sentence that leaked it.

Everything comes from the run's files: checks.csv's `point=all` rows (one per item and cell: "lost at X of
N requests; first at request i (event e): why"), compactions.jsonl, and for a leak the request the
scorer named, rebuilt from requests.jsonl and read with the scorer's own findings (`scoring.trace`).
"""
from __future__ import annotations

import re
from typing import Any

from bench.scoring.checks import WORSE
from bench.scoring.metrics import METRICS
from bench.report.data import _count
from bench.report.writers import _calls
from bench.results.store import KEY_COLUMNS

DETAIL = re.compile(r"^(?:lost|present) at (\d+) of (\d+) requests(?:; first at request (\d+) \(event ([^)]*)\))?"
                    r"(?::\s*(.*))?$", re.S)
KEPT = tuple(m.name for m in METRICS if m.name and m.higher)   # items that are lost, not found


def _parsed(rows):
    """checks.csv `point=all` rows with the detail's counts split out (rows whose detail does not parse
    — a run from an older scorer — are left out)."""
    parts = rows["detail"].fillna("").astype(str).str.extract(DETAIL)
    parts.columns = ["bad", "of", "first", "event", "why"]
    out = rows.assign(bad=parts["bad"].astype(float), of=parts["of"].astype(float),
                      first=parts["first"].astype(float), event=parts["event"], why=parts["why"].fillna(""))
    return out[out["of"].notna() & (out["of"] > 0)]


def compaction_before(compactions: dict[str, list[dict[str, Any]]], cell: str, request: int) -> dict | None:
    """The cell's last successful compaction made after agent request `request` at the latest (None: lost
    before any compaction). The scorer holds an item at no more than its neighbouring requests score, so
    an item a compaction drops is already lost at the agent request just before it; that request is the
    compaction's `request` less its writer calls (logged in between) less one."""

    done = [c for c in compactions.get(cell, []) if c.get("ok") is True
            and _count(c.get("request")) - len(_calls(c)) - 1 <= request]
    return done[-1] if done else None


def excerpt(text: str, n: int = 240) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= n else text[:n - 1] + "…"


def most_lost(checks, compactions, labels, per_strategy: int = 5):
    """Rows (strategy, scenario, item, what it says, share of requests lost, first lost at, after which
    compaction, its excerpt), the `per_strategy` most lost items of each strategy; each cell counts once."""
    import pandas as pd

    rows = checks[(checks["point"] == "all") & checks["metric"].isin(KEPT)]
    if rows.empty:
        return pd.DataFrame()
    rows = _parsed(rows)
    rows = rows[rows["bad"] > 0].assign(share=lambda d: d["bad"] / d["of"])
    if rows.empty:
        return pd.DataFrame()
    out = []
    for strategy, g in rows.groupby("strategy", sort=True):
        top = g.sort_values(["share", "first"], ascending=[False, True], kind="stable").head(per_strategy)
        for r in top.to_dict("records"):
            cell = "/".join(_text(r[c]) for c in KEY_COLUMNS)
            comp = compaction_before(compactions, cell, int(r["first"])) if r["first"] == r["first"] else None
            key = f"{r['metric']}:{r['item']}"
            out.append({"strategy": strategy, "scenario": r["scenario"], "item": key,
                        "says": excerpt(labels(r["scenario"]).get(key, ""), 90),
                        "lost": r["share"], "first lost at": f"request {int(r['first'])}" if r["first"] == r["first"] else "",
                        "after compaction": "none yet" if comp is None else f"#{comp.get('n')}",
                        "its text begins": "" if comp is None else excerpt(comp.get("text"), 160)})
    return pd.DataFrame(out)


def leaks(checks, sentence) -> Any:
    """Rows (strategy, writer, scenario, injection, share of requests, first at, routes, the sentence):
    every leaked injection; `sentence(cell, request, injection)` finds the words that leaked it."""
    import pandas as pd

    rows = checks[(checks["point"] == "all") & (checks["metric"] == "leakage")]
    if rows.empty:
        return pd.DataFrame()
    rows = _parsed(rows)
    rows = rows[rows["bad"] > 0]
    out = []
    for r in rows.sort_values(["strategy", "writer", "scenario"], kind="stable").to_dict("records"):
        cell = "/".join(_text(r[c]) for c in KEY_COLUMNS)
        first = int(r["first"]) if r["first"] == r["first"] else None
        out.append({"strategy": r["strategy"], "writer": r["writer"], "scenario": r["scenario"], "injection": r["item"],
                    "present": r["bad"] / r["of"], "first at": f"request {first}" if first is not None else "",
                    "route": r["why"], "the sentence": excerpt(sentence(cell, first, r["item"]) if first is not None
                                                              else "", 200)})
    return pd.DataFrame(out)


def _text(v: Any) -> str:
    return str(int(v)) if isinstance(v, float) and v == v and v.is_integer() else str(v)


assert set(KEPT).isdisjoint(WORSE)
__all__ = ["most_lost", "leaks", "compaction_before"]
