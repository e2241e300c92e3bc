"""`compaction-bench init [DIR]`: a starting point inside a user's repository.

It writes a config folder (a starter strategy and its config, a suite, one small scenario) and a CI
workflow, then prints the commands that run the starter offline and gate it, so a harness team
starts from something that works and replaces the strategy with their own. It never overwrites.
"""
from __future__ import annotations

import argparse
from importlib import metadata
from pathlib import Path

from bench import HOME
from bench.errors import BadInput

HERE = Path(__file__).parent / "templates"
CONFIG = "compaction"                       # the config folder, relative to DIR
SCENARIO = HOME / "scenarios" / "hand" / "pr-queue-small.yaml"
EXTERNAL = HOME / "examples" / "external" / "naive.py"     # stdlib only: the --exec starter
EXTERNAL_PROMPT = HOME / "strategies" / "prompts" / "naive.md"


def commands(config_dir: str = CONFIG, name: str = "my_summary") -> dict[str, str]:
    cells = f"--config-dir {config_dir} suite=mine strategies=[{name},truncate]"
    return {"baseline": f"compaction-bench baseline {cells} --out {config_dir}/baseline",
            "run_new": f"compaction-bench run {cells} out=results/new",
            "gate": f"compaction-bench compare {config_dir}/baseline results/new"}


def files(config_dir: str = CONFIG, external: bool = False) -> dict[str, str]:
    """Relative path -> content."""
    cmd = commands(config_dir, starter(external))
    try:
        install = f"compaction-bench=={metadata.version('compaction-bench')}"
    except metadata.PackageNotFoundError:
        install = "compaction-bench"
    fill = {"config_dir": config_dir, "scenarios_dir": "scenarios", "baseline": f"{config_dir}/baseline",
            "install": install, **cmd}
    text = lambda name: (HERE / name).read_text(encoding="utf-8").format(**fill)   # noqa: E731
    if external:
        own = {f"{config_dir}/my_compactor.py": EXTERNAL.read_text(encoding="utf-8"),
               f"{config_dir}/my_compactor_prompt.md": EXTERNAL_PROMPT.read_text(encoding="utf-8"),
               f"{config_dir}/strategy/my_compactor.yaml": text("my_compactor.yaml")}
    else:
        own = {f"{config_dir}/my_summary.py": (HERE / "my_summary.py").read_text(encoding="utf-8"),
               f"{config_dir}/strategy/my_summary.yaml": text("my_summary.yaml")}
    return {**own,
            f"{config_dir}/suite/mine.yaml": text("suite.yaml"),
            f"{config_dir}/scenarios/starter.yaml": SCENARIO.read_text(encoding="utf-8"),
            ".github/workflows/compaction-bench.yml": text("workflow.yml")}


def starter(external: bool) -> str:
    return "my_compactor" if external else "my_summary"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="compaction-bench init", description=__doc__.splitlines()[0])
    p.add_argument("dir", nargs="?", default=".", help="the repository to write into (default: here)")
    p.add_argument("--exec", action="store_true", dest="external",
                   help="the starter is a program of its own over the external-strategy protocol (Python, stdlib "
                        "only; rewrite it in your harness's language), not a Python class")
    a = p.parse_args(argv)
    root = Path(a.dir)
    if root.exists() and not root.is_dir():
        raise BadInput(f"init: {a.dir} is a file, not a folder")
    todo = files(external=a.external)
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
    name = starter(a.external)
    cmd = commands(name=name)
    print("\nkeep the starter's scores as a baseline (commit it), then run a change and gate it, all offline:")
    if root.resolve() != Path.cwd().resolve():
        print(f"  cd {a.dir}")
    print(f"  {cmd['baseline']}\n  {cmd['run_new']}\n  {cmd['gate']}")
    print(f"\nthen edit {CONFIG}/{name}.py (or add strategy files to {CONFIG}/strategy/) and run the last two "
          f"again; .github/workflows/compaction-bench.yml runs them on every pull request.")
    return 0
