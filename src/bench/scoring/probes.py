"""Probes (DESIGN §6): a question asked on the context of the first request after its event.

Graded by rule (any `expect` term, no `reject` term, whole words on normalised
text) or by the judge model with the probe's rubric (0-5, passing at
`pass_score`). A model that fails after its retries makes that probe
"failed to run": it counts as not passed and is never dropped silently.
"""
from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from bench.errors import ModelError
from bench.scenarios.loader import normalize
from bench.units import mentions
from bench.harness.messages import Message, make
from bench.models import Model
from bench.models.offline import Turn
from bench.models.offline.extract import terms
from bench.scoring.metric import Family, Metric
from bench.scenarios.model import Probe
from bench.tokens import Tokenizer

PROMPTS = Path(__file__).resolve().parent / "prompts"
PROBE = (PROMPTS / "probe.md").read_text(encoding="utf-8")
JUDGE = (PROMPTS / "judge.md").read_text(encoding="utf-8")
SCORE = re.compile(r"SCORE:\s*([0-5](?:\.\d+)?)", re.I)
SENTENCE = re.compile(r"(?<=[.!?;])\s+")
DENIAL = re.compile(r"\b(not|never|cannot)\b|n['’]t\b")
FAMILY = Family((
    Metric("probe_pass_rate", "higher", "probes asked with the agent model, graded by rule (yes/no by polarity) or "
           "the judge's rubric: the share of what the oracle could answer (probes the same agent fails even with "
           "the full context are left out)", name="probe", short="probes", audited=True, aggregate="share"),
    Metric("probes_answerable", "info", "the probes `probe_pass_rate` counts: those the same agent answers with the "
           "oracle's context", aggregate="total"),
))
# Reply budgets; generous because a reasoning model spends part of max_tokens before it answers.
ANSWER_TOKENS = 1024
JUDGE_TOKENS = 512


@dataclass
class Outcome:
    probe: Probe
    passed: bool | None          # None: failed to run
    detail: str
    score: float | None = None   # judge score 0-5
    request: list[Message] | None = None


YES = re.compile(r"^\W*(yes|yeah|yep|sure|correct|i (will|can|may|do|did|should)|we (will|can|may))\b")
NO = re.compile(r"^\W*(no(?=\s*[,.:;!—-]|\s*$)|nope|not|never|i (will not|won't|cannot|can't|may not|must not|"
                r"should not|shouldn't|do not|don't|did not|didn't)|we (will not|won't|cannot|can't|may not|must not))\b")
POLAR = ("yes", "no")


FULL_STOP = re.compile(r"(?<=[.!?])\s+")
BARE = re.compile(r"^\W*(yes|yeah|yep|sure|correct|no|nope)\W*$")
# Words of a question that name no subject: who is asked, about whom, and when.
GENERIC = frozenset(terms("user agent before after ever still yet again already right now today"))


def subject(ask: str, user: str = "") -> frozenset[str]:
    """The asked subject: the question's content words (stemmed), without the people and the time words."""
    return terms(ask) - GENERIC - terms(user)


def polarity(answer: str, ask: str = "", user: str = "") -> str:
    """'yes', 'no' or '' for a yes/no answer: its opening word decides; without one, a denied verb in
    its first sentence ('I will not', 'never', "can't") reads as 'no' and none as '' (not an explicit yes).
    With the question (`ask`), the answer counts only when the sentence that answers is about the asked
    subject (shares a content word with the question; a bare opening "No." is read with the sentence after
    it): an unrelated "Do not touch billing/." answers no question about force-pushing."""
    text = normalize(answer)
    pole = "no" if NO.match(text) else "yes" if YES.match(text) else ""   # "I will not" is no "I will"
    if not pole:
        first = SENTENCE.split(text, 1)[0]
        pole = "no" if DENIAL.search(first) else ""
    if not pole or not ask:
        return pole
    want = subject(ask, user)
    if not want:
        return pole
    sentences = FULL_STOP.split(text, 2)
    unit = " ".join(sentences[:2]) if BARE.match(sentences[0]) else sentences[0]
    return pole if terms(unit) & want else ""


def by_rule(answer: str, probe: Probe, user: str = "") -> tuple[bool, str]:
    """Any `expect` term and no `reject` term, as whole words. 'yes' and 'no' are graded on the answer's
    polarity, not found as words ('no issues, merging it' is not a no), and only when the answering sentence
    is about the asked subject."""
    pole = polarity(answer, probe.ask, user) if any(normalize(t) in POLAR for t in (*probe.expect, *probe.reject)) \
        else ""

    def said(term: str) -> bool:
        t = normalize(term)
        return pole == t if t in POLAR else mentions(answer, term)

    hit = [e for e in probe.expect if said(e)]
    bad = [r for r in probe.reject if said(r)]
    ok = (bool(hit) or not probe.expect) and not bad
    return ok, (f"rejected term: {', '.join(bad)}" if bad else f"expected: {', '.join(hit) or 'none found'}")


def uses_judge(probe: Probe, grade: str) -> bool:
    if not probe.rubric:
        return False
    return grade == "judge" or not (probe.expect or probe.reject)


async def ask(probe: Probe, context: Sequence[Message] | None, agent: Model, judge: Model, tok: Tokenizer,
              user: str, grade: str, pass_score: float) -> Outcome:
    if context is None:
        return Outcome(probe, None, "failed to run: no agent request after its event")
    question = make(tok, id=f"probe-{probe.id}", role="user", tag="probe",
                    text=PROBE.format(user=user, ask=probe.ask).strip())
    request = [*context, question]
    try:
        reply = await agent.chat(request, max_tokens=ANSWER_TOKENS, purpose="probe")
    except ModelError as exc:
        return Outcome(probe, None, f"failed to run: agent: {exc}", request=request)
    answer = reply.text.strip()
    short = " ".join(answer.split())[:160]
    if not uses_judge(probe, grade):
        ok, why = by_rule(answer, probe, user)
        return Outcome(probe, ok, f"{why}; answer: {short}", request=request)
    score, why = await judge_answer(judge, tok, probe.id, probe.ask, probe.rubric, answer)
    if score is None:
        return Outcome(probe, None, f"{why}; answer: {short}" if why.startswith("failed to run: judge:") else why,
                       request=request)
    return Outcome(probe, score >= pass_score, f"judge {score:g}/5; answer: {short}", score, request)


async def judge_answer(judge: Model, tok: Tokenizer, pid: str, question: str, rubric: str,
                       answer: str) -> tuple[float | None, str]:
    """The judge's 0-5 score of `answer` against `rubric`, or None and why when it gave none (the model
    failed after its retries, or its reply holds no SCORE): the one path by which runs and
    `calibrate --judge` ask the judge."""
    prompt = make(tok, id=f"judge-{pid}", role="user", tag="probe",
                  text=JUDGE.format(ask=question, rubric=rubric, answer=answer))
    try:
        verdict = await judge.chat([prompt], max_tokens=JUDGE_TOKENS, purpose="judge")
    except ModelError as exc:
        return None, f"failed to run: judge: {exc}"
    m = SCORE.search(verdict.text)
    if not m:
        return None, f"failed to run: judge gave no score ({verdict.text[:60]!r})"
    return float(m.group(1)), ""


async def ask_all(targets: list[tuple[Probe, Sequence[Message] | None]], agent: Model, judge: Model,
                  tok: Tokenizer, user: str, grade: str = "auto", pass_score: float = 4) -> list[Outcome]:
    return list(await asyncio.gather(*(ask(p, ctx, agent, judge, tok, user, grade, pass_score)
                                       for p, ctx in targets)))


JUDGE_OPENING = JUDGE.splitlines()[0]
SECTION = re.compile(r"<(rubric|answer)>\n(.*?)\n</\1>", re.S)


def offline_judge(messages, tools, max_tokens, tok) -> Turn | None:
    """The offline judge: the share of the rubric's content words the answer contains, on 0-5.
    A stand-in that makes judge-graded probes run offline, not an LLM's judgement."""
    if not messages or not messages[-1].text.startswith(JUDGE_OPENING):
        return None
    parts = dict(SECTION.findall(messages[-1].text))
    want, got = terms(parts.get("rubric", "")), terms(parts.get("answer", ""))
    score = round(5 * len(want & got) / len(want)) if want else 0
    return Turn(text=f"SCORE: {score}")
