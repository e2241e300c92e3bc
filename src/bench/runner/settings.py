"""The run's settings as typed dataclasses, checked against their own declarations.

Hydra accepts any value for an untyped key (`window=abc`, `markers=maybe`). Each setting is declared
once here, with its type and, in the field's metadata, its least value (`min`), its allowed values
(`choices`) or a check of its own; `parse` reads the composed config into these classes and reports
every value that does not fit, one line each, before anything is replayed. The defaults and the
comments a user reads live in conf/config.yaml; `run --help` shows them.
"""
from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from typing import Any, Callable
from urllib.parse import urlsplit

from bench.errors import BadInput
from bench.harness.model import ModelConfig
from bench.models.limiter import Limits
from bench.models.offline.stress import PROFILES
from bench.parsing import flatten
from bench.results.shards import AUTO, shard_spec
from bench.env import secret_name
from bench.runner.config import SECRET_KEY, SECRET_VALUE, USERINFO
from bench.scoring import GRADES
from bench.tokens import tokenizer

# Keys that only choose which cells exist (or where they go); everything else changes a cell's result.
CELL_SET_KEYS = {"scenarios", "strategies", "stress", "writer.model", "window", "seed", "repeats", "shard", "out",
                 "resume", "concurrency", "responses", "report", "overrides", "sweep", "verbose", "bench", "limits",
                 "writer.concurrency", "agent.concurrency", "judge.concurrency"}


def _shard(value: str) -> str:
    if shard_spec(value) is not None or AUTO.fullmatch(value.strip()):
        return ""
    return f"must be I/N with 1 <= I <= N (e.g. shard=2/4), auto or auto/N, got {value!r}"


def _encoding(name: str) -> str:
    try:
        tokenizer(name)
    except (ValueError, KeyError):
        return f"unknown tiktoken encoding '{name}' (try o200k_base, cl100k_base or p50k_base)"
    return ""


def _profiles(names: list[str]) -> str:
    bad = [x for x in names if x not in PROFILES]
    return f"unknown stress profile '{bad[0]}' (one of {', '.join(PROFILES)})" if bad else ""


def _url(value: str) -> str:
    try:
        url = urlsplit(value)
        url.port   # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        url = None
    if url is None or url.scheme not in ("http", "https") or not url.hostname or any(c.isspace() for c in value):
        shown = USERINFO.sub(r"\1:***@", value)[:80]
        return f"'{shown}' is not an http(s) URL (e.g. http://localhost:8000/v1)"
    return ""


def _model(value: str) -> str:
    if value.startswith("offline:") and value.split(":", 1)[1] not in PROFILES:
        return f"unknown stress profile '{value}' (offline:NAME, NAME one of {', '.join(PROFILES)})"
    return ""


@dataclass(frozen=True)
class Responses:
    enabled: bool = True
    refresh: bool = False
    dir: str | None = field(default=None, metadata={"what": "a directory path"})


@dataclass(frozen=True)
class Probes:
    enabled: bool = True
    grade: str = field(default="auto", metadata={"choices": GRADES})
    pass_score: float = field(default=4.0, metadata={"min": 0, "max": 5})
    judge_calibration: str | None = None    # `calibrate --judge --format json` output, stated in the report


@dataclass(frozen=True)
class Continuation:
    steps: int = field(default=3, metadata={"min": 1, "max": 20})   # rollout steps from each continuation point


@dataclass(frozen=True)
class Report:
    figures: bool = True    # draw figures/*.png (false: tables only)


@dataclass(frozen=True)
class Price:
    model: str | None = None


@dataclass(frozen=True)
class Settings:
    """The top-level run settings (conf/config.yaml); groups (strategy, suite, cache) are read elsewhere."""
    scenarios: list[str] = field(metadata={"nonempty": True})
    strategies: list[str] = field(metadata={"nonempty": True})
    oracles: list[str] = field(default_factory=list, metadata={"what": "a list of strategy class paths"})
    stress: list[str] = field(default_factory=list, metadata={"what": "a list of stress profile names",
                                                              "check": _profiles})
    window: int | None = field(default=None, metadata={"min": 1})
    markers: bool = True
    seed: int = field(default=0, metadata={"min": 0})
    repeats: int = field(default=1, metadata={"min": 1})
    shard: str | None = field(default=None, metadata={"check": _shard, "what": "I/N (e.g. shard=2/4), auto or auto/N"})
    reserve_output: int | None = field(default=None, metadata={"min": 0})
    margin: int | None = field(default=None, metadata={"min": 0})
    trigger_at: float | None = field(default=None, metadata={"min": 0})
    encoding: str | None = field(default=None, metadata={"check": _encoding})
    concurrency: int = field(default=2, metadata={"min": 1})
    limits: Limits = field(default_factory=Limits)
    out: str | None = None
    resume: bool = False
    verbose: bool = False
    config_dir: str | None = None
    responses: Responses = field(default_factory=Responses)
    price: Price = field(default_factory=Price)
    probes: Probes = field(default_factory=Probes)
    continuation: Continuation = field(default_factory=Continuation)
    report: Report = field(default_factory=Report)


ROLES = ("writer", "agent", "judge")
# What a mapping setting that is not a mapping is told: how to turn it off.
HINTS = {"probes": " (probes.enabled=false to skip them)", "continuation": " (continuation.steps=N)", "responses": " (responses.enabled=false turns the cache off)"}
ROLE_CHECKS: dict[str, Callable[[Any], str]] = {"model": _model, "api_base": _url}


def parse(cfg: Any) -> Settings:
    """The composed config's settings, typed; BadInput with one line per value that does not fit."""
    from omegaconf import OmegaConf

    plain = OmegaConf.to_container(cfg, resolve=True) if OmegaConf.is_config(cfg) else dict(cfg)
    problems: list[str] = []
    settings = read(Settings, plain, "", problems)
    for role in ROLES:
        node = plain.get(role)
        if not isinstance(node, dict) or not isinstance(node.get("model"), str) or not node.get("model"):
            problems.append(f"{role}.model: must be 'offline' or a litellm model string")
            continue
        read(ModelConfig, node, f"{role}.", problems, ROLE_CHECKS, partial=True)
        problems.extend(_secrets(role, node))
    if problems:
        raise BadInput(problems)
    return settings


def read(cls: type, data: Any, prefix: str, problems: list[str], checks: dict[str, Callable] | None = None,
         partial: bool = False) -> Any:
    """`cls` built from the mapping `data` by its fields' declarations; a value that does not fit is one
    line in `problems` and leaves the field at its default. `partial`: only the keys present are checked
    (a role's node also holds keys the model passes through)."""
    if not isinstance(data, dict):
        problems.append(f"{prefix.rstrip('.')}: must be a mapping{HINTS.get(prefix.rstrip('.'), '')}, got {data!r}")
        data = {}
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name not in data:
            continue
        key, value, kind = f"{prefix}{f.name}", data[f.name], hints[f.name]
        if dataclasses.is_dataclass(kind):
            nested = read(kind, {} if value is None else value, f"{key}.", problems)
            if nested is not None:
                values[f.name] = nested
            continue
        why, value = _fit(value, kind, f.metadata)
        check = (checks or {}).get(f.name) or f.metadata.get("check")
        if not why and check is not None and value is not None:
            why = check(value)
        if why:
            problems.append(f"{key}: {why}")
        else:
            values[f.name] = value
    if partial:
        return None
    missing = [f.name for f in dataclasses.fields(cls) if f.name not in values
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    for name in missing:
        if not any(p.startswith(f"{prefix}{name}:") for p in problems):
            problems.append(f"{prefix}{name}: must be given")
    return None if missing else cls(**values)


def _fit(value: Any, kind: Any, meta: Any) -> tuple[str, Any]:
    """(why `value` is not of `kind` within the field's bounds, or ''; the value, a lone name as a list)."""
    optional = type(None) in typing.get_args(kind)
    base = next((a for a in typing.get_args(kind) if a is not type(None)), kind) if optional else kind
    if value is None:
        return ("" if optional else _expected(base, meta, optional, value)), value
    if typing.get_origin(base) is list:
        if isinstance(value, str) and meta.get("nonempty"):
            value = [value]           # a single name stands for a one-item list
        ok = isinstance(value, (list, tuple)) and all(isinstance(v, str) and v for v in value) and \
            (bool(value) or not meta.get("nonempty"))
        return ("" if ok else _expected(base, meta, optional, value)), list(value) if ok else value
    if base is bool:
        ok = isinstance(value, bool)
    elif base is int:
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= meta.get("min", value)
    elif base is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and \
            meta.get("min", value) <= value <= meta.get("max", value)
    elif base is str:
        if isinstance(value, str) and meta.get("choices") and value not in meta["choices"]:
            return f"'{value}' is not one of {', '.join(meta['choices'])}", value
        ok = isinstance(value, str)
    else:
        ok = True
    return ("" if ok else _expected(base, meta, optional, value)), value


def _expected(base: Any, meta: Any, optional: bool, value: Any) -> str:
    if meta.get("what"):
        what = meta["what"]
    elif typing.get_origin(base) is list:
        what = "a non-empty list of names"
    elif base is bool:
        return f"must be true or false, got {value!r}"
    elif base is int:
        what = "a positive integer" if meta.get("min", 0) > 0 else "a non-negative integer"
    elif base is float:
        what = (f"a number from {meta['min']:g} to {meta['max']:g}" if "max" in meta else
                "a non-negative number" if "min" in meta else "a number")
    else:
        what = "a string"
    return f"must be {what}{' or null' if optional else ''}, got {value!r}"


def _secrets(role: str, node: dict[str, Any]) -> list[str]:
    """A secret in a role's config would be written to config.yaml: keys come from the environment only."""
    return [f"{role}.{key}: holds a secret; keys come from the environment only (e.g. OPENAI_API_KEY), never from "
            f"the config, which is written to the results"
            for key, value in flatten(node).items()
            if value not in (None, "") and (SECRET_KEY.search(key) or secret_name(key)) or
            isinstance(value, str) and (SECRET_VALUE.search(value) or USERINFO.search(value))]


def result_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Keys whose values differ and would change the numbers of cells already in a run folder."""
    a, b = flatten(old), flatten(new)
    keys = sorted(set(a) | set(b))
    return [k for k in keys if a.get(k) != b.get(k) and not _cell_set(k)]


def _cell_set(key: str) -> bool:
    return any(key == k or key.startswith(k + ".") for k in CELL_SET_KEYS)
