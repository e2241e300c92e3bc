"""`compaction-bench calibrate LABELS.jsonl [--min-kappa K] [--format text|json]`: how often the scorer
reads what a careful reader would, per metric (bench.scoring.calibrate). With `--judge`, the labels are of
probe answers and the configured judge model is measured instead (bench.scoring.judge_calibration). With
`--reader`, the configured judge model answers each label's question in the scorer's place
(bench.scoring.model_reader): a candidate reader measured on the same labels."""
from __future__ import annotations

import json
from typing import Callable

from bench.cli.parser import Parser
from bench.models import is_offline
from bench.runner.config import compose
from bench.runner.plan import model_config
from bench.runner.settings import parse
from bench.scoring.calibrate import Agreement, Calibration, calibrate
from bench.scoring.judge_calibration import calibrate_judge
from bench.scoring.model_reader import ReaderCalibration, calibrate_reader
from bench.tokens import tokenizer

LEAST = 10      # a metric with fewer labels says too little to fail on


def main(argv: list[str]) -> int:
    p = Parser(prog="compaction-bench calibrate",
               description="Score every line of a labelled reading corpus (JSON Lines: id, scenario, at, context, "
                           "item, metric, label, note) with the project's scorer and print, per metric, the "
                           "confusion matrix, Cohen's kappa, precision, recall and every disagreement. Exit 1 when "
                           f"a metric with at least {LEAST} labels has kappa below --min-kappa, 2 on a malformed "
                           "file (one line per problem). With --judge: LABELS holds answers (JSON Lines: id, question, "
                           "rubric, answer, label met|unmet|cannot_assess, note) and the configured judge model "
                           "grades each; kappa, confusion matrix and coverage of the judge; exit 1 below --min-kappa. "
                           "With --reader: the judge model (-o judge.model=...) answers each label's question in the "
                           "scorer's place; the same figures over the labels it answered, its coverage and "
                           "abstentions; exit 1 below --min-kappa or when it abstained on any label.")
    p.add_argument("labels", help="a labels file (JSON Lines); a relative scenario path is read against its folder")
    p.add_argument("--judge", action="store_true",
                   help="calibrate the probe judge (judge.model, offline unless -o judge.model=...) on labelled answers")
    p.add_argument("--reader", action="store_true",
                   help="put each label's question to the judge model (-o judge.model=...) instead of the scorer")
    p.add_argument("-o", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="a run override for --judge or --reader (judge.model=openai/x, judge.api_base=URL, "
                        "judge.concurrency=2; probes.pass_score=3 for --judge)")
    p.add_argument("--min-kappa", type=float, default=None, metavar="K",
                   help=f"fail (exit 1) when a metric with at least {LEAST} labels has kappa below K")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    args = p.parse_args(argv)
    if args.judge and args.reader:
        p.error("--judge and --reader measure different things: give one")
    if args.judge:
        return judge_main(args)
    if args.reader:
        return reader_main(p, args)
    if args.overrides:
        p.error("-o applies to --judge and --reader only")
    cal = calibrate(args.labels)
    return 1 if show(args, cal, cal.as_dict, lambda: text(cal)) else 0


def show(args, cal: Calibration, as_dict: Callable[[], dict], as_text: Callable[[], str]) -> list[Agreement]:
    """Print a per-metric calibration as asked (JSON, or text and its --min-kappa line); the metrics below."""
    low = cal.below(args.min_kappa, LEAST) if args.min_kappa is not None else []
    if args.format == "json":
        out = as_dict()
        if args.min_kappa is not None:
            out["min_kappa"] = args.min_kappa
            out["below"] = [a.metric for a in low]
        print(json.dumps(out, ensure_ascii=False, indent=1))
    else:
        print(as_text(), end="")
        if args.min_kappa is not None:
            print(f"min kappa {args.min_kappa}: " + ("every metric with at least "
                  f"{LEAST} labels reaches it" if not low else "below it: " + ", ".join(
                      f"{a.metric} ({a.kappa:.3f})" for a in low)))
    return low


def judge_main(args) -> int:
    cfg = compose(args.overrides)
    s = parse(cfg)
    mc = model_config(cfg.judge, s.seed)      # the path runs take: same config, same model builder
    cal = calibrate_judge(args.labels, mc, tokenizer(), s.probes.pass_score)
    a = cal.agreement
    low = args.min_kappa is not None and (a.kappa is None or a.kappa < args.min_kappa)
    if args.format == "json":
        out = cal.as_dict()
        out["offline"] = is_offline(mc.model)
        if args.min_kappa is not None:
            out["min_kappa"] = args.min_kappa
            out["below"] = bool(low)
        print(json.dumps(out, ensure_ascii=False, indent=1))
    else:
        print(judge_text(cal, is_offline(mc.model)), end="")
        if args.min_kappa is not None:
            print(f"min kappa {args.min_kappa}: " + (f"below it ({num(a.kappa)})" if low else "reached"))
    return 1 if low else 0


def reader_main(p: Parser, args) -> int:
    cfg = compose(args.overrides)
    mc = model_config(cfg.judge, parse(cfg).seed)
    if is_offline(mc.model):
        p.error("--reader needs a model: -o judge.model=openai/x (offline, the project's scorer is the reader; "
                "run calibrate without --reader)")
    rc = calibrate_reader(args.labels, mc, tokenizer())
    low = show(args, rc.calibration, rc.as_dict, lambda: reader_text(rc))
    return 1 if low or rc.abstained else 0


def reader_text(rc: ReaderCalibration) -> str:
    n = len(rc.calibration.verdicts) + len(rc.abstained)
    head = [f"model {rc.model} in the scorer's place: answered {len(rc.calibration.verdicts)} of {n} labels "
            f"(coverage {num(rc.coverage)}); {len(rc.abstained)} abstention(s), left out of kappa"]
    if rc.abstained and not rc.calibration.verdicts and all(a.why.startswith("failed to run") for a in rc.abstained):
        head.append(f"every call failed: check judge.model, judge.api_base and the key ({rc.abstained[0].why})")
    else:
        head += [f"-- abstained {a.label.id} (line {a.label.line}, {a.label.metric}): {a.why}" for a in rc.abstained]
    return "\n".join(head) + "\n" + text(rc.calibration, "model", "answered labels")


def judge_text(cal, offline: bool) -> str:
    a = cal.agreement
    lines = [f"{cal.path}: {len(cal.verdicts)} labels, judge {cal.model} (passing at {cal.pass_score:g}/5)"]
    if offline:
        lines.append("note: the offline judge is a deterministic stand-in (the share of the rubric's content words "
                     "the answer contains), not an LLM; name a model with -o judge.model=... to calibrate one")
    lines += [f"kappa {num(a.kappa)}, precision {num(a.precision)}, recall {num(a.recall)} on {a.n} labels "
              f"(met/unmet, judge scored)",
              f"coverage {num(cal.coverage)}: the judge scored {len(cal.verdicts) - len(cal.abstained)} of "
              f"{len(cal.verdicts)} labels; {len(cal.abstained)} abstention(s)",
              f"cannot_assess labels: {len(cal.cannot_assess)} (excluded from kappa)",
              f"treatment: {cal.as_dict()['treatment']}",
              "                reader met  reader unmet",
              f"   judge pass  {a.tp:>10}  {a.fp:>12}",
              f"   judge fail  {a.fn:>10}  {a.tn:>12}"]
    for v in cal.abstained:
        lines.append(f"-- abstained {v.label.id} (line {v.label.line}, reader {v.label.label}): {v.why}")
    for v in cal.disagreements:
        lines.append(f"-- {v.label.id} (line {v.label.line}): reader {v.label.label}, judge {v.score:g}/5")
        lines.append(f"   reader's note: {v.label.note}")
    return "\n".join(lines) + "\n"


def num(x: float | None, fmt: str = ".3f") -> str:
    return "n/a" if x is None else format(x, fmt)


def text(cal: Calibration, rater: str = "scorer", what: str = "labels") -> str:
    lines = [f"{cal.path}: {len(cal.verdicts)} {what}", "",
             f"{'metric':<11} {'n':>4} {'tp':>4} {'fp':>4} {'fn':>4} {'tn':>4} {'kappa':>6} {'prec':>6} {'recall':>6}"]
    for a in cal.metrics.values():
        lines.append(f"{a.metric:<11} {a.n:>4} {a.tp:>4} {a.fp:>4} {a.fn:>4} {a.tn:>4} {num(a.kappa):>6} "
                     f"{num(a.precision):>6} {num(a.recall):>6}")
    for a in cal.metrics.values():
        lines += ["", *section(a, rater)]
    return "\n".join(lines) + "\n"


def section(a: Agreement, rater: str = "scorer") -> list[str]:
    out = [f"== {a.metric}: kappa {num(a.kappa)}, precision {num(a.precision)}, recall {num(a.recall)} ({a.n} labels)",
           "                reader 1  reader 0",
           f"   {rater:<6} 1    {a.tp:>8}  {a.fp:>8}",
           f"   {rater:<6} 0    {a.fn:>8}  {a.tn:>8}"]
    if not a.disagreements:
        out.append("   no disagreement")
    for v in a.disagreements:
        lab = v.label
        out.append(f"-- {lab.id} (line {lab.line}, {lab.item} at {lab.at}): reader {lab.label}, {rater} {v.verdict} "
                   f"(score {v.score:g}: {v.reason})")
        out.append(f"   reader's note: {lab.note}")
        out.extend("   | " + x for x in v.text.splitlines())
    return out
