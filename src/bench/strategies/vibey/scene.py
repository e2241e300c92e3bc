"""The scene: the one checkpoint block of the writer's final answer."""
from __future__ import annotations

import re

from bench.tokens import Tokenizer

OPEN, CLOSE = "<checkpoint>", "</checkpoint>"
BLOCK = re.compile(r"<checkpoint>(.*?)</checkpoint>", re.S | re.I)


def blocks(answer: str) -> int:
    return max(len(re.findall(re.escape(OPEN), answer, re.I)), len(BLOCK.findall(answer)))


def extract(answer: str, min_tokens: int, tok: Tokenizer) -> tuple[str | None, list[str]]:
    """The scene text and the problems that forbid using it."""
    found = BLOCK.findall(answer)
    n = blocks(answer)
    if n == 0 or not found:
        return None, [f"scene: the final answer has no complete {OPEN} ... {CLOSE} block"]
    if n > 1:
        return None, [f"scene: the final answer has {n} checkpoint blocks, exactly one is allowed"]
    text = found[0].strip()
    size = tok.count(text)
    if size < min_tokens:
        return None, [f"scene: the checkpoint block has {size} tokens, at least {min_tokens} are needed "
                      f"(current step, progress, waiting for, next step, pitfalls, references)"]
    return text, []
