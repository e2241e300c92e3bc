"""`compaction-bench baseline [OVERRIDES...] --out DIR`: a compact, committable baseline for the gate.

Runs the configured cells (whatever strategies, scenarios, writers and repeats the overrides name) in a
scratch folder and keeps only what `compaction-bench compare` reads: summary.csv (wall times left empty,
so the file only changes with scores), scenarios.csv (the tags a gate file's thresholds may name),
repeats.csv when cells ran more than once, and config.yaml (what produced it). The logs, checks and
report stay behind: they are large and the gate does not read them.

`python -m bench.cli.baseline` regenerates the repository's own results/baseline from the default offline
run; commit the new files with the change that explains them.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from bench import HOME
from bench.errors import BadInput
from bench.cli.parser import Parser
from bench.cli.run import config_dir_option, show
from bench.results.store import SUMMARY_COLUMNS, append_csv, dump_yaml, read_config, read_csv
from bench.runner.config import redact_override
from bench.runner.run import run

CHECKOUT = HOME.parents[1]    # the repository, when the package runs from its checkout (src/bench)
BASELINE = CHECKOUT / "results" / "baseline"
VOLATILE = ("wall_s",)   # timing differs between machines; left empty so the file only changes with scores
KEPT = ("scenarios.csv", "repeats.csv")


def regenerate(overrides: list[str] | None = None, dest: Path = BASELINE) -> Path:
    """Run, then write the baseline files into `dest`; SystemExit(1) with a line when the run failed."""
    overrides = list(overrides or [])
    if any(o.lstrip("+~").startswith(("out=", "shard=")) for o in overrides):
        raise BadInput("baseline: give the folder with --out DIR, and no shard= (a baseline is one whole run)")
    with tempfile.TemporaryDirectory(prefix="baseline-") as tmp:
        src = Path(tmp) / "run"
        code = show(run([*overrides, f"out={src}"]), paths=False)   # the scratch run is removed below
        if code != 0:
            print(f"error: baseline: the run failed (exit {code}); nothing written to {dest}", file=sys.stderr)
            raise SystemExit(1)
        rows = read_csv(src / "summary.csv")
        cfg = {**read_config(src), "out": None, "overrides": [redact_override(o) for o in overrides]}
        dest.mkdir(parents=True, exist_ok=True)
        for name in KEPT:
            (dest / name).unlink(missing_ok=True)
            if (src / name).exists():
                shutil.copyfile(src / name, dest / name)
    rows.sort(key=lambda r: (r["scenario"], r["strategy"], r["writer"], r["window"], int(r["seed"] or 0)))
    for r in rows:
        r.update({k: "" for k in VOLATILE})
    path = dest / "summary.csv"
    tmp_path = path.with_suffix(".tmp")
    tmp_path.unlink(missing_ok=True)
    append_csv(tmp_path, SUMMARY_COLUMNS, rows)
    os.replace(tmp_path, path)
    (dest / "config.yaml").write_text(dump_yaml(cfg), encoding="utf-8")
    return path


def main(argv: list[str] | None = None, default_out: Path | None = None) -> int:
    ap = Parser(prog="compaction-bench baseline",
                description="Run the configured cells and keep a compact baseline for compare.")
    ap.add_argument("overrides", nargs="*", help="run overrides (strategies=[...], scenarios=[...], repeats=K, ...)")
    ap.add_argument("--out", required=default_out is None, default=default_out,
                    help="the baseline folder to write (summary.csv, scenarios.csv, config.yaml)")
    args = ap.parse_args(config_dir_option(argv or []))
    try:
        path = regenerate(args.overrides, Path(args.out))
    except SystemExit as exc:
        return int(exc.code or 0)
    print(f"baseline: {path} ({len(read_csv(path))} cells)")
    return 0


if __name__ == "__main__":
    from bench.cli import guarded   # noqa: E402  (the package's entry point, for `python -m bench.cli.baseline`)

    # the project's own baseline, in a checkout; an installed package has no results/ of its own
    here = BASELINE if (CHECKOUT / "pyproject.toml").is_file() else None
    sys.exit(guarded(lambda argv: main(argv, default_out=here), sys.argv[1:]))
