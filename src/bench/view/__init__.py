"""`compaction-bench view RUN_DIR [--cell ID] [--open]`: RUN_DIR/view.html, a static page to read a run —
a landing grid of every cell's headline scores, then per cell the timeline of requests and their sizes,
every compaction with the diff of the context it made (dropped, kept, added), the context at any request
with each truth item marked kept, lost, stale or leaked by the scorer's own verdict, and each item's
timeline over the requests.

The page needs no server and no network, so it works opened from a CI artifact. It is small: each cell's
data is a script file beside it (view/c<N>.js, one per scenario table view/s<N>.js), loaded by a
<script> tag when the cell is opened (fetch() of file:// is blocked in Chromium; a script tag is not).
`--cell` writes a page of its own (view-<cell>.html and its folder), never the full one.
"""
from __future__ import annotations

import gc
import html
import math
import json
import re
from pathlib import Path
from typing import Any

from bench.errors import BadInput
from bench.harness.logs import KEY_COLUMNS
from bench.results.store import number, read_config, read_csv
from bench.results.trace import Run, RunCell
from bench.scoring.metric import HEADLINE
from bench.scoring.metrics import shown
from bench.view.data import STATUS, build

PAGE = Path(__file__).with_name("page.html")
EXTRA = ["compactions", "compaction_failures"]   # the grid's counts before the headline metrics


def js(value: Any) -> str:
    """A value as a JavaScript literal that no text inside it can end or escape: "<" is \\u003c (no
    </script>, no <!--), and the two line separators JSON allows but older JavaScript did not are escaped."""
    return (json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def run_cells(rows: list[dict[str, str]], path: Path) -> list[RunCell]:
    """The cells of summary.csv's rows, in its order (read as text: no pandas to start)."""
    out = []
    for n, row in enumerate(rows, 2):
        try:
            window = int(float(row.get("window") or 0))
        except ValueError:
            raise BadInput(f"{path} line {n}: window {row.get('window')!r} is not a number") from None
        strategy = row.get("strategy") or ""
        oracle = (row.get("oracle") or "").strip() in ("1", "1.0", "True", "true")
        if oracle and strategy.endswith(" (oracle)"):     # the report's label
            strategy = strategy[:-len(" (oracle)")]
        name = "/".join([row.get("scenario") or "", strategy, *(row.get(k) or "" for k in KEY_COLUMNS[2:])])
        out.append(RunCell(name, row.get("scenario") or "", strategy, row.get("writer") or "", window, oracle))
    return out


def score(value: str | None) -> float | None:
    """A summary value for the grid: a finite number, else None (empty, or a tampered "inf")."""
    f = number(value)
    return f if f is not None and math.isfinite(f) else None


def page_name(cell: str | None) -> str:
    """view.html, or for --cell a name of its own made only of safe characters."""
    if cell is None:
        return "view"
    return "view-" + (re.sub(r"[^A-Za-z0-9._-]+", "_", cell).strip("._-")[:80] or "cell")


def write_view(run_dir: Path, cell: str | None = None) -> Path:
    """Write RUN_DIR/view.html and its data folder RUN_DIR/view/ (with `cell`: only the cells whose name
    contains it, as RUN_DIR/view-<cell>.html and its own folder); returns the page's path."""
    run_dir = Path(run_dir)
    run = Run(run_dir, read_config(run_dir))
    rows = read_csv(run_dir / "summary.csv")
    every = run_cells(rows, run_dir / "summary.csv")
    chosen = [(c, r) for c, r in zip(every, rows) if cell is None or cell == c.name or cell in c.name]
    if cell is not None and not chosen:
        raise BadInput(f"--cell {cell}: no cell of {run_dir / 'summary.csv'} has that name (or part of a name)")
    if chosen and not run.scenarios:
        raise BadInput(f"{run_dir / 'config.yaml'}: its scenarios cannot be found from here (the viewer shows "
                       "their text and truth: run it where the run's scenarios are)")
    # The logs are read into millions of small dicts and lists, none of them in a cycle: the cyclic collector
    # would walk them again and again for nothing (a third of the time on the default run)
    paused = gc.isenabled()
    gc.disable()
    try:
        ids, files = build(run, [c for c, _ in chosen])
    finally:
        if paused:
            gc.enable()
    metrics = [{"column": m.column, "short": m.short, "direction": m.direction, "meaning": m.meaning}
               for m in shown(HEADLINE)]
    index = [{"id": ids.get(c.name, ""), "name": c.name, "scenario": c.scenario, "strategy": c.strategy,
              "writer": c.writer, "window": c.window, "seed": r.get("seed") or "", "oracle": c.oracle,
              "counts": [score(r.get(k)) for k in EXTRA], "scores": [score(r.get(m["column"])) for m in metrics]}
             for c, r in chosen]
    name = page_name(cell)
    folder = run_dir / name
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.js"):     # last time's data files would be stale; only ours are removed
        if re.fullmatch(r"[cs]\d+\.js", old.name):
            old.unlink()
    for fid, data in files.items():
        (folder / f"{fid}.js").write_text(f"VIEW.put({js(fid)},{js(data)});\n", encoding="utf-8")
    title = html.escape(f"compaction-bench view: {run_dir.resolve().name}" + (f" (cells matching {cell})" if cell else ""))
    # one pass, so a placeholder's name inside a value is never replaced
    fill = {"__TITLE__": title, "__INDEX__": js(index), "__METRICS__": js(metrics), "__DIR__": js(name),
            "__STATUS__": js(STATUS)}
    page = re.sub("__[A-Z]+__", lambda m: fill.get(m.group(), m.group()),
                  PAGE.read_text(encoding="utf-8"))
    path = run_dir / f"{name}.html"
    path.write_text(page, encoding="utf-8")
    return path


__all__ = ["write_view", "page_name"]
