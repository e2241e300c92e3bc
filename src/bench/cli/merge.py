"""`compaction-bench merge DIR... --out DIR`: join the folders of a sharded run into the one an unsharded
run writes (summary, checks and logs in plan order, repeats.csv, the report)."""
from __future__ import annotations

from pathlib import Path

from bench.cli.parser import Parser
from bench.errors import BadInput
from bench.report import write_report
from bench.results.shards import merge

def main(argv: list[str]) -> int:
    ap = Parser(prog="compaction-bench merge",
                                 description="Join the folders of a sharded run (shard=I/N) into one run folder.")
    ap.add_argument("dirs", nargs="+", help="the shard folders, every shard of one sweep")
    ap.add_argument("--out", required=True, help="the merged run folder (new or empty)")
    args = ap.parse_args(argv)
    dirs = [Path(d) for d in args.dirs]
    for d in dirs:
        if not (d / "summary.csv").exists():
            raise BadInput(f"{d}: no summary.csv (is it a results folder of a shard?)")
    out = merge(dirs, Path(args.out))
    write_report(out)
    print(f"merged {len(dirs)} shards: {out}")
    return 0
