"""The probe judge measured like an instrument: its verdicts on answers a careful reader labelled.

A labels file is JSON Lines, one answer a line: `{"id", "question", "rubric", "answer", "label", "note"}`
with label `met`, `unmet` or `cannot_assess`. Each answer is graded by the configured judge on the path
runs use (`probes.judge_answer`, the project's judge prompt, passing at `probes.pass_score`). Cohen's κ and
the confusion matrix (`calibrate.Agreement`, the scorer's calibration code) are over the lines that the
reader labelled met/unmet *and* the judge gave a score: a `cannot_assess` label and a judge abstention (a
call that failed after its retries, or a reply without a score) are left out of κ, counted and listed —
an abstention is never a pass. Coverage is the share of all labels the judge gave a verdict on.
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path

from bench.errors import BadInput
from bench.parsing import json_objects
from bench.models import Model, ModelConfig, build
from bench.scoring.calibrate import Agreement
from bench.scoring.probes import judge_answer, offline_judge

LABELS = ("met", "unmet", "cannot_assess")
FIELDS = ("id", "question", "rubric", "answer", "label", "note")


@dataclass(frozen=True)
class AnswerLabel:
    line: int
    id: str
    question: str
    rubric: str
    answer: str
    label: str
    note: str


@dataclass
class JudgeVerdict:
    label: AnswerLabel
    score: float | None        # None: the judge abstained
    why: str                   # why it abstained ("" when it scored)
    passed: bool | None        # score >= pass_score; None when it abstained


@dataclass
class JudgeCalibration:
    path: Path
    model: str
    pass_score: float
    verdicts: list[JudgeVerdict]
    agreement: Agreement = field(init=False)

    def __post_init__(self):
        a = Agreement("judge")
        for v in self.verdicts:
            if v.passed is None or v.label.label == "cannot_assess":
                continue
            cell = {(True, "met"): "tp", (True, "unmet"): "fp", (False, "met"): "fn",
                    (False, "unmet"): "tn"}[(v.passed, v.label.label)]
            setattr(a, cell, getattr(a, cell) + 1)
        self.agreement = a

    @property
    def abstained(self) -> list[JudgeVerdict]:
        return [v for v in self.verdicts if v.passed is None]

    @property
    def cannot_assess(self) -> list[JudgeVerdict]:
        return [v for v in self.verdicts if v.label.label == "cannot_assess"]

    @property
    def coverage(self) -> float | None:
        """The share of all labels the judge gave a verdict (a score) on."""
        return (len(self.verdicts) - len(self.abstained)) / len(self.verdicts) if self.verdicts else None

    @property
    def disagreements(self) -> list[JudgeVerdict]:
        return [v for v in self.verdicts if v.passed is not None and v.label.label != "cannot_assess"
                and v.passed != (v.label.label == "met")]

    def as_dict(self) -> dict:
        r = lambda x: None if x is None else round(x, 4)   # noqa: E731
        a = self.agreement
        return {"labels": str(self.path), "judge": self.model, "pass_score": self.pass_score,
                "n": len(self.verdicts), "scored": a.n, "kappa": r(a.kappa), "precision": r(a.precision),
                "recall": r(a.recall), "coverage": r(self.coverage),
                "confusion": {"tp": a.tp, "fp": a.fp, "fn": a.fn, "tn": a.tn},
                "cannot_assess": len(self.cannot_assess), "abstained": len(self.abstained),
                "treatment": TREATMENT,
                "abstentions": [{"id": v.label.id, "line": v.label.line, "label": v.label.label, "why": v.why}
                                for v in self.abstained],
                "disagreements": [{"id": v.label.id, "line": v.label.line, "label": v.label.label,
                                   "score": v.score, "note": v.label.note} for v in self.disagreements]}


TREATMENT = ("kappa and the confusion matrix count only the lines labelled met/unmet on which the judge gave "
             "a score; cannot_assess labels and judge abstentions (a failed call or a reply without a score) "
             "are excluded from kappa and counted; an abstention is never a pass; coverage is the share of all "
             "labels the judge scored")


def read_answer_labels(path: str | Path) -> list[AnswerLabel]:
    """The labels of `path`; BadInput with one line per problem when any line is malformed."""
    path = Path(path)
    rows, problems = json_objects(path)
    out, seen = [], set()
    for n, where, obj in rows:
        bad = False
        for k in FIELDS:
            if k not in obj:
                problems.append(f"{where}: missing '{k}'")
                bad = True
            elif not isinstance(obj[k], str):
                problems.append(f"{where}: '{k}' is not a string")
                bad = True
            elif k != "note" and not obj[k].strip():
                problems.append(f"{where}: '{k}' is empty")
                bad = True
        extra = sorted(set(obj) - set(FIELDS))
        if extra:
            problems.append(f"{where}: unknown field(s) {', '.join(extra)}")
            bad = True
        if isinstance(obj.get("label"), str) and obj["label"] and obj["label"] not in LABELS:
            problems.append(f"{where}: label '{obj['label']}' is not one of {', '.join(LABELS)}")
            bad = True
        if isinstance(obj.get("id"), str) and obj["id"] in seen:
            problems.append(f"{where}: duplicate id '{obj['id']}'")
            bad = True
        if bad:
            continue
        seen.add(obj["id"])
        out.append(AnswerLabel(n, **{k: obj[k] for k in FIELDS}))
    if not problems and not out:
        problems.append(f"{path}: no labels")
    if problems:
        raise BadInput(problems)
    return out


async def grade_all(labels: list[AnswerLabel], judge: Model, tok, pass_score: float) -> list[JudgeVerdict]:
    async def one(lab: AnswerLabel) -> JudgeVerdict:
        score, why = await judge_answer(judge, tok, lab.id, lab.question, lab.rubric, lab.answer)
        return JudgeVerdict(lab, score, why, None if score is None else score >= pass_score)
    return list(await asyncio.gather(*(one(lab) for lab in labels)))


def calibrate_judge(path: str | Path, cfg: ModelConfig, tok, pass_score: float = 4.0) -> JudgeCalibration:
    """Read a labels file (BadInput when malformed) and grade every answer with the judge `cfg` names,
    built as a run builds its judge (`models.build`, taught the offline judge's protocol)."""
    labels = read_answer_labels(path)
    judge = build(cfg).teach((offline_judge,))
    return JudgeCalibration(Path(path), cfg.model, pass_score, asyncio.run(grade_all(labels, judge, tok, pass_score)))


RESULT_KEYS = ("labels", "judge", "n", "scored", "kappa", "coverage", "cannot_assess", "abstained", "pass_score")


def read_result(path: str | Path) -> dict:
    """A saved `calibrate --judge --format json` result; BadInput when it is missing or not one."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BadInput(f"{path}: not a judge calibration result ({exc})")
    missing = [k for k in RESULT_KEYS if not isinstance(data, dict) or k not in data]
    if missing:
        raise BadInput(f"{path}: not a judge calibration result (no {', '.join(missing)})")
    return data
