"""`compaction-bench run --help`: the config groups, each strategy's keys and the run's own keys,
read from the config files themselves (plain YAML, no Hydra), so the help is never out of date."""
from __future__ import annotations

from pathlib import Path

from bench import HOME
from bench.runner.config import config_dirs, groups

HEAD = """\
usage: compaction-bench run [OVERRIDES...] [-m] [--config-dir DIR]

Replay every scenario of the suite through each strategy and writer; write results/<run-id>/.
Overrides are Hydra style: KEY=VALUE, GROUP=NAME, strategy.NAME.KEY=VALUE; -m sweeps comma lists
into one run (-m writer.model=offline,openai/gpt-4o-mini). --config-dir DIR (or config_dir=DIR)
adds your own strategy/, suite/, model/ files, found by name like the built-in ones."""


def text(own: Path | None = None) -> str:
    import yaml

    dirs = config_dirs({"config_dir": own})
    lines = [HEAD, "", "config groups (GROUP=NAME; files GROUP/NAME.yaml in conf/ or your config_dir):"]
    for group in groups():
        names = sorted({p.stem for d in dirs for p in (d / group).glob("*.yaml")})
        use = {"model": "writer=NAME agent=NAME judge=NAME, or writer.model=<any litellm model>",
               "strategy": "strategies=[NAME,...]"}.get(group, f"{group}=NAME")
        lines.append(f"  {group:<9} {', '.join(names)}   ({use})")
    lines += ["", "strategies and the keys each takes (strategy.NAME.KEY=VALUE; run: strategies=[NAME,...]):"]
    for d in dirs:
        for path in sorted((d / "strategy").glob("*.yaml")):
            spec = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            keys = " ".join(f"{k}={_show(v)}" for k, v in spec.items() if not str(k).startswith("_")) or "(no keys)"
            lines.append(f"  {path.stem:<22} {keys}")
    lines += ["", "the run's keys (KEY=VALUE), as conf/config.yaml sets and explains them:"]
    body = (HOME / "conf" / "config.yaml").read_text(encoding="utf-8").split("  - _self_", 1)[-1]
    lines += [f"  {line}" for line in body.strip("\n").splitlines()]
    return "\n".join(lines)


def _show(value: object) -> str:
    import json

    if isinstance(value, str):
        return repr(value) if " " in value or not value else value
    return json.dumps(value, separators=(",", ":"))
