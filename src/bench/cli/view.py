"""`compaction-bench view RUN_DIR [--cell ID] [--open]`: write RUN_DIR/view.html (and its data folder view/), the
static viewer; with --cell a page of its own."""
from __future__ import annotations

import webbrowser
from pathlib import Path

from bench.cli.parser import Parser
from bench.errors import BadInput
from bench.view import write_view

def main(argv: list[str]) -> int:
    p = Parser(prog="compaction-bench view", description="Write RUN_DIR/view.html and its data folder view/: a grid "
                                                          "of every cell's scores, then each cell's contexts and "
                                                          "compactions, item by item.")
    p.add_argument("run_dir", help="a results folder (with summary.csv)")
    p.add_argument("--cell", help="only the cells whose name contains this, e.g. pr-queue-small/naive, in a page of "
                                  "its own: RUN_DIR/view-<ID>.html")
    p.add_argument("--open", action="store_true", help="open the page in the browser")
    args = p.parse_args(argv)
    run_dir = Path(args.run_dir)
    if not (run_dir / "summary.csv").exists():
        raise BadInput(f"{run_dir}: no summary.csv (is it a results directory?)")
    try:
        path = write_view(run_dir, args.cell)
    except OSError as exc:
        raise BadInput(f"{exc.filename or run_dir}: cannot write the viewer: {exc.strerror or exc}") from None
    print(f"viewer: {path} ({path.stat().st_size / 1e6:.2f} MB; each cell's data beside it in {path.with_suffix('')}/)")
    if args.open:
        webbrowser.open(path.resolve().as_uri())
    return 0
