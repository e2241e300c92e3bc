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
# A key or header name that holds a secret (not max_tokens: a whole word, not part of one).
SECRET_KEY = re.compile(r"(?<![a-z])(api[_-]?key|apikey|secret|password|passwd|passphrase|token|auth|authorization|"
                        r"bearer|credentials?|cookie|private[_-]?key|access[_-]?key)(?![a-z])", re.I)
# A value that is one: a provider's key prefix, an Authorization header value, a JWT.
SECRET_VALUE = re.compile(r"(?<![\w\-./])(sk-|sk_|rk_|xai-|gsk_|hf_|AIza|ghp_|gho_|ghu_|ghs_|github_pat_|glpat-|"
                          r"xox[abprs]-|AKIA|ASIA|eyJ)[A-Za-z0-9_\-.]{8,}|\b(bearer|basic)\s+[A-Za-z0-9+/=_\-.]{8,}", re.I)
USERINFO = re.compile(r"(://[^/@\s:]*):([^/@\s]+)@")      # the password in http://user:password@host


def secret_problems(overrides: list[str]) -> list[str]:
    """One line per override that carries a secret: by its key's name, its value, or a password in a URL.
    Checked before Hydra sees the overrides and before anything is written, and the line never repeats
    the secret: keys come from the environment only."""
    problems = []
    for o in overrides:
        key, _, value = o.partition("=")
        key = key.lstrip("+~")
        why = ("its name says it holds a secret" if SECRET_KEY.search(key) else
               "its value names a secret header or key" if SECRET_KEY.search(_names_in(value)) else
               "its value looks like an API key or token" if SECRET_VALUE.search(value) else
               "its URL carries a password" if USERINFO.search(value) else "")
        if why:
            problems.append(f"overrides: {key}: {why}; secrets come from the environment only (e.g. OPENAI_API_KEY), "
                            f"never the command line, which the results record; nothing was run")
    return problems


def _names_in(value: str) -> str:
    """The mapping keys of an override value such as {X-Api-Token:abc,Accept:json}."""
    return " ".join(re.findall(r"[{,]\s*['\"]?([\w\-]+)['\"]?\s*:", value))


def expand_sweeps(overrides: list[str]) -> list[list[str]]:
    """`a=1,2 b=x` -> [[a=1, b=x], [a=2, b=x]] using Hydra's own override grammar."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    if secret_problems(overrides) or syntax_problems(overrides):
        raise BadInput(secret_problems(overrides) or syntax_problems(overrides))
    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except HydraException as exc:
        raise BadInput(explain(_first_line(exc), overrides))
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

    if secret_problems(overrides) or syntax_problems(overrides):
        raise BadInput(secret_problems(overrides) or syntax_problems(overrides))
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            cfg = hydra_compose(config_name="config", overrides=overrides)
        OmegaConf.resolve(cfg)
    except (HydraException, OmegaConfBaseException) as exc:
        raise BadInput(explain(_first_line(exc), overrides))
    return cfg


def syntax_problems(overrides: list[str]) -> list[str]:
    """Overrides that are not KEY=VALUE, or whose brackets or quotes do not close: said in our words, one
    line each, before Hydra's parser words it its own way."""
    problems = []
    for o in overrides:
        key, eq, value = o.partition("=")
        if not key.lstrip("+~") or (not eq and not o.startswith("~")):
            problems.append(f"overrides: '{o}' is not KEY=VALUE (e.g. window=32000, strategies=[naive,vibey])")
            continue
        depth, quote = 0, ""
        for ch in value:
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            elif ch in "[{":
                depth += 1
            elif ch in "]}":
                depth -= 1
                if depth < 0:
                    break
        if depth or quote:
            what = "a quote is not closed" if quote else "its brackets do not match"
            problems.append(f"overrides: {o}: {what} (a list is [a,b], a mapping {{k:v}})")
    return problems


def explain(line: str, overrides: list[str]) -> str:
    """Hydra's first line of an error, as one line in our words: which override, and what would do."""
    unknown = re.match(r"Could not override '([^']+)'", line)
    if unknown and unknown.group(1):
        key = unknown.group(1)
        return f"overrides: unknown key '{key}' (the keys are in conf/config.yaml; +{key}=VALUE adds a new one)"
    group = re.search(r"Could not find '([^'/]+)/([^']*)'", line)
    if group:
        name, choice = group.groups()
        choices = sorted(p.stem for p in (CONF_DIR / name).glob("*.yaml"))
        return (f"overrides: {name}={choice}: no such {name} (one of {', '.join(choices)}; conf/{name}/)" if choices
                else f"overrides: {name}={choice}: no config group '{name}' (the groups are the folders of conf/)")
    bad = re.search(r"(?:override|parsing override) '([^']*)'", line)
    word = bad.group(1) if bad else next((o for o in overrides if o and o.split("=")[0].lstrip("+~") in line), "")
    if re.search(r"no viable alternative|mismatched input|extraneous input|token recognition|Error parsing", line):
        return (f"overrides: {word or ' '.join(overrides)}: cannot read it as KEY=VALUE (a list is [a,b], a "
                f"sweep under -m is a,b; quote values with spaces)")
    return f"overrides: {word + ': ' if word else ''}{line}"


def redact(value: Any, key: str = "") -> Any:
    """A plain copy of a config with anything secret-looking replaced: a value under a secret-sounding
    key (at any depth: a header inside extra_headers too), a value that looks like a key, a URL's
    password. The overrides list is redacted the same way (`key=***`)."""
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_override(v) if key == "overrides" and isinstance(v, str) else redact(v, key) for v in value]
    if isinstance(value, str) and (SECRET_KEY.search(key) or SECRET_VALUE.search(value)):
        return "***"
    if isinstance(value, str):
        return USERINFO.sub(r"\1:***@", value)
    return value


def redact_override(override: str) -> str:
    """`writer.api_key=sk-...` -> `writer.api_key=***`, a URL's password -> `***`."""
    if secret_problems([override]):
        key, _, value = override.partition("=")
        return f"{key}=***" if not USERINFO.search(value) or SECRET_KEY.search(key) else USERINFO.sub(r"\1:***@", override)
    return override


def _first_line(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.splitlines()[0].split())
