"""The report's methodology section: how often the scorer reads what a careful reader would.

The figures are computed with the code that builds the report (`scoring.agreement`: the shipped test split
scored by `calibrate`, cached by corpus and code), never copied in as text, so the κ stated is the κ of the
commit the section names.
"""
from __future__ import annotations

from bench.report.render import Doc, Table
from bench.scoring.agreement import summary


def section(doc: Doc, commit: str, run_commit: str = "") -> None:
    doc.h("Methodology")
    cal = summary()
    if cal is None:
        doc.p("The labelled reading corpus (tests/data/labels in the repository) is not here, so the scorer's "
              "agreement with careful readers is not stated; `compaction-bench calibrate LABELS.jsonl` measures "
              "it on any corpus in that format.")
        return
    at = f" at commit `{commit}`" if commit else ""
    other = (f" (this run was scored by commit `{run_commit}`)" if run_commit and commit and run_commit != commit
             else "")
    doc.p(f"Every score above is the project's deterministic reader (docs/scoring.md), measured like an instrument "
          f"against careful human readers: on the test split of its labelled reading corpus (`{cal['labels']}`, "
          f"{cal['n']} labels by two readers who read the contexts, never the scorer; the rules were tuned on the "
          f"dev split only), the scorer{at}{other} agrees with the readers as below. κ is Cohen's kappa (1: always "
          f"agrees, 0: no better than chance); precision and recall take the reader's 1 (kept; for leakage, stale "
          f"and revived: found) as the positive class. `compaction-bench calibrate {cal['labels']}` reproduces it.")
    rows = [[m, v["n"], v["kappa"], v["precision"], v["recall"]] for m, v in cal["metrics"].items()]
    doc.table(Table(["metric", "labels", "kappa", "precision", "recall"], rows,
                    f"The scorer against the readers, per metric, on {cal['labels']} ({cal['n']} labels)."))
