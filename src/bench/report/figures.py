"""The report's plots as PNG bytes (matplotlib, Agg backend, imported on use).

Every figure colours a strategy the same way (`Colours`: Okabe-Ito, then Paul Tol's muted set, both
colour-blind-safe, given out by sorted strategy name, so the mapping is stable across figures and
runs), and puts its legend outside the data.
"""
from __future__ import annotations

import io
import os
from concurrent.futures import Future

from bench.errors import forked_pool
from bench.report.render import Figure

# Okabe & Ito (2008) without black, then Paul Tol's "muted" scheme: 16 colours a colour-blind reader tells apart
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#332288",
           "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255", "#AA4499"]
MARKERS = "osD^vP*Xh<>p"


def base_name(strategy: str) -> str:
    """A strategy's name without the report's labels (' (oracle)')."""
    return str(strategy).split(" (")[0]


class Colours:
    """One colour (and marker) per strategy for the whole report, by sorted name."""

    def __init__(self, strategies):
        names = sorted({base_name(s) for s in strategies})
        self.map = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}
        self.marks = {n: MARKERS[i % len(MARKERS)] for i, n in enumerate(names)}

    def __call__(self, strategy: str) -> str:
        return self.map.get(base_name(strategy), "#777777")

    def marker(self, strategy: str) -> str:
        return self.marks.get(base_name(strategy), "o")


def _legend_right(ax_or_fig, handles=None, labels=None) -> None:
    """The legend beside the plot, never over the data."""
    kw = {"fontsize": 8, "frameon": False}
    if handles is not None:
        ax_or_fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), **kw)
    else:
        ax_or_fig.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), **kw)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


class Painter:
    """Draws the report's figures in a second process while this one computes the tables.

    Drawing is about half of a report's CPU (matplotlib's layout and PNG encoding) and needs only the
    small frames handed to each figure function, so on two cores it costs no wall time. The worker is
    forked (as the run's cell workers are) before the report reads the logs: a spawned one would run
    the caller's main script again, which a script without a `__main__` guard cannot survive. On one
    core, or with `parallel=False`, a figure is drawn here when asked. Use as a context manager."""

    def __init__(self, parallel: bool | None = None):
        if parallel is None:
            parallel = len(os.sched_getaffinity(0)) > 1 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) > 1
        self.pool = None
        if parallel:
            self.pool = forked_pool(1)
            self.pool.submit(_plt)          # matplotlib imports there while the first tables are built

    def __call__(self, draw, *args, **kw) -> "Figure | Future | None":
        """`draw(*args, **kw)`: one of this module's figure functions (a Figure or None), or its future."""
        return self.pool.submit(draw, *args, **kw) if self.pool is not None else draw(*args, **kw)

    def __enter__(self) -> "Painter":
        return self

    def __exit__(self, *exc) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=exc[0] is None, cancel_futures=exc[0] is not None)


def _png(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    _plt().close(fig)
    return buf.getvalue()


def bars(table, label: str, columns: list[str], name: str, caption: str, ylim: tuple[float, float] | None = (0, 1),
         colours: Colours | None = None):
    """One panel per column, one bar per row of `table` (labelled by `label`); with `colours`, each bar in
    its strategy's colour, so a strategy looks the same in every figure."""
    if table is None or table.empty or not columns:
        return None
    plt = _plt()
    n = len(columns)
    fig, axes = plt.subplots(1, n, figsize=(min(11, 1.2 + n * max(2.2, 0.35 * len(table))), 3.2), squeeze=False,
                             sharey=bool(ylim))
    labels = table[label].astype(str).tolist()
    fill = [colours(x) if colours else PALETTE[0] for x in labels]
    for ax, col in zip(axes[0], columns):
        ax.bar(range(len(table)), table[col].fillna(0), color=fill)
        ax.set_xticks(range(len(table)), labels, rotation=35, ha="right", fontsize=8)
        ax.set_title(col, fontsize=9)
        if ylim:
            ax.set_ylim(*ylim)
        ax.grid(axis="y", alpha=.3)
    fig.tight_layout()
    return Figure(name, _png(fig), caption)


def drift(points, caption: str, colours: Colours | None = None):
    """Change in score since the cell's first check point against compaction number, one panel per
    metric, one line per strategy."""
    if points is None or points.empty:
        return None
    colours = colours or Colours(points["strategy"])
    from matplotlib.ticker import FuncFormatter, SymmetricalLogLocator

    plt = _plt()
    metrics = list(dict.fromkeys(points["metric"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(4 * len(metrics), 3.2), squeeze=False, sharey=True)
    for ax, metric in zip(axes[0], metrics):
        for strategy, g in points[points["metric"] == metric].groupby("strategy", sort=False):
            ax.plot(g["check_point"], g["score"], marker=colours.marker(strategy), color=colours(strategy),
                    label=strategy)
        ax.set_title(metric)
        ax.set_xscale("symlog", base=2, linthresh=1)
        ax.xaxis.set_major_locator(SymmetricalLogLocator(base=4, linthresh=1))   # 1, 4, 16, ...: labels never touch
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_xlabel("compactions so far (up to)")
        ax.set_ylim(-1.05, 1.05)
        ax.axhline(0, color="#444", lw=.8)
        ax.grid(alpha=.3)
    axes[0][0].set_ylabel("change since the cell's first check point")
    _legend_right(axes[0][-1])
    return Figure("drift", _png(fig), caption)


def scatter(df, x: str, y: str, name: str, caption: str, colours: Colours | None = None, xline: float | None = None):
    """One point per cell, coloured by strategy."""
    if df.empty or x not in df.columns or df[x].isna().all() or df[y].isna().all():
        return None
    plt = _plt()
    colours = colours or Colours(df["strategy"])
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for strategy, g in df.groupby("strategy", sort=True):
        ax.scatter(g[x], g[y], label=strategy, alpha=.85, color=colours(strategy), marker=colours.marker(strategy))
    if xline is not None:
        ax.axvline(xline, color="#444", lw=.8, ls="--")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.grid(alpha=.3)
    _legend_right(ax)
    return Figure(name, _png(fig), caption)


def sawtooth(series, caption: str, colours: Colours, name: str = "sawtooth"):
    """Tokens per agent request against request number, one small panel per scenario, one line per
    strategy; the window and the default trigger as lines, compactions as dots.

    `series`: {scenario: {"window": w, "trigger": t, "lines": {strategy: (sizes, compaction indexes)}}}."""
    if not series:
        return None
    from matplotlib.ticker import MaxNLocator

    plt = _plt()
    n = len(series)
    cols = min(4, n)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(2.6 * cols + 1.6, 1.9 * rows + .4), squeeze=False)
    seen: dict[str, object] = {}
    for ax, (scenario, s) in zip(axes.flat, series.items()):
        for strategy, (sizes, marks) in sorted(s["lines"].items()):
            (line,) = ax.plot(range(len(sizes)), sizes, lw=.9, color=colours(strategy), label=strategy)
            seen.setdefault(strategy, line)
            ax.plot(marks, [sizes[k] for k in marks], ls="", marker=".", ms=4, color=colours(strategy))
        ax.axhline(s["window"], color="#000", lw=.9)
        ax.axhline(s["trigger"], color="#000", lw=.7, ls=":")
        ax.set_title(scenario, fontsize=8)
        ax.tick_params(labelsize=6)
        ax.xaxis.set_major_locator(MaxNLocator(4, integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(3))
        ax.yaxis.set_major_formatter(_thousands())
        ax.set_ylim(0, s["window"] * 1.15)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    from matplotlib.lines import Line2D

    handles = list(seen.values()) + [Line2D([], [], color="#000", lw=.9), Line2D([], [], color="#000", lw=.7, ls=":"),
                                     Line2D([], [], color="#444", ls="", marker=".")]
    labels = list(seen) + ["window", "default trigger", "compaction"]
    fig.supxlabel("agent request", fontsize=8)
    fig.supylabel("tokens sent", fontsize=8)
    fig.subplots_adjust(left=.06, right=.85, bottom=.08, top=.95, wspace=.25, hspace=.45)   # tight_layout: slow
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(0.86, 0.5), fontsize=8, frameon=False)
    return Figure(name, _png(fig), caption)


def _thousands():
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _: f"{v / 1000:g}k" if v >= 1000 else f"{v:g}")


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


def lines(table, x: str, columns: list[str], name: str, caption: str, colours: Colours | None = None):
    """One panel per column: `columns` against `x`, one line per strategy (a sweep of one setting)."""
    if table is None or table.empty or not columns:
        return None
    plt = _plt()
    fig, axes = plt.subplots(1, len(columns), figsize=(min(14, 2.4 * len(columns)), 2.8), squeeze=False)
    for ax, col in zip(axes[0], columns):
        for strategy, g in table.groupby("strategy"):
            g = g.sort_values(x)
            ax.plot(g[x], g[col], marker=colours.marker(strategy) if colours else "o",
                    color=colours(strategy) if colours else None, label=strategy)
        ax.set_title(col, fontsize=9)
        ax.set_xlabel(x, fontsize=8)
        ax.grid(alpha=.3)
    _legend_right(fig, *axes[0][0].get_legend_handles_labels())
    fig.tight_layout()
    return Figure(name, _png(fig), caption)


def front(points, caption: str, colours: Colours, oracle: tuple[str, float, float] | None = None):
    """Cost against knowledge, one marker per strategy (`points`: name, cost ×full, retention, on the front),
    the Pareto front drawn as a step line through the strategies nothing beats on both; the oracle, which
    ignores the window, as a grey reference marker."""
    if not points:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.2, 3.4))
    for name, x, y, on in points:
        ax.scatter([x], [y], s=64 if on else 36, color=colours(name), marker=colours.marker(name), label=name,
                   edgecolors="#000" if on else "none", linewidths=.8, zorder=3)
    line = sorted((x, y) for _, x, y, on in points if on)
    if line:
        xs, ys = [line[0][0]], [line[0][1]]
        for x, y in line[1:]:
            xs += [x, x]
            ys += [ys[-1], y]
        ax.plot(xs, ys, color="#444", lw=1, ls="--", zorder=2, label="Pareto front")
        for name, x, y, on in points:
            if on:
                ax.annotate(base_name(name), (x, y), textcoords="offset points", xytext=(5, -10), fontsize=7)
    if oracle is not None:
        ax.scatter([oracle[1]], [oracle[2]], color="#999", marker="*", s=90, label=f"{base_name(oracle[0])} (oracle; ignores the window)")
    ax.set_xlabel("cost ×full (1 = the oracle's cost)")
    ax.set_ylabel("mean retention (goal, constraints, facts)")
    ax.set_ylim(-0.03, 1.05)
    ax.grid(alpha=.3)
    _legend_right(ax)
    return Figure("front", _png(fig), caption)
