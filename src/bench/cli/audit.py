"""`compaction-bench scenarios audit [PATH...] [--min-gap X] [--by-scenario] [--out DIR]`: can a scenario set
tell a strategy that keeps no working context from a real one? (bench.audit says how it is judged.)"""
from __future__ import annotations

import math
import shutil
import sys
import tempfile
from pathlib import Path

from bench import HOME
from bench.audit import (ADVERSARIES, BASELINE, DEFAULT_MIN_GAP, ORACLE, UNMARKED, _fmt, assess, by_scenario,
                         gains, table, trade)
from bench.cli.parser import Parser
from bench.errors import BadInput
from bench.results.store import fitting, in_headline, not_measurable
from bench.runner.audit import run_cells
from bench.scenarios import loader


def main(argv: list[str]) -> int:
    p = Parser(prog="compaction-bench scenarios audit",
                description="Run the oracle, truncate and the reference adversaries on a scenario set (offline "
                            "models) and say whether the set tells each adversary from the oracle.")
    p.add_argument("paths", nargs="*", help="scenario files, directories or globs (default: the bundled scenarios)")
    p.add_argument("--min-gap", type=float, default=DEFAULT_MIN_GAP,
                   help=f"how far below the oracle an adversary must fall to be caught (default {DEFAULT_MIN_GAP})")
    p.add_argument("--by-scenario", action="store_true", help="also print each adversary's per-scenario scores")
    p.add_argument("--out", help="keep the run's results in this folder (a folder of an earlier audit is reused)")
    a = p.parse_args(argv)
    if math.isnan(a.min_gap) or a.min_gap <= 0:
        raise BadInput(f"--min-gap: must be a positive number, got {a.min_gap:g}")
    files = loader.expand(a.paths or [str(HOME / "scenarios")], base=HOME)
    files = [f.resolve() for f in files]   # the run loads them and names every problem of every file
    marked = [ORACLE, BASELINE, *(x.name for x in ADVERSARIES if x.markers)]
    bare = [x.name for x in ADVERSARIES if not x.markers]
    out = Path(a.out) if a.out else Path(tempfile.mkdtemp(prefix="compaction-bench-audit-"))
    try:
        rows, errors, already = run_cells(files, out, marked)
        if already:
            print(f"audit: {already} cells already in {out}", file=sys.stderr)
        unmarked: list[dict[str, str]] = []
        if bare:   # their game pays only where the harness marks nothing: truncate beside them, no oracle
            unmarked, more, already = run_cells(files, out / UNMARKED, [BASELINE, *bare], ("markers=false",))
            if already:
                print(f"audit: {already} cells already in {out / UNMARKED}", file=sys.stderr)
            errors += more
    finally:
        if not a.out:
            shutil.rmtree(out, ignore_errors=True)
    lines, misses, detail = assess(rows, a.min_gap, unmarked)
    n = len({r["scenario"] for r in rows})
    print(f"audit of {n} scenario(s): oracle `{ORACLE}`, baseline `{BASELINE}`, offline models; "
          f"gap = adversary - oracle; caught = at least {a.min_gap:g} worse than the oracle"
          + (f"; {', '.join(bare)}: run with markers=false beside truncate and judged against it" if bare else ""))
    for line in not_measurable([*rows, *unmarked]):
        print(f"{line}: left out of the audit there")
    print(table(lines))
    if a.by_scenario:
        print()
        print(by_scenario(detail))
    print()
    for adv in ADVERSARIES:
        why = misses.get(adv.name, [])
        caught = [x.metric for x in lines if x.adversary == adv.name and x.caught]
        word = "NOT caught" if why else "caught"
        on = f" on {', '.join(caught)}" if caught and not why else ""
        if adv.pareto and not why:
            loss, _ = trade(adv, lines)
            won = gains(adv, lines)
            said = [f"{g:.1%} cheaper" if m == "cost_usd" else f"hit rate {g:+.3f}" for m, g in won.items()]
            on = (f": cheaper by knowing less — against truncate {', '.join(said) or 'no gain'}, and it loses "
                  f"{_fmt(loss)} on {' + '.join(adv.pays)}")
        elif adv.pays and not why:
            loss, gain = trade(adv, lines)
            on = (f": against truncate it loses {_fmt(loss)} on {' + '.join(adv.pays)} and gains {_fmt(gain)} on "
                  f"{' + '.join(adv.targets)}")
        mine = rows if adv.markers else unmarked
        fit = fitting(mine)
        idle = sorted(r["scenario"] for r in mine if r["strategy"] == adv.name and not in_headline(r, fit))
        apart = f"; left out, the session fits the window: {', '.join(idle)}" if idle else ""
        print(f"{adv.name}: {word}{on} ({adv.games}; target {' or '.join(adv.targets)}{apart})")
    for e in errors:
        print(f"error: {e}", file=sys.stderr)
    missed = [name for name, why in misses.items() if why]
    for name in missed:
        for why in misses[name]:
            print(f"not caught: {name}: {why}", file=sys.stderr)
    if errors:
        print(f"{len(errors)} cell(s) failed; the audit is incomplete", file=sys.stderr)
    if missed:
        print(f"{len(missed)} of {len(ADVERSARIES)} adversaries not caught: this scenario set cannot tell "
              f"{', '.join(missed)} from the oracle")
    elif not errors:
        print("every adversary caught: this scenario set tells each of them from the oracle")
    return 1 if missed or errors else 0
