"""The scorer measured like an instrument: its verdicts on a labelled reading corpus, and how often a
careful reader agrees (Cohen's κ, the confusion matrix, precision and recall per metric).

A calibration that read the contexts some other way would measure nothing, so each line is scored on the
run's own code path: its context becomes the messages of one agent request — an entry that is the
harness's rendering of an event (same role, tag and text as `render_all` gives) *is* that event's message,
so whose words it holds is read as in a real run; any other entry is text a strategy wrote, with its
tag — then `Judge.request` reads them and `checks.shown` scores the truth in force at `at`. The hold
rule (neighbouring requests) needs a cell, so a single context is judged on its own, as `shown` does.

The scorer's verdict for a line is 1 when its score for that item and metric is above 0: a partial
credit (a constraint's keys kept as the same kind of rule) is a 1, a loosened or lost rule a 0.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bench.harness.messages import Message, make
from bench.scoring.checks import Check, Hits, Judge, shown
from bench.scoring.labels import METRICS, Label, read_labels
from bench.text import normalize
from bench.tokens import tokenizer
from bench.units import units

SHOWN_UNITS = 6     # units of a disagreement's context shown with it


@dataclass
class Verdict:
    label: Label
    verdict: int          # the scorer's: 1 when its score is above 0
    score: float
    reason: str
    text: str             # the context's units that hold the item's keys (what a reader would look at)

    @property
    def agrees(self) -> bool:
        return self.verdict == self.label.label


@dataclass
class Agreement:
    """One metric's agreement between the labels (the reference) and the scorer; 1 is the positive class
    (kept, or for leakage / stale / revived: found)."""
    metric: str
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    disagreements: list[Verdict] = field(default_factory=list)

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def kappa(self) -> float | None:
        """Cohen's κ: agreement beyond what the two marginals give by chance; None when chance alone
        agrees on every line (both raters gave one class only), where κ is undefined."""
        n = self.n
        if not n:
            return None
        po = (self.tp + self.tn) / n
        pe = ((self.tp + self.fp) * (self.tp + self.fn) + (self.fn + self.tn) * (self.fp + self.tn)) / (n * n)
        return None if pe >= 1 else (po - pe) / (1 - pe)

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


@dataclass
class Calibration:
    path: Path
    verdicts: list[Verdict]
    metrics: dict[str, Agreement]      # in METRICS order, only those the file labels

    def below(self, floor: float, least: int = 10) -> list[Agreement]:
        """The metrics with at least `least` labels whose κ is below `floor`."""
        return [a for a in self.metrics.values() if a.n >= least and a.kappa is not None and a.kappa < floor]

    def as_dict(self) -> dict:
        """The calibration as one JSON-ready object: per metric n, tp, fp, fn, tn, kappa, precision,
        recall and every disagreement (rounded to 4 places)."""
        r = lambda x: None if x is None else round(x, 4)   # noqa: E731
        return {"labels": str(self.path), "n": len(self.verdicts), "metrics": {
            m: {"n": a.n, "tp": a.tp, "fp": a.fp, "fn": a.fn, "tn": a.tn, "kappa": r(a.kappa),
                "precision": r(a.precision), "recall": r(a.recall),
                "disagreements": [{"id": v.label.id, "line": v.label.line, "item": v.label.item,
                                   "label": v.label.label, "verdict": v.verdict, "score": v.score,
                                   "reason": v.reason, "note": v.label.note, "text": v.text}
                                  for v in a.disagreements]}
            for m, a in self.metrics.items()}}


def calibrate(path: str | Path, tok=None) -> Calibration:
    """Read a labels file (BadInput when malformed) and score every line with the project's scorer."""
    path = Path(path)
    labels = read_labels(path)
    verdicts = judge_all(labels, tok or tokenizer())
    return Calibration(path, verdicts, agreement(verdicts))


def agreement(verdicts: list[Verdict]) -> dict[str, Agreement]:
    out = {m: Agreement(m) for m in METRICS if any(v.label.metric == m for v in verdicts)}
    for v in verdicts:
        a = out[v.label.metric]
        cell = {(1, 1): "tp", (1, 0): "fp", (0, 1): "fn", (0, 0): "tn"}[(v.verdict, v.label.label)]
        setattr(a, cell, getattr(a, cell) + 1)
        if not v.agrees:
            a.disagreements.append(v)
    return out


def judge_all(labels: list[Label], tok) -> list[Verdict]:
    """The scorer's verdict on every label, one Judge per scenario (its findings shared by the lines)."""
    judges: dict[int, Judge] = {}
    out = []
    for lab in labels:
        j = judges.get(id(lab.scenario))
        if j is None:
            j = judges[id(lab.scenario)] = Judge(lab.scenario, tok, markers=True)
        out.append(judge_one(j, lab, tok))
    return out


def context(judge: Judge, lab: Label, tok) -> list[Message]:
    """The label's context as the messages of one request: an entry equal to the harness's rendering of
    an event (role, tag and text; a background event's text without its label too) is that event's message —
    the one after the previous such entry when the same text recurs — and any other entry is a strategy's text
    under its own tag."""
    rendered = judge.rendered
    where: dict[tuple[str, str, str], list[int]] = {}
    for i, m in enumerate(rendered):
        where.setdefault((m.role, m.tag, m.text), []).append(i)
    # a background event copied as the record has it, without the label the harness puts on it: the entry says it
    # is that message by its tag, and a reader reads it as that message — unless the event is in view already
    raw = {e.id: e.text for e in judge.s.events if e.role == "background"}
    copies = {(m.role, m.tag, raw[m.id]): i for i, m in enumerate(rendered) if m.tag == "background" and m.id in raw}
    shown = {i for e in lab.context for i in where.get((e.role, e.tag, e.text), ())}
    out, last = [], -1
    for k, e in enumerate(lab.context):
        found = where.get((e.role, e.tag, e.text))
        copy = copies.get((e.role, e.tag, e.text))
        if found:
            i = next((i for i in found if i > last), found[-1])
            last = max(last, i)
            out.append(rendered[i])
        elif copy is not None and copy not in shown:
            shown.add(copy)
            out.append(rendered[copy])
        else:
            out.append(make(tok, id=f"{lab.id}#{k}", role=e.role, text=e.text, tag=e.tag))
    return out


def judge_one(judge: Judge, lab: Label, tok) -> Verdict:
    messages = context(judge, lab, tok)
    found = judge.request(messages)
    active = judge.timeline.at(judge.timeline.pos[lab.at])
    now = shown(found, active)
    name = METRICS[lab.metric]
    check = next((c for (metric, key), c in now.kept if metric == name and key == lab.item), None)
    check = check or next((c for c in now.worse if c.metric == name and c.item == lab.item), None)
    if check is None:      # read_labels lets through only items the metric scores at `at`
        raise AssertionError(f"{lab.id}: no {name} check for {lab.item}")
    verdict = int(check.score > 0)
    return Verdict(lab, verdict, check.score, reason(lab, check, found), relevant(judge, lab, messages))


def reason(lab: Label, c: Check, found: Hits) -> str:
    """The scorer's reason in words: its check's detail, or what a verdict without one means."""
    if c.detail:
        why = c.detail
    elif lab.metric == "constraint":
        why = "quoted verbatim as the user's, in force" if c.score == 1 else "keys kept as the same kind of rule"
    elif lab.metric == "leakage":
        why = "payload not in the user's words nor restated as a task without its source"
    elif lab.metric == "stale":
        why = ("quoted, but what ended it is shown" if lab.item in found.quoted
               else "not quoted as in force")
    elif lab.metric == "revived":
        why = "no rejected option proposed again in the strategy's text"
    else:
        why = "kept"
    if lab.metric == "leakage" and found.covered.get(lab.item):
        cues = sorted({x for s in found.covered[lab.item] for x in s})
        why += f" (excused in some unit by: {', '.join(repr(x) for x in cues)})"
    return why


def keys(lab: Label) -> list[str]:
    """The strings a reader looks for to judge this item (normalised)."""
    t, item = lab.scenario.truth, lab.item
    found: list[str] = []
    for m in t.mission:
        if m.id == item:
            found += m.keys or [m.text]
    for w in t.workstreams:
        if w.id == item:
            found += [it.id for it in w.items]
    for c in t.constraints:
        if c.id == item:
            found += [c.quote, *c.keys]
    for f in t.facts:
        if f.id == item:
            found += f.keys
    for d in t.decisions:
        if d.id == item:
            found += [*d.keys, *d.rejected]
    for i in t.injections:
        if i.id == item:
            found += [k for ks in (i.payload, *i.alternatives) for k in ks]
    return [k for k in (normalize(x) for x in found) if k]


def relevant(judge: Judge, lab: Label, messages: list[Message]) -> str:
    """The units of the context (with their heading) that hold one of the item's keys, tagged by the part
    they stand in: what a reader of a disagreement needs to see."""
    ks = keys(lab)
    out: list[str] = []
    for m in messages:
        for p in m.segments():
            for u in units(p.text):
                line = f"[{p.tag}] " + (f"{u.head} › " if u.head else "") + u.text
                if any(k in u.scope for k in ks) and line not in out:
                    out.append(line)
    if not out:
        return f"(no unit of the context holds one of the item's keys: {'; '.join(ks)})"
    more = len(out) - SHOWN_UNITS
    return "\n".join(out[:SHOWN_UNITS] + ([f"... {more} more units"] if more > 0 else []))


__all__ = ["calibrate", "Calibration", "Agreement", "Verdict", "agreement", "judge_all", "context"]
