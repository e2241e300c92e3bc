"""`compaction-bench compare BASE NEW [...]`: the CI gate."""
from __future__ import annotations

from pathlib import Path

from bench.cli.parser import Parser
from bench.errors import BadInput
from bench.gate.compare import build_gate, compare_runs
from bench.gate.render import FORMATS, render

def main(argv: list[str]) -> int:
    ap = Parser(prog="compaction-bench compare",
                description="Exit 1 when NEW is worse than BASE beyond the gate, in any cell or in a strategy's mean.")
    ap.add_argument("base", help="baseline results directory or summary.csv")
    ap.add_argument("new", nargs="?", help="new results directory or summary.csv (with --writers: BASE if left out)")
    ap.add_argument("--writers", metavar="A,B", help="compare writer A's cells of BASE with writer B's of NEW "
                                                     "(or of BASE itself): the writer axis, paired by scenario, "
                                                     "strategy, window and seed")
    ap.add_argument("--gate", metavar="FILE", help="gate file: thresholds per metric and scenario tag (README)")
    ap.add_argument("--max-drop", type=float, default=None,
                    help="largest allowed worsening of a quality metric (default 0.02, or the gate file's)")
    ap.add_argument("--threshold", action="append", metavar="[TAG:]METRIC=X",
                    help="a metric's threshold, for every cell or for the scenarios with TAG (repeatable)")
    ap.add_argument("--noise-aware", action="store_true",
                    help="fail only where a drop is beyond the threshold and outside its 95%% interval")
    ap.add_argument("--all-cells", action="store_true", help="every cell of BASE must be in NEW")
    ap.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    ap.add_argument("--output", metavar="FILE", help="write the output there instead of stdout")
    args = ap.parse_args(argv)
    gate = build_gate(args.gate, args.max_drop, args.threshold or [], args.noise_aware, args.all_cells)
    writers = None
    if args.writers is not None:
        parts = [p.strip() for p in args.writers.split(",")]
        if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
            raise BadInput(f"--writers: give two different writers as A,B (got '{args.writers}')")
        writers = (parts[0], parts[1])
    elif args.new is None:
        raise BadInput("compare: give BASE and NEW (or one run and --writers A,B)")
    res = compare_runs(args.base, args.new or args.base, gate, writers)
    text = render(res, args.format)
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise BadInput(f"--output: cannot write {args.output}: {exc.strerror or exc}") from None
    else:
        print(text, end="" if text.endswith("\n") else "\n", flush=True)
    return 0 if res.passed else 1
