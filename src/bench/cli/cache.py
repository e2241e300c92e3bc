"""`compaction-bench cache stats|clear [--dir DIR] [--model M]`: what the response cache of real models
holds, and emptying it (all of it, or one model's answers) so the next run asks again;
`responses.refresh=true` re-asks the calls of one run instead."""
from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from bench.cli.parser import Parser
from bench.errors import BadInput
from bench.models.cache import DEFAULT_DIR, ResponseCache, responses_dir

def main(argv: list[str]) -> int:
    p = Parser(prog="compaction-bench cache", description=__doc__.split("\n\n")[0].split(": ", 1)[1])
    p.add_argument("action", choices=["stats", "clear"])
    p.add_argument("--dir", help=f"the cache directory (default: {DEFAULT_DIR}, as responses.dir)")
    p.add_argument("--model", help="clear only this model's answers (a litellm model string)")
    a = p.parse_args(argv)
    directory = Path(responses_dir(True, a.dir))
    if not (directory / "responses.sqlite").exists():
        print(f"{directory}: no response cache yet (0 answers)")
        return 0
    cache = ResponseCache(directory)
    try:
        if a.action == "clear":
            n = cache.clear(a.model)
            print(f"{cache.path}: removed {n} answer{'s' if n != 1 else ''}" + (f" of {a.model}" if a.model else ""))
            return 0
        rows = cache.models()
    except sqlite3.Error as exc:
        raise BadInput(f"{cache.path}: not a usable response cache: {exc}") from None
    size = sum(f.stat().st_size for f in directory.glob("responses.sqlite*"))
    print(f"{cache.path}: {sum(r[1] for r in rows)} answers, {size / 1e6:.1f} MB")
    for model, n, oldest, newest in rows:
        span = (f"{time.strftime('%Y-%m-%d', time.localtime(oldest))} .. "
                f"{time.strftime('%Y-%m-%d', time.localtime(newest))}")
        print(f"  {model}  {n} answers  {span}")
    return 0
