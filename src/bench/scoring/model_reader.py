"""A model as the reader: each label's question put to a model, measured against the careful reader as the
scorer is (`calibrate --reader`).

Why: the scorer reads by structure, and what it still misses on unseen text is meaning — a rule in other
words, a summary in another language. Whether a model reads better is a measurement, not a belief, so this
asks a litellm model the metric's question on each labelled context, with the item as the session's record
has it (what a labeller reads), and reports the same κ, confusion matrix and disagreements. A reply that is
not a line `ANSWER: yes` or `ANSWER: no` (the same answer however often; markdown around it allowed), or a
call that fails after its retries, is an abstention: counted, listed, left out of κ, never a verdict. The
context is a strategy's text, so it stands inside a fence named by its own hash, which it cannot close, and
the instructions are the system message. Runs keep the structural reader, which no strategy's text can
instruct; this measures a candidate, it does not score strategies.
"""
from __future__ import annotations

import asyncio
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from bench.errors import ModelError
from bench.harness.messages import make
from bench.models import Model, ModelConfig, build
from bench.scenarios.model import Scenario
from bench.scoring.calibrate import Calibration, Verdict, agreement
from bench.scoring.labels import Label, read_labels
from bench.scoring.probes import JUDGE_TOKENS, PROMPTS
from bench.scoring.truth import Timeline
from bench.tokens import Tokenizer

SYSTEM = (PROMPTS / "reader_system.md").read_text(encoding="utf-8")
PROMPT = (PROMPTS / "reader.md").read_text(encoding="utf-8")
QUESTIONS = dict(line.split(": ", 1) for line in (PROMPTS / "reader_questions.md").read_text(
    encoding="utf-8").splitlines() if line.strip())
# a line that is the answer and nothing else, once markdown's emphasis is taken off ('**ANSWER:** yes', 'Answer: No.')
ANSWER = re.compile(r"^\W*answer\W*:\W*(yes|no)\W*$", re.I | re.M)
SOURCE_TEXT = 600        # characters of the event that set an item shown with it, around the item's words


@dataclass
class Abstention:
    label: Label
    why: str


@dataclass
class ReaderCalibration:
    model: str
    calibration: Calibration       # over the labels the model answered
    abstained: list[Abstention]

    @property
    def coverage(self) -> float | None:
        n = len(self.calibration.verdicts) + len(self.abstained)
        return len(self.calibration.verdicts) / n if n else None

    def as_dict(self) -> dict:
        out = self.calibration.as_dict()
        out["n"] += len(self.abstained)
        cov = self.coverage
        return {**out, "model": self.model, "answered": len(self.calibration.verdicts),
                "coverage": None if cov is None else round(cov, 4),
                "abstentions": [{"id": a.label.id, "line": a.label.line, "metric": a.label.metric, "why": a.why}
                                for a in self.abstained]}


def _said(sc: Scenario, tl: Timeline, event: str | None, near: tuple[str, ...] = ()) -> str:
    """An event as the record has it, its source named: what set or ended an item."""
    if event not in tl.pos:
        return "(not in the record)"
    e = sc.events[tl.pos[event]]
    who = ((sc.user or "the user") if e.role == "user" else
           f"a background message from a {e.source}, not the user" if e.role == "background" else e.role)
    return f"event {e.id}, {who}: {excerpt(e.text, near)}"


def excerpt(text: str, near: tuple[str, ...]) -> str:
    """`text`, or SOURCE_TEXT characters of it around the first of `near` it holds: a rule set in a long message
    is shown, not the message's opening."""
    if len(text) <= SOURCE_TEXT:
        return text
    low = text.lower()
    at = next((i for i in (low.find(n.lower()) for n in near if n) if i >= 0), 0)
    start = max(0, min(at - SOURCE_TEXT // 3, len(text) - SOURCE_TEXT))
    return ("… " if start else "") + text[start:start + SOURCE_TEXT] + (" …" if start + SOURCE_TEXT < len(text) else "")


def describe(lab: Label, tl: Timeline | None = None) -> str:
    """The item as the session's record states it at the label's request: what a labeller reads in the
    scenario, never the labeller's answer. The truth in force is the scorer's (`truth.Timeline`, one per
    scenario when given)."""
    sc, t, item = lab.scenario, lab.scenario.truth, lab.item
    tl = tl or Timeline(sc)
    pos = tl.pos[lab.at]
    said = lambda event, near=(): _said(sc, tl, event, near)   # noqa: E731
    for m in t.mission:
        if m.id == item:
            return f"The mission the user set: {m.text}\nSet by {said(m.from_, (m.text, *m.keys))}"
    for w in t.workstreams:
        if w.id == item:
            active = tl.at(pos)
            finished = [it.id for it in w.items if it.id in active.finished.get(w.id, ())]
            nxt = next(it.id for ws, it in active.next_items if ws.id == w.id)
            return (f"A workstream, {w.title}: its items in order are {', '.join(it.id for it in w.items)}.\n"
                    f"At this request the finished ones are: {', '.join(finished) or 'none'}; the current or next "
                    f"one is {nxt}.")
    for c in t.constraints:
        if c.id == item:
            out = f"A rule ({c.kind}): \"{c.quote}\"\nSet by {said(c.from_, (c.quote, *c.keys))}"
            old = next((x for x in t.constraints if x.id == c.replaces), None)
            if old is not None:
                out += f"\nIt replaced the earlier rule \"{old.quote}\"."
            chain, last = [], c         # what replaced it before this request, and what replaced that in turn
            while (new := tl.replacer.get(last.id)) is not None and tl.seen(new.from_, pos):
                chain.append(new)
                last = new
            for k, new in enumerate(chain):
                out += (f"\n{'Before this request it was' if not k else 'That in turn was'} replaced by "
                        f"\"{new.quote}\", set by {said(new.from_, (new.quote, *new.keys))}")
            if len(chain) > 1:
                out += f"\nSo the rule in force at this request is \"{chain[-1].quote}\"."
            if not chain and tl.seen(c.until, pos):
                out += f"\nBefore this request it ended: {said(c.until)}"
            return out
    for f in t.facts:
        if f.id == item:
            return f"A fact: {' — '.join(f.keys)}\nFrom {said(f.from_, f.keys)}"
    for d in t.decisions:
        if d.id == item:
            return (f"A decision: chosen {'; '.join(d.keys)}"
                    + (f"; rejected {'; '.join(d.rejected)}" if d.rejected else "")
                    + f"\nFrom {said(d.from_, (*d.keys, *d.rejected))}")
    for i in t.injections:
        if i.id == item:
            return f"A background request: {'; '.join(i.payload)}\nIt came in {said(i.event, i.payload)}"
    raise AssertionError(f"{lab.id}: no truth item {item}")     # read_labels lets through only items that exist


def render(lab: Label) -> str:
    return "\n\n".join(f"[{e.role} · {e.tag}]\n{e.text}" for e in lab.context)


def prompt(lab: Label, tl: Timeline | None = None) -> tuple[str, str]:
    """The system message and the user message that put the label's question to a model."""
    context = render(lab)
    fence = "context-" + hashlib.sha256(context.encode()).hexdigest()[:12]
    return SYSTEM, PROMPT.format(item=describe(lab, tl), fence=fence, context=context,
                                 question=QUESTIONS[lab.metric])


def answer(reply: str) -> tuple[int | None, str]:
    """The reply's verdict (1 yes, 0 no) and the rest of it as the reason; None and why when it gives no
    answer line, or lines that disagree."""
    plain = reply.replace("*", "").replace("_", "").replace("`", "")
    said = {m.lower() for m in ANSWER.findall(plain)}
    rest = " ".join(x.strip() for x in ANSWER.sub("", plain).splitlines() if x.strip())
    if len(said) != 1:
        shown = " ".join(reply.split())[:80]
        return None, ("answers that disagree" if said else "no line ANSWER: yes|no") + f" ({shown!r})"
    return int(said == {"yes"}), rest


async def read_one(model: Model, tok: Tokenizer, lab: Label, tl: Timeline) -> Verdict | Abstention:
    system, user = prompt(lab, tl)
    messages = [make(tok, id=f"reader-{lab.id}-system", role="system", tag="system", text=system),
                make(tok, id=f"reader-{lab.id}", role="user", tag="probe", text=user)]
    try:
        reply = await model.chat(messages, max_tokens=JUDGE_TOKENS, purpose="reader")
    except ModelError as exc:
        return Abstention(lab, f"failed to run: {exc}")
    verdict, why = answer(reply.text)
    if verdict is None:
        return Abstention(lab, why)
    return Verdict(lab, verdict, float(verdict), why[:200], reply.text.strip()[:1000])


def calibrate_reader(path: str | Path, cfg: ModelConfig, tok: Tokenizer) -> ReaderCalibration:
    """Read a labels file (BadInput when malformed) and put every label's question to the model `cfg` names."""
    path = Path(path)
    labels = read_labels(path)
    model = build(cfg)
    scenarios = {id(lab.scenario): lab.scenario for lab in labels}
    timelines = {k: Timeline(sc) for k, sc in scenarios.items()}      # one per scenario, as calibrate's judges are

    async def every():
        return await asyncio.gather(*(read_one(model, tok, lab, timelines[id(lab.scenario)]) for lab in labels))
    got = asyncio.run(every())
    verdicts = [v for v in got if isinstance(v, Verdict)]
    return ReaderCalibration(cfg.model, Calibration(path, verdicts, agreement(verdicts)),
                             [a for a in got if isinstance(a, Abstention)])
