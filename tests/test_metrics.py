"""The metric registry is the one declaration of every metric: the lists the results, gate, report, audit
and viewer use come from it. The docs' tables are generated from it and checked by tests/test_docs.py
(`python tests/test_docs.py --write` rewrites them after a metric changes).
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bench.scoring import checks, metrics as M
from bench.scoring.metric import Family, Metric

ROOT = Path(__file__).resolve().parent.parent


def test_declarations_are_unique_and_whole():
    for key in ("column", "name", "short", "label"):
        values = [getattr(m, key) for m in M.METRICS if getattr(m, key)]
        assert len(values) == len(set(values)), f"two metrics share a {key}"
    assert set(M.BY_COLUMN) == set(M.COLUMNS) and all(m.meaning for m in M.METRICS)
    assert all(m.verdict for m in M.METRICS if m.name and m.direction == "lower")


def test_a_bad_declaration_fails_at_import():
    with pytest.raises(ValueError, match="direction 'up'.*aggregate 'median'"):
        Metric("x", "up", "x", aggregate="median")
    with pytest.raises(ValueError, match="gated 'always'"):
        Metric("x", "info", "x", gated="always")
    with pytest.raises(ValueError, match="view 'nowhere'"):
        Metric("x", "higher", "x", views={"nowhere"})
    assert Family((Metric("x", "info", "x"),)).metrics[0].gated == "never"


def test_summary_columns_keep_the_committed_order():
    """The baseline's header is the summary.csv contract: new metrics may join, none may move."""
    from bench.results.store import SUMMARY_COLUMNS, read_csv

    header = list(read_csv(ROOT / "results" / "baseline" / "summary.csv")[0])
    assert [c for c in SUMMARY_COLUMNS if c in header] == header


def test_the_checks_scorer_reads_its_own_declarations():
    own = {m.name: m for m in checks.FAMILY.metrics if m.name}
    assert checks.SUMMARY == {n: m.column for n, m in own.items()}
    assert set(checks.WORSE) == {n for n, m in own.items() if m.direction == "lower"}
    assert set(checks.COUNTED) == {n for n, m in own.items() if m.aggregate == "count"}


def test_every_reader_lists_the_registry():
    from bench.audit import COUNTED, HEADLINE, SHORT
    from bench.gate.compare import INFO
    from bench.report import data, headline
    from bench.results.repeats import SPREAD
    from bench.results.store import TABLE_COLUMNS
    from bench.scoring.metric import COMPARE, CONSOLE, HEADLINE as HEAD, ROBUSTNESS, TOKENS
    from bench.view.data import STATUS

    assert SPREAD == M.GATED == [*M.COUNTS, *M.HIGHER, *M.LOWER, *M.OPTIONAL]
    assert set(M.GATED) == {m.column for m in M.METRICS if m.gated != "never"}
    assert data.QUALITY == [m.column for m in M.METRICS if m.gated == "always"]
    assert data.COST[2:] == [m.column for m in M.shown(TOKENS)]
    assert INFO[1:] == [m.column for m in M.shown(COMPARE)]
    assert set(TABLE_COLUMNS[7:]) == {m.column for m in M.shown(CONSOLE)}
    assert [c for c, _, _ in headline.METRICS + headline.BESIDE if c in M.BY_COLUMN] == \
        [m.column for m in M.shown(HEAD) if m.direction != "count"] + \
        [m.column for m in M.shown(HEAD) if m.direction == "count"]
    assert all(M.BY_COLUMN[c].label == h and M.BY_COLUMN[c].higher == up for c, h, up in headline.METRICS)
    audited = [m for m in M.METRICS if m.audited]
    assert [*HEADLINE, *COUNTED] == [m.column for m in audited if m.higher] + \
        [m.column for m in audited if m.direction == "lower"] + [m.column for m in audited if m.direction == "count"]
    assert all(HEADLINE[c] == M.BY_COLUMN[c].higher for c in HEADLINE)
    assert SHORT == {m.column: m.short for m in audited}
    assert STATUS[3:-1] == [m.verdict for m in M.METRICS if m.verdict]
    assert ROBUSTNESS in M.BY_COLUMN["goal_retention"].views


# Lists of three or more metric columns outside the declarations: each a choice of its own, not a metric fact.
CHOICES = {
    ("audit/__init__.py", "goal_retention"): "the metrics the stop_compacting adversary may be caught on",
    ("models/litellm_model.py", "input_tokens"): "a model reply's usage record, named like the columns",
    ("report/__init__.py", "goal_retention"): "the quality figure's bars, which its caption names",
}
DECLARING = {"scoring/checks.py", "scoring/usage.py", "scoring/probes.py", "scoring/metrics.py"}


def test_no_module_keeps_its_own_list_of_metrics():
    src = ROOT / "src" / "bench"
    found = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if rel in DECLARING:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            elts = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None) \
                if isinstance(node, (ast.List, ast.Tuple, ast.Set)) else None
            named = [e.value for e in elts or () if isinstance(e, ast.Constant) and e.value in M.BY_COLUMN]
            if len(named) >= 3 and (rel, named[0]) not in CHOICES:
                found.append(f"src/bench/{rel}:{node.lineno}: {', '.join(named)}")
    assert not found, "derive these from bench.scoring.metrics:\n" + "\n".join(found)
