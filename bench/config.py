"""Hydra composition for `compaction-bench run`, sweeps for `-m`, and secret redaction.

We use Hydra's compose API rather than `@hydra.main` so that one invocation
with `-m` becomes one run directory whose cells cover the sweep (one table to
compare writer models), and so bad overrides become one-line errors.
"""
from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

from .errors import BadInput

ROOT = Path(__file__).resolve().parent.parent
CONF_DIR = ROOT / "conf"
SECRET_KEY = re.compile(r"(api[_-]?key|secret|password|passwd|auth|bearer|credential)", re.I)
SECRET_VALUE = re.compile(r"^(sk-|sk_|xai-|gsk_|hf_|AIza)[A-Za-z0-9_\-]{8,}")


def expand_sweeps(overrides: list[str]) -> list[list[str]]:
    """`a=1,2 b=x` -> [[a=1, b=x], [a=2, b=x]] using Hydra's own override grammar."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException as exc:
        raise BadInput(f"overrides: {_first_line(exc)}")
    choices: list[list[str]] = []
    for o in parsed:
        if o.is_sweep_override():
            key = o.get_key_element()
            choices.append([f"{key}={v}" for v in o.sweep_string_iterator()])
        else:
            choices.append([o.input_line])
    return [list(combo) for combo in itertools.product(*choices)] or [[]]


def compose(overrides: list[str]):
    """The resolved config for one set of overrides; BadInput on unknown keys or values."""
    from hydra import compose as hydra_compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = hydra_compose(config_name="config", overrides=overrides)
        OmegaConf.resolve(cfg)
    except (HydraException, OmegaConfBaseException) as exc:
        line = _first_line(exc)
        unknown = re.match(r"Could not override '([^']+)'", line)
        if unknown:
            key = unknown.group(1)
            line = f"unknown key '{key}' (the keys are in conf/config.yaml; +{key}=VALUE adds a new one)"
        raise BadInput(f"overrides: {line}")
    return cfg


def redact(value: Any, key: str = "") -> Any:
    """A plain copy of a config with anything secret-looking replaced."""
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, key) for v in value]
    if isinstance(value, str) and (SECRET_KEY.search(key) or SECRET_VALUE.match(value)):
        return "***"
    return value


def _first_line(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.splitlines()[0].split())
