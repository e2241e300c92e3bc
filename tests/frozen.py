"""Scoring one hand-written context against the frozen scenario copies the labelled corpus uses, so a harder
library scenario cannot change what a reading test tests."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from bench.scenarios.loader import load
from bench.scoring.calibrate import judge_one
from bench.scoring.checks import Judge
from bench.scoring.labels import Entry, Label
from bench.tokens import tokenizer

FROZEN = Path(__file__).resolve().parent / "data" / "labels" / "scenarios"


@lru_cache(maxsize=None)
def judge(name: str) -> Judge:
    return Judge(load(next(FROZEN.glob(f"{name}.*"))), tokenizer())


def score(name: str, at: str, item: str, metric: str, text: str) -> float:
    """The scorer's score for `item` on `metric` at request `at`, with `text` as the whole context's summary."""
    j = judge(name)
    lab = Label("t", j.s, at, (Entry("user", "summary", text),), item, metric, 1, "", 1)
    return judge_one(j, lab, tokenizer()).score


def reading(name: str, at: str, item: str, metric: str):
    """`score` of one item and metric at one request, as a function of the summary's text."""
    return lambda text: score(name, at, item, metric, text)
