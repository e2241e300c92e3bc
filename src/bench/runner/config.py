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

from bench import HOME
from bench.env import secret_name, words
from bench.errors import BadInput

CONF_DIR = HOME / "conf"
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
        why = ("its name says it holds a secret" if secret_name(key) or SECRET_KEY.search(key) else
               "its value names a secret header or key" if any(secret_name(n) for n in _names(value)) else
               "its value looks like an API key or token" if SECRET_VALUE.search(value) else
               "its URL carries a password" if USERINFO.search(value) else "")
        if why:
            problems.append(f"overrides: {key}: {why}; secrets come from the environment only (e.g. OPENAI_API_KEY), "
                            f"never the command line, which the results record; nothing was run")
    return problems


def _names(value: str) -> list[str]:
    """The mapping keys of an override value such as {X-Api-Token:abc,Accept:json}."""
    return re.findall(r"[{,]\s*['\"]?([\w\-]+)['\"]?\s*:", value)


def hidden(key: str) -> bool:
    """A key whose values are never written, whatever they look like: a secret's name, headers (any
    header can be a credential: Ocp-Apim-Subscription-Key, X-Goog-Api-Key) and environment entries."""
    w = words(key)
    return secret_name(key) or bool(SECRET_KEY.search(key)) or any(x in ("env", "environ", "environment") or
                                                                    "header" in x for x in w)


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


def user_dir(overrides: list[str]) -> Path | None:
    """The user's own config folder (`config_dir=DIR`, `--config-dir DIR` on the command line): its
    strategy/, suite/, model/ and cache/ files are found by name like the built-in ones in conf/."""
    given = [o.partition("=")[2].strip("'\"") for o in overrides if o.partition("=")[0].lstrip("+") == "config_dir"]
    if not given or given[-1] in ("", "null"):
        return None
    path = Path(given[-1]).expanduser().resolve()
    if not path.is_dir():
        raise BadInput(f"config_dir: {given[-1]}: no such folder (it holds strategy/, suite/ ... like conf/)")
    return path


def config_dirs(cfg: Any) -> list[Path]:
    """Where config files are looked up by name, the user's folder first."""
    own = cfg.get("config_dir") if cfg is not None else None
    return [Path(own), CONF_DIR] if own else [CONF_DIR]


def strategy_defaults(overrides: list[str], own: Path | None) -> list[str]:
    """`strategies=[mine]` with a strategy/mine.yaml that config.yaml's defaults do not list: add it as
    `strategy.mine`, so `strategy.mine.KEY=...` overrides work for it as for the built-in ones."""
    import yaml

    named = [o.partition("=")[2] for o in overrides if o.partition("=")[0] == "strategies"]
    if not named:
        return []
    listed = {str(k).partition("@")[2] for d in (yaml.safe_load((CONF_DIR / "config.yaml").read_text(encoding="utf-8"))
                                                  or {}).get("defaults", []) if isinstance(d, dict) for k in d}
    given = {o.partition("=")[0].lstrip("+") for o in overrides}
    extra = []
    for name in (n.strip(" '\"") for n in named[-1].strip("[] ").split(",")):
        slot = f"strategy.{name}"
        if (name and "." not in name and slot not in listed and f"strategy@{slot}" not in given
                and config_file("strategy", name, {"config_dir": own})):
            extra.append(f"+strategy@{slot}={name}")
    return extra


def config_file(group: str, name: str, cfg: Any) -> Path | None:
    """`GROUP/NAME.yaml` from the user's config folder, else from conf/; None when neither has it."""
    return next((p for d in config_dirs(cfg) if (p := d / group / f"{name}.yaml").is_file()), None)


def scenario_bases(cfg: Any) -> list[Path]:
    """What a relative scenario path that is not found in the working directory is tried against."""
    own = cfg.get("config_dir") if cfg is not None else None
    return [Path(own), HOME] if own else [HOME]


def did_you_mean(word: str, choices: Any) -> str:
    """' (did you mean X?)' for the closest of `choices`, or ''."""
    import difflib

    close = difflib.get_close_matches(word, [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def use_user_dir(path: Path | None) -> None:
    """A user's strategy module may sit in the working directory or in their config folder; they are
    searched after everything installed, so they never shadow a real package."""
    import sys

    for folder in (str(Path.cwd()), str(path) if path else None):
        if folder and folder not in sys.path:
            sys.path.append(folder)


def compose(overrides: list[str]):
    """The resolved config for one set of overrides; BadInput on unknown keys or values."""
    from hydra import compose as hydra_compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.errors import HydraException
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    if secret_problems(overrides) or syntax_problems(overrides):
        raise BadInput(secret_problems(overrides) or syntax_problems(overrides))
    own = user_dir(overrides)
    if own is not None:
        overrides = [o for o in overrides if o.partition("=")[0].lstrip("+") != "config_dir"]
        overrides += [f"config_dir='{own}'", f"hydra.searchpath=['file://{own}']"]
    use_user_dir(own)
    overrides = [*overrides, *strategy_defaults(overrides, own)]
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
            problems.append(f"overrides: {_bare(o, overrides)} is not KEY=VALUE (e.g. window=32000, "
                            f"strategies=[naive,vibey])")
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
            problems.append(f"overrides: {redact_override(o)}: {what} (a list is [a,b], a mapping {{k:v}})")
    return problems


def _bare(word: str, overrides: list[str]) -> str:
    """How an error line names an argument that is not KEY=VALUE: quoted when it is a config key (a
    forgotten `=`) or short and without digits, else by position only: a value split off by a stray space
    may be a secret."""
    head = word.lstrip("+~").split(".")[0]
    if head in {k.split(".")[0] for k in top_keys()} | set(groups()) | {"strategy", "strategies", "config_dir"} or \
            (len(word) <= 12 and not any(c.isdigit() for c in word)):
        return f"'{word}'"
    return f"argument {overrides.index(word) + 1} ({len(word)} characters)"


def explain(line: str, overrides: list[str]) -> str:
    """Hydra's first line of an error, as one line in our words: which override, and what would do."""
    unknown = re.match(r"Could not override '([^']+)'", line)
    if unknown and unknown.group(1):
        return f"overrides: unknown key '{unknown.group(1)}'{key_hint(unknown.group(1), overrides)}"
    group = re.search(r"Could not find '([^'/]+)/([^']*)'", line)
    if group:
        name, choice = group.groups()
        folders = [d / name for d in config_dirs({"config_dir": user_dir(overrides)})]
        choices = sorted({p.stem for f in folders for p in f.glob("*.yaml")})
        return (f"overrides: {name}={choice}: no such {name}{did_you_mean(choice, choices)} (one of "
                f"{', '.join(choices)}; conf/{name}/ or {name}/ in your config_dir)" if choices
                else f"overrides: {name}={choice}: no config group '{name}' (the groups are the folders of conf/: "
                     f"{', '.join(groups())})")
    bad = re.search(r"(?:override|parsing override) '([^']*)'", line)
    word = bad.group(1) if bad else next((o for o in overrides if o and o.split("=")[0].lstrip("+~") in line), "")
    word = redact_override(word or _unreadable(overrides))
    line = _scrub(line, overrides)
    if re.search(r"no viable alternative|mismatched input|extraneous input|token recognition|Error parsing", line):
        return (f"overrides: {word or 'one of them'}: cannot read it as KEY=VALUE (a list is [a,b], a "
                f"sweep under -m is a,b; quote values with spaces)")
    return f"overrides: {word + ': ' if word else ''}{line}"


def _unreadable(overrides: list[str]) -> str:
    """The first override Hydra's parser cannot read on its own ("" when each can)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import HydraException

    parser = OverridesParser.create()
    for o in overrides:
        try:
            parser.parse_overrides([o])
        except HydraException:
            return o
    return ""


def _scrub(line: str, overrides: list[str]) -> str:
    """A parser's message without the values it must not repeat: each override's value that redaction
    hides is replaced wherever the message quotes it (whole or in part)."""
    for o in overrides:
        if redact_override(o) != o:
            key, _, value = o.partition("=")
            for part in sorted({value, *re.split(r"[\[\]{}(),:'\"\s]+", value)}, key=len, reverse=True):
                if len(part) >= 4 and part in line and not part.lstrip("+~") == key.lstrip("+~"):
                    line = line.replace(part, "***")
    return line


def groups() -> list[str]:
    return sorted(p.name for p in CONF_DIR.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


def key_hint(key: str, overrides: list[str]) -> str:
    """Why a key is unknown and what works instead: the closest known key, the keys a strategy takes,
    or how to pass an extra setting to a model (the only places where adding a key does something)."""
    head, _, rest = key.partition(".")
    if head == "strategy" and "." in rest:
        name, _, param = rest.partition(".")
        takes = strategy_keys(name, user_dir(overrides))
        if takes is None:
            return f" (no strategy '{name}' is configured; compaction-bench run --help lists them)"
        if param in takes.get("accepts", ()):
            return f" (strategy.{name} takes it but its config does not set it: +{key}=VALUE)"
        keys = takes["keys"]
        return f"{did_you_mean(key, [f'strategy.{name}.{k}' for k in keys])} (strategy.{name} takes {', '.join(keys) or 'no keys'})"
    if head in ("writer", "agent", "judge") and rest:
        return f" (+{key}=VALUE passes an extra setting to the {head} model, e.g. +{head}.top_p=0.9)"
    return f"{did_you_mean(key, top_keys())} (the keys are in conf/config.yaml; compaction-bench run --help lists them)"


def top_keys() -> list[str]:
    import yaml

    data = yaml.safe_load((CONF_DIR / "config.yaml").read_text(encoding="utf-8")) or {}
    keys = []
    for k, v in data.items():
        if k != "defaults":
            keys.extend(f"{k}.{sub}" for sub in v) if isinstance(v, dict) else keys.append(k)
    return keys


def strategy_keys(name: str, own: Path | None = None) -> dict[str, Any] | None:
    """A configured strategy's keys (its config file's, with their values) and every parameter its
    class accepts; None when no config file has that name."""
    import inspect

    import yaml

    path = config_file("strategy", name, {"config_dir": own})
    if path is None:
        return None
    spec = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    values = {k: v for k, v in spec.items() if not str(k).startswith("_")}
    accepts: list[str] = []
    try:
        from importlib import import_module

        module, _, cls = str(spec.get("_target_", "")).rpartition(".")
        params = inspect.signature(getattr(import_module(module), cls)).parameters.values()
        accepts = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    except Exception:   # a broken target is reported when the run builds it, not by a hint
        pass
    return {"keys": list(values), "values": values, "accepts": accepts, "target": spec.get("_target_")}


def redact(value: Any, key: str = "", under: bool = False) -> Any:
    """A plain copy of a config with anything secret-looking replaced: every value under a key that is a
    secret's name, headers or an environment (at any depth: a header inside extra_headers, an entry of a
    strategy's env), a value that looks like a key, a URL's password. The overrides list is redacted the
    same way (`key=***`)."""
    under = under or hidden(key)
    if isinstance(value, dict):
        return {k: redact(v, str(k), under) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_override(v) if key == "overrides" and isinstance(v, str) else redact(v, key, under)
                for v in value]
    if isinstance(value, str) and (under or SECRET_VALUE.search(value)):
        return "***"
    if isinstance(value, str):
        return USERINFO.sub(r"\1:***@", value)
    if under and value is not None and not isinstance(value, bool):
        return "***"
    return value


def redact_override(override: str) -> str:
    """`writer.api_key=sk-...` -> `writer.api_key=***`, a URL's password -> `***`; a header, an env entry or
    a mapping holding either -> `key=***`. What error lines and config.yaml show of an override."""
    key, eq, value = override.partition("=")
    path = key.lstrip("+~")
    if not eq:
        return override if not SECRET_VALUE.search(override) else "***"
    if secret_problems([override]):
        return f"{key}=***" if not USERINFO.search(value) or secret_name(path) else USERINFO.sub(r"\1:***@", override)
    if any(hidden(part) for part in path.split(".")) or any(hidden(n) for n in _names(value)):
        return f"{key}=***"
    return override


def _first_line(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.splitlines()[0].split())
