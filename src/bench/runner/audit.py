"""The audit's cells: the oracle, truncate and the reference adversaries on a scenario set, offline, through
the normal run machinery (bench.audit judges what they scored)."""
from __future__ import annotations

import shutil
from pathlib import Path

from bench.errors import run_stoppable
from bench.results.resume import done_cells
from bench.results.store import cell_key, read_csv
from bench.runner.cells import run_cells as run_all
from bench.runner.plan import plan


def run_cells(files: list[Path], out: Path, strategies: list[str],
              extra: tuple[str, ...] = ()) -> tuple[list[dict[str, str]], list[str], int]:
    """Run the strategies on the files with the offline models into `out` (`extra`: more overrides);
    (summary rows, cell errors, cells that were already there)."""
    quoted = ",".join("'" + str(f).replace("\\", "\\\\").replace("'", "\\'") + "'" for f in files)
    overrides = [f"scenarios=[{quoted}]", f"strategies=[{','.join(strategies)}]", f"out={out}",
                 "writer.model=offline", "agent.model=offline", "judge.model=offline", *extra]
    cells, cfg, _ = plan(overrides, False)
    out.mkdir(parents=True, exist_ok=True)
    done = done_cells(out)
    todo = [c for c in cells if c.key not in done]
    _, errors = run_stoppable(run_all(todo, out, int(cfg.concurrency)))
    shutil.rmtree(out / ".cells", ignore_errors=True)
    keys = {c.key for c in cells}
    return [r for r in read_csv(out / "summary.csv") if cell_key(r) in keys], errors, len(cells) - len(todo)
