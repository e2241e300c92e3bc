"""The prompts and fixed texts of the checkpoint, kept as files beside the code.

Prompts use `$name` placeholders (string.Template) so that braces in them
need no escaping; a missing value is an error, never a silent blank.
"""
from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from string import Template

HERE = Path(__file__).parent / "prompts"


@lru_cache(maxsize=None)
def raw(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def fill(file: str, **values: object) -> str:
    """A prompt file with its placeholders filled."""
    return Template(raw(file)).substitute({k: str(v) for k, v in values.items()}).strip()


@lru_cache(maxsize=None)
def _blocks(name: str) -> dict[str, str]:
    parts = re.split(r"^## (\w+)\n", raw(name), flags=re.M)
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def block(file: str, key: str, **values: object) -> str:
    """One named snippet of a file made of `## key` blocks (recollection.md)."""
    return Template(_blocks(file)[key]).substitute({k: str(v) for k, v in values.items()})


@lru_cache(maxsize=None)
def tools() -> tuple[dict, ...]:
    """Tool definitions of the checkpoint turn, OpenAI function format."""
    return tuple(json.loads(raw("tools.json")))


def tool_names() -> frozenset[str]:
    return frozenset(t["function"]["name"] for t in tools())
