"""`compaction-bench view RUN_DIR [--cell ID] [--open]`: RUN_DIR/view.html, one static page to read a
run cell by cell — the timeline of requests and their sizes, every compaction's text, and the context
at any request with each truth item marked kept, lost, stale or leaked by the scorer's own findings.

The page needs no server and no network (inline script and style, data embedded), so it works opened
from a CI artifact. Each cell's data is embedded gzip-compressed and unpacked by the browser only when
the cell is opened (DecompressionStream), which keeps the page a few MB for the default run.
"""
from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path

from bench.errors import BadInput
from bench.results.store import read_config
from bench.results.store import load
from bench.results.trace import Run, cells
from bench.view.data import build

PAGE = Path(__file__).with_name("page.html")


def write_view(run_dir: Path, cell: str | None = None) -> Path:
    """Write RUN_DIR/view.html (only the cells whose name contains `cell`, when given); returns its path."""

    run_dir = Path(run_dir)
    run = Run(run_dir, read_config(run_dir))
    chosen = [c for c in cells(load(run_dir)) if cell is None or cell == c.name or cell in c.name]
    if cell is not None and not chosen:
        raise BadInput(f"--cell {cell}: no cell of {run_dir / 'summary.csv'} has that name (or part of a name)")
    if chosen and not run.scenarios:
        raise BadInput(f"{run_dir / 'config.yaml'}: its scenarios cannot be found from here (the viewer shows "
                       "their text and truth: run it where the run's scenarios are)")
    index, blobs = build(run, chosen)
    data = "".join(f"<script type='application/gzip' id='{html.escape(k)}'>{base64.b64encode(v).decode()}</script>"
                   for k, v in blobs.items())
    title = html.escape(f"compaction-bench view: {run_dir.resolve().name}")
    # one pass, so a placeholder's name inside a value is never replaced; "<" inside the script is \u003c,
    # so no value can end it (</script>) or open a comment (<!--)
    fill = {"__TITLE__": title, "__INDEX__": json.dumps(index).replace("<", "\\u003c"), "__DATA__": data}
    page = re.sub("__TITLE__|__INDEX__|__DATA__", lambda m: fill[m.group()], PAGE.read_text(encoding="utf-8"))
    path = run_dir / "view.html"
    path.write_text(page, encoding="utf-8")
    return path


__all__ = ["write_view"]
