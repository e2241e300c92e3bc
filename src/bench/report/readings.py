"""One computed line per figure: what it shows, in numbers, so a reader who skims the page gets the finding
and one who looks at the plot knows what to look for. Each takes the frame its figure draws."""
from __future__ import annotations

from typing import Any

NOTHING = "Nothing to read: no value to plot."


def sawtooth(series: dict[str, Any]) -> str:
    per: dict[str, list[int]] = {}
    for s in series.values():
        for strategy, (_, marks) in s["lines"].items():
            per.setdefault(strategy, []).append(len(marks))
    if not per:
        return NOTHING
    mean = {k: sum(v) / len(v) for k, v in per.items()}
    busy = max(mean, key=mean.get)
    never = sorted(k for k, v in mean.items() if v == 0)
    return (f"{busy} compacts most often ({mean[busy]:.1f} compactions per session shown)"
            + (f"; {', '.join(never)} never compact{'s' if len(never) == 1 else ''} on these sessions" if never else "")
            + ".")


def bars(table, label: str, columns: list[str], lower: tuple[str, ...] = ()) -> str:
    """The best row of each panel (`lower`: the columns where less is better)."""
    if table is None or table.empty:
        return NOTHING
    parts = []
    for c in columns:
        col = table[[label, c]].dropna()
        if col.empty:
            continue
        best = col.loc[col[c].idxmin() if c in lower else col[c].idxmax()]
        worst = col.loc[col[c].idxmax() if c in lower else col[c].idxmin()]
        parts.append(f"{c}: best {best[label]} {best[c]:.3f}, worst {worst[label]} {worst[c]:.3f}")
    return "; ".join(parts) + "." if parts else NOTHING


def drift(points) -> str:
    if points is None or points.empty:
        return "No cell compacted more than once, so there is no drift to read."
    last = points.sort_values("check_point").groupby(["strategy", "metric"]).tail(1)
    worst = last.loc[last["score"].idxmin()]
    if worst["score"] > -0.005:
        return "No strategy loses ground as compactions repeat: every line ends at or above its start."
    return (f"The largest drift: {worst['strategy']} loses {-worst['score']:.3f} of its {worst['metric']} score by "
            f"compaction {int(worst['check_point'])}.")


def scatter(cells, x: str, y: str) -> str:
    pts = cells[[x, y]].dropna()
    if pts.empty:
        return NOTHING
    over = int((pts[x] > 1).sum())
    return (f"{len(pts)} cells, retention from {pts[y].min():.3f} to {pts[y].max():.3f}; {over} cost more than the "
            "oracle on their session (right of the dashed line).")


def heatmap(pivot) -> str:
    if pivot is None or pivot.empty:
        return NOTHING
    rows = pivot.mean(axis=1, skipna=True).dropna()
    if rows.empty:
        return NOTHING
    return (f"Hardest session: {rows.idxmin()} (mean retention {rows.min():.3f} over the strategies); easiest: "
            f"{rows.idxmax()} ({rows.max():.3f}).")


def sweep(table, x: str, y: str = "retention") -> str:
    col = y if y in table.columns else next((c for c in table.columns if c.endswith("retention")), None)
    if table is None or table.empty or col is None:
        return NOTHING
    best = table.loc[table.groupby("strategy")[col].idxmax()]
    return "Best " + f"{col} per strategy: " + "; ".join(f"{r['strategy']} at {x}={r[x]:g} ({r[col]:.3f})"
                                                        for r in best.to_dict("records")) + "."


__all__ = ["sawtooth", "bars", "drift", "scatter", "heatmap", "sweep"]
