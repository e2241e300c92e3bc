"""Type checks for the top-level run settings, so a bad override is one line, not a traceback.

Hydra accepts any value for an untyped key (`window=abc`, `markers=maybe`); these
checks run on the composed config before anything is replayed.
"""
from __future__ import annotations

from typing import Any

from bench.runner.config import SECRET_KEY, SECRET_VALUE, USERINFO
from bench.errors import BadInput
from bench.models.offline.stress import PROFILES
from bench.parsing import flatten
from bench.results.shards import shard_spec
from bench.tokens import tokenizer
# Keys that only choose which cells exist (or where they go); everything else changes a cell's result.
CELL_SET_KEYS = {"scenarios", "strategies", "stress", "writer.model", "window", "seed", "repeats", "shard", "out",
                 "resume", "concurrency", "responses", "overrides", "sweep", "verbose", "bench"}


def _int(value: Any, key: str, problems: list[str], *, minimum: int, optional: bool) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        what = "a positive integer" if minimum > 0 else "a non-negative integer"
        problems.append(f"{key}: must be {what}{' or null' if optional else ''}, got {value!r}")


def _names(value: Any, key: str, problems: list[str]) -> list[str]:
    """A list of non-empty strings; a single string stands for a one-item list."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not items or not all(isinstance(v, str) and v for v in items):
        problems.append(f"{key}: must be a non-empty list of names, got {value!r}")
        return []
    return list(items)


def check_run(cfg: Any) -> tuple[list[str], list[str]]:
    """Problems in a composed run config; returns (scenario patterns, strategy names) when there are none."""
    from omegaconf import OmegaConf

    plain = OmegaConf.to_container(cfg, resolve=True)
    problems: list[str] = []
    scenarios = _names(plain.get("scenarios"), "scenarios", problems)
    strategies = _names(plain.get("strategies"), "strategies", problems)
    oracles = plain.get("oracles") if plain.get("oracles") is not None else []
    if not isinstance(oracles, list) or not all(isinstance(x, str) for x in oracles):
        problems.append(f"oracles: must be a list of strategy class paths, got {oracles!r}")
    stress = plain.get("stress") if plain.get("stress") is not None else []
    if not isinstance(stress, list) or not all(isinstance(x, str) for x in stress):
        problems.append(f"stress: must be a list of stress profile names, got {stress!r}")
    else:
        problems.extend(f"stress: unknown stress profile '{x}' (one of {', '.join(PROFILES)})"
                        for x in stress if x not in PROFILES)
    _int(plain.get("window"), "window", problems, minimum=1, optional=True)
    _int(plain.get("seed"), "seed", problems, minimum=0, optional=False)
    _int(plain.get("repeats", 1), "repeats", problems, minimum=1, optional=False)
    if plain.get("shard") is not None and shard_spec(plain["shard"]) is None:
        problems.append(f"shard: must be I/N with 1 <= I <= N (e.g. shard=2/4), got {plain['shard']!r}")
    _int(plain.get("reserve_output"), "reserve_output", problems, minimum=0, optional=True)
    _int(plain.get("margin"), "margin", problems, minimum=0, optional=True)
    _int(plain.get("concurrency"), "concurrency", problems, minimum=1, optional=False)
    for key in ("markers", "resume"):
        if not isinstance(plain.get(key), bool):
            problems.append(f"{key}: must be true or false, got {plain.get(key)!r}")
    for key in ("out", "encoding"):
        if plain.get(key) is not None and not isinstance(plain.get(key), str):
            problems.append(f"{key}: must be a string or null, got {plain.get(key)!r}")
    if isinstance(plain.get("encoding"), str):
        problems.extend(_encoding_problem(plain["encoding"]))
    for role in ("writer", "agent", "judge"):
        node = plain.get(role)
        if not isinstance(node, dict) or not isinstance(node.get("model"), str) or not node.get("model"):
            problems.append(f"{role}.model: must be 'offline' or a litellm model string")
            continue
        if node["model"].startswith("offline:"):
            if node["model"].split(":", 1)[1] not in PROFILES:
                problems.append(f"{role}.model: unknown stress profile '{node['model']}' (offline:NAME, NAME one of "
                                f"{', '.join(PROFILES)})")
        for key in ("concurrency", "retries"):
            _int(node.get(key), f"{role}.{key}", problems, minimum=1 if key == "concurrency" else 0, optional=False)
        for key in ("timeout", "temperature", "backoff"):
            v = node.get(key)
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0):
                problems.append(f"{role}.{key}: must be a non-negative number, got {v!r}")
        _int(node.get("max_tokens"), f"{role}.max_tokens", problems, minimum=1, optional=True)
    probes = plain.get("probes")
    if probes is not None and not isinstance(probes, dict):
        problems.append(f"probes: must be a mapping (probes.enabled=false to skip them), got {probes!r}")
    elif isinstance(probes, dict):
        score = probes.get("pass_score", 4)
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 5:
            problems.append(f"probes.pass_score: must be a number from 0 to 5, got {score!r}")
        if not isinstance(probes.get("enabled", True), bool):
            problems.append(f"probes.enabled: must be true or false, got {probes.get('enabled')!r}")
    problems.extend(_roles_and_responses(plain))
    if problems:
        raise BadInput(problems)
    return scenarios, strategies


def _roles_and_responses(plain: dict[str, Any]) -> list[str]:
    """What a run must not start with: a secret in a role's config (config.yaml would hold it), an
    api_base that is not a URL (every call would fail after its retries, minutes later), and
    responses.* of the wrong type (`responses.enabled=maybe` is not true)."""
    problems = []
    for role in ("writer", "agent", "judge"):
        node = plain.get(role)
        if not isinstance(node, dict):
            continue
        for key, value in flatten(node).items():
            secret = value not in (None, "") and SECRET_KEY.search(key) or \
                isinstance(value, str) and (SECRET_VALUE.search(value) or USERINFO.search(value))
            if secret:
                problems.append(f"{role}.{key}: holds a secret; keys come from the environment only (e.g. "
                                f"OPENAI_API_KEY), never from the config, which is written to the results")
        if node.get("api_base") is not None:
            problems.extend(_url_problem(f"{role}.api_base", node["api_base"]))
        wait = node.get("max_wait")
        if wait is not None and (isinstance(wait, bool) or not isinstance(wait, (int, float)) or wait < 0):
            problems.append(f"{role}.max_wait: must be a non-negative number of seconds, got {wait!r}")
    responses = plain.get("responses")
    if responses is not None and not isinstance(responses, dict):
        problems.append(f"responses: must be a mapping (responses.enabled=false turns the cache off), got {responses!r}")
    elif isinstance(responses, dict):
        for key in ("enabled", "refresh"):
            if not isinstance(responses.get(key, False), bool):
                problems.append(f"responses.{key}: must be true or false, got {responses.get(key)!r}")
        if responses.get("dir") is not None and not isinstance(responses["dir"], str):
            problems.append(f"responses.dir: must be a directory path or null, got {responses['dir']!r}")
    return problems


def _url_problem(key: str, value: Any) -> list[str]:
    from urllib.parse import urlsplit

    if not isinstance(value, str):
        return [f"{key}: must be a URL or null, got {value!r}"]
    try:
        url = urlsplit(value)
        url.port   # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        url = None
    if url is None or url.scheme not in ("http", "https") or not url.hostname or any(c.isspace() for c in value):
        shown = USERINFO.sub(r"\1:***@", value)[:80]
        return [f"{key}: '{shown}' is not an http(s) URL (e.g. http://localhost:8000/v1)"]
    return []


def _encoding_problem(name: str) -> list[str]:
    try:
        tokenizer(name)
    except (ValueError, KeyError):
        return [f"encoding: unknown tiktoken encoding '{name}' (try o200k_base, cl100k_base or p50k_base)"]
    return []


def result_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Keys whose values differ and would change the numbers of cells already in a run folder."""
    a, b = flatten(old), flatten(new)
    keys = sorted(set(a) | set(b))
    return [k for k in keys if a.get(k) != b.get(k) and not _cell_set(k)]


def _cell_set(key: str) -> bool:
    return any(key == k or key.startswith(k + ".") for k in CELL_SET_KEYS)
