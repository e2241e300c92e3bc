"""The report's methodology section: how often the scorer reads what a careful reader would.

The numbers come from the calibration summary shipped inside the package (`bench/scoring/calibration.json`),
not from a calibration run at report time: scoring the test split takes seconds, a report is built many times
(every run, every `compaction-bench report`, the suite), and an installed package has no tests/ folder to read
it from. The summary cannot go stale unnoticed: CI recalibrates the shipped test split with the scorer of
every commit and fails when the two differ (tests/test_calibrate.py), so the κ it states is the κ of the code
at the commit the report names.
"""
from __future__ import annotations

from typing import Any

from bench.report.render import Doc, Table
from bench.scoring.calibrate import shipped


def section(doc: Doc, commit: str) -> None:
    cal = shipped()
    doc.h("Methodology")
    if cal is None:
        doc.p("No calibration summary ships with this package, so the scorer's agreement with careful readers is "
              "not stated here; `compaction-bench calibrate LABELS.jsonl` measures it on a labelled corpus.")
        return
    metrics: dict[str, Any] = cal["metrics"]
    rows = [[m, v["n"], v["kappa"], v["precision"], v["recall"]] for m, v in metrics.items()]
    at = f" at commit `{commit}`" if commit else ""
    doc.p(f"Every score above is the project's deterministic reader (docs/scoring.md). It is measured like an "
          f"instrument against careful human readers: on the shipped test split of its labelled reading corpus "
          f"({cal['n']} labels, {cal['contexts']} contexts; two labellers who read the contexts and never the "
          f"scorer), the scorer of this code{at} agrees with the readers as below. κ is Cohen's kappa (1: "
          f"always agrees, 0: no better than chance); precision and recall take the reader's 1 (kept, or for "
          f"leakage, stale and revived: found) as the positive class. `compaction-bench calibrate` reproduces "
          f"it; CI fails when these numbers differ from a fresh calibration.")
    doc.table(Table(["metric", "labels", "kappa", "precision", "recall"], rows,
                    f"Agreement per metric on {cal['labels']} ({cal['n']} labels)."))
