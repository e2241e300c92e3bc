"""The report's methodology section: how often the scorer reads what a careful reader would.

The figures are computed with the code that builds the report (`scoring.agreement`: the shipped test split
scored by `calibrate`, cached by corpus and code), never copied in as text, so the κ stated is the κ of the
commit the section names.
"""
from __future__ import annotations

from bench.errors import BadInput
from bench.report.render import Doc, Table
from bench.scoring.agreement import UNSEEN, summary
from bench.scoring.judge_calibration import read_result


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
          f"dev split and on this split's disagreements), the scorer{at}{other} agrees with the readers as below. κ is Cohen's kappa (1: always "
          f"agrees, 0: no better than chance); precision and recall take the reader's 1 (kept; for leakage, stale "
          f"and revived: found) as the positive class. `compaction-bench calibrate {cal['labels']}` reproduces it.")
    doc.table(_table(cal))
    unseen = summary(UNSEEN)
    if unseen is not None:
        doc.p(f"On summaries written afresh by labellers who never saw the scorer, and never tuned on "
              f"(`{unseen['labels']}`, {unseen['n']} labels), agreement is lower: the readings carry only partly to "
              f"wordings the corpus did not hold, so read the figures above as an upper bound (docs/scoring.md, "
              f"\"Calibration\", keeps the history).")
        doc.table(_table(unseen))


def _table(cal: dict) -> Table:
    rows = [[m, v["n"], v["kappa"], v["precision"], v["recall"]] for m, v in cal["metrics"].items()]
    return Table(["metric", "labels", "kappa", "precision", "recall"], rows,
                 f"The scorer against the readers, per metric, on {cal['labels']} ({cal['n']} labels).")


JUDGED = r"^judge \d|^failed to run: judge"


def judge(doc: Doc, judge_cfg: dict, probes_cfg: dict, checks) -> None:
    """Whether the probe judge that graded this run's answers was calibrated against human labels, and how
    well (`probes.judge_calibration`: a saved `calibrate --judge --format json` result)."""
    rows = checks[checks["metric"] == "probe"] if {"metric", "detail"} <= set(getattr(checks, "columns", ())) else None
    used = 0 if rows is None else int(rows["detail"].astype(str).str.contains(JUDGED).sum())
    model = str(judge_cfg.get("model") or "offline")
    if not used:
        doc.p("No probe answer of this run was graded by the judge model (every probe was graded by rule), so "
              "the judge's calibration does not bear on these results.")
        return
    stand_in = (" The offline judge is a deterministic stand-in (the share of the rubric's content words the "
                "answer contains), not an LLM." if model.split(":")[0] == "offline" else "")
    how = (f"`compaction-bench calibrate --judge LABELS.jsonl -o judge.model={model} --format json > FILE`, then "
           f"`probes.judge_calibration=FILE`")
    path = probes_cfg.get("judge_calibration")
    if not path:
        doc.p(f"The judge (`{model}`) graded {used} probe answer(s) of this run; judge not calibrated: no "
              f"calibration result was given, so how often it agrees with a human reader is unknown ({how})."
              + stand_in)
        return
    try:
        res = read_result(path)
    except BadInput as exc:
        doc.p(f"The judge (`{model}`) graded {used} probe answer(s); judge not calibrated: {exc}." + stand_in)
        return
    if str(res["judge"]) != model:
        doc.p(f"The judge (`{model}`) graded {used} probe answer(s); judge not calibrated: the calibration result "
              f"`{path}` is of judge `{res['judge']}`, not this run's ({how})." + stand_in)
        return
    kappa = "undefined" if res["kappa"] is None else f"{res['kappa']:.3f}"
    cover = "n/a" if res["coverage"] is None else f"{res['coverage']:.0%}"
    doc.p(f"The judge (`{model}`) graded {used} probe answer(s) of this run. Calibrated on `{res['labels']}` "
          f"({res['n']} human labels, passing at {res['pass_score']:g}/5): Cohen's κ {kappa} against the readers "
          f"on the {res['scored']} answers labelled met/unmet that it scored; coverage {cover} (it scored that "
          f"share of all labels). {res['cannot_assess']} `cannot_assess` label(s) and {res['abstained']} judge "
          f"abstention(s) (failed calls or replies without a score) were left out of κ; an abstention is never "
          f"a pass." + stand_in + pass_note(res, probes_cfg))


def pass_note(res: dict, probes_cfg: dict) -> str:
    run = probes_cfg.get("pass_score", 4)
    return (f" This run passes probes at {run:g}/5, not the calibration's {res['pass_score']:g}/5, so the κ "
            f"above is of another threshold." if isinstance(run, (int, float)) and run != res["pass_score"] else "")
