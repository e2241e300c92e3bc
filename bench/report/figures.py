"""The report's plots as PNG bytes (matplotlib, Agg backend, imported on use)."""
from __future__ import annotations

import io

from .render import Figure


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    _plt().close(fig)
    return buf.getvalue()


def bars(table, label: str, columns: list[str], name: str, caption: str, ylim: tuple[float, float] | None = (0, 1)):
    """Grouped bars: one group per row of `table` (labelled by `label`), one bar per column."""
    if table is None or table.empty or not columns:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(table) * max(1, len(columns)) / 2), 3.6))
    width = 0.8 / len(columns)
    xs = range(len(table))
    for i, col in enumerate(columns):
        ax.bar([x + i * width for x in xs], table[col].fillna(0), width, label=col)
    ax.set_xticks([x + width * (len(columns) - 1) / 2 for x in xs], table[label].astype(str), rotation=20, ha="right")
    if ylim:
        ax.set_ylim(*ylim)
    ax.legend(fontsize=8, ncol=min(4, len(columns)))
    ax.grid(axis="y", alpha=.3)
    return Figure(name, _png(fig), caption)


def drift(points, caption: str):
    """Retention against compaction number, one panel per metric, one line per strategy."""
    if points is None or points.empty:
        return None
    from matplotlib.ticker import FuncFormatter, SymmetricalLogLocator

    plt = _plt()
    metrics = list(dict.fromkeys(points["metric"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(4 * len(metrics), 3.2), squeeze=False, sharey=True)
    for ax, metric in zip(axes[0], metrics):
        for strategy, g in points[points["metric"] == metric].groupby("strategy", sort=False):
            ax.plot(g["check_point"], g["score"], marker="o", label=strategy)
        ax.set_title(metric)
        ax.set_xscale("symlog", base=2, linthresh=1)
        ax.xaxis.set_major_locator(SymmetricalLogLocator(base=4, linthresh=1))   # 1, 4, 16, ...: labels never touch
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel("compactions so far (up to)")
        ax.set_ylim(-0.05, 1.05)
        ax.grid(alpha=.3)
    axes[0][0].set_ylabel("mean score at check point")
    axes[0][-1].legend(fontsize=8)
    return Figure("drift", _png(fig), caption)


def scatter(df, x: str, y: str, name: str, caption: str):
    """One point per cell, coloured by strategy."""
    if df.empty or df[x].isna().all() or df[y].isna().all():
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for strategy, g in df.groupby("strategy", sort=False):
        ax.scatter(g[x], g[y], label=strategy, alpha=.8)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.grid(alpha=.3)
    ax.legend(fontsize=8)
    return Figure(name, _png(fig), caption)


def heatmap(pivot, name: str, caption: str):
    """Scenarios x strategies, 0-1, with the value written in each cell."""
    if pivot is None or pivot.empty:
        return None
    import numpy as np

    plt = _plt()
    fig, ax = plt.subplots(figsize=(1.6 + 1.3 * pivot.shape[1], 0.9 + 0.4 * pivot.shape[0]))
    im = ax.imshow(pivot.values.astype(float), cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(pivot.shape[1]), pivot.columns, rotation=20, ha="right")
    ax.set_yticks(range(pivot.shape[0]), pivot.index)
    for (i, j), v in np.ndenumerate(pivot.values.astype(float)):
        if v == v:
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8)
    fig.colorbar(im, ax=ax, fraction=.03)
    return Figure(name, _png(fig), caption)
