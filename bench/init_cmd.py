"""`compaction-bench init [DIR]`: a starting point inside a user's repository.

It writes a config folder (a starter strategy and its config, a suite, one small scenario) and a CI
workflow, then prints the commands that run the starter offline and gate it, so a harness team
starts from something that works and replaces the strategy with their own. It never overwrites.
"""
from __future__ import annotations

import argparse
import shutil
from importlib import metadata
from pathlib import Path

from .config import ROOT
from .errors import BadInput

HERE = Path(__file__).parent / "templates"
CONFIG = "compaction"                       # the config folder, relative to DIR
SCENARIO = ROOT / "scenarios" / "hand" / "pr-queue-small.yaml"


def commands(config_dir: str = CONFIG) -> dict[str, str]:
    cells = f"--config-dir {config_dir} suite=mine strategies=[my_summary,truncate]"
    return {"baseline": f"compaction-bench baseline {cells} --out {config_dir}/baseline",
            "run_new": f"compaction-bench run {cells} out=results/new",
            "gate": f"compaction-bench compare {config_dir}/baseline results/new"}


def files(config_dir: str = CONFIG) -> dict[str, str]:
    """Relative path -> content."""
    cmd = commands(config_dir)
    try:
        install = f"compaction-bench=={metadata.version('compaction-bench')}"
    except metadata.PackageNotFoundError:
        install = "compaction-bench"
    fill = {"config_dir": config_dir, "scenarios_dir": "scenarios", "baseline": f"{config_dir}/baseline",
            "install": install, **cmd}
    text = lambda name: (HERE / name).read_text(encoding="utf-8").format(**fill)   # noqa: E731
    return {f"{config_dir}/my_summary.py": (HERE / "my_summary.py").read_text(encoding="utf-8"),
            f"{config_dir}/strategy/my_summary.yaml": text("my_summary.yaml"),
            f"{config_dir}/suite/mine.yaml": text("suite.yaml"),
            f"{config_dir}/scenarios/starter.yaml": SCENARIO.read_text(encoding="utf-8"),
            ".github/workflows/compaction-bench.yml": text("workflow.yml")}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="compaction-bench init", description=__doc__.splitlines()[0])
    p.add_argument("dir", nargs="?", default=".", help="the repository to write into (default: here)")
    a = p.parse_args(argv)
    root = Path(a.dir)
    if root.exists() and not root.is_dir():
        raise BadInput(f"init: {a.dir} is a file, not a folder")
    todo = files()
    there = [f"init: {root / rel} exists; nothing was written (move it away, or init another folder)"
             for rel in todo if (root / rel).exists()]
    if there:
        raise BadInput(there)
    for rel, content in todo.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    print(f"wrote {len(todo)} files into {root}:")
    for rel in todo:
        print(f"  {rel}")
    cmd = commands()
    print("\nkeep the starter's scores as a baseline (commit it), then run a change and gate it, all offline:")
    if root.resolve() != Path.cwd().resolve():
        print(f"  cd {a.dir}")
    print(f"  {cmd['baseline']}\n  {cmd['run_new']}\n  {cmd['gate']}")
    print(f"\nthen edit {CONFIG}/my_summary.py (or add strategy files to {CONFIG}/strategy/) and run the last two "
          f"again; .github/workflows/compaction-bench.yml runs them on every pull request.")
    return 0
