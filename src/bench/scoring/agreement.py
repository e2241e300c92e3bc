"""The scorer's agreement with careful readers on the shipped test split, for the report's methodology.

Computed, never written down by hand: the report states what `calibrate` measures with the code that builds
it. Scoring the test split takes a few seconds and a report is built after every run (and many times by the
suite), so the figures are cached under a key that changes whenever they could: the corpus (labels file and
the frozen scenarios it reads) and every source file of the package (the scorer is most of it, and a rule
can live anywhere the scorer imports). An installed package without the repository's tests/ folder has no
corpus: then there is nothing to state, and the report says so.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from bench.errors import BadInput
from bench.scoring.calibrate import calibrate

PACKAGE = Path(__file__).resolve().parents[1]
CORPUS = PACKAGE.parents[1] / "tests" / "data" / "labels" / "test.jsonl"
# the split written last, by labellers who never saw the scorer, and measured before any reading was tuned on
# it: the honest figure for wordings the corpus did not hold. A sitting that tunes on it writes the next one.
UNSEEN = CORPUS.with_name("holdout8.jsonl")


def cache_dir() -> Path:
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "compaction-bench" / "calibration"


def fingerprint(labels: Path) -> str:
    """What the figures depend on: the labels, the scenario files they name, and the package's code."""
    h = hashlib.sha256()
    files = [labels]
    for line in labels.read_text(encoding="utf-8").splitlines():
        try:
            name = json.loads(line).get("scenario")
        except (ValueError, AttributeError):
            continue
        if isinstance(name, str):
            files.append(labels.parent / name)
    files += sorted(PACKAGE.rglob("*.py"))
    for f in dict.fromkeys(files):
        h.update(str(f.relative_to(PACKAGE) if f.is_relative_to(PACKAGE) else f.name).encode())
        h.update(f.read_bytes() if f.is_file() else b"-")
    return h.hexdigest()[:16]


def summary(labels: Path = CORPUS, tok=None) -> dict | None:
    """Per metric n, kappa, precision and recall on `labels`, and the corpus size; None without a corpus
    or with a malformed one (the report is no place to fail on it: `calibrate` says what is wrong)."""
    if not labels.is_file():
        return None
    key = fingerprint(labels)
    cached = cache_dir() / f"{key}.json"
    if cached.is_file():
        try:
            return json.loads(cached.read_text(encoding="utf-8"))
        except ValueError:
            pass
    try:
        cal = calibrate(labels, tok)
    except BadInput:
        return None
    full = cal.as_dict()
    out = {"labels": str(labels.relative_to(PACKAGE.parents[1]) if labels.is_relative_to(PACKAGE.parents[1])
                         else labels), "n": full["n"], "key": key,
           "metrics": {m: {k: v[k] for k in ("n", "kappa", "precision", "recall")} for m, v in full["metrics"].items()}}
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(".tmp")
        tmp.write_text(json.dumps(out), encoding="utf-8")
        tmp.replace(cached)
    except OSError:
        pass            # a read-only home: computed again next time
    return out
