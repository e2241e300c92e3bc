"""The report's first screen: a decision, not a ranking.

A team choosing a compaction needs each strategy against the two ends that frame it — `truncate`, which
keeps no working context (a strategy that cannot beat it is not worth its writer calls), and the oracle
`full`, which keeps everything (how much is left to gain) — on the same sessions, so the paired difference
(same scenario, window, seed and writer) cancels what makes a session easy or hard. A verdict is better or
worse only when the whole 95% interval of that difference is on one side of 0 (bench.results.stats).

"What to ship" is computed, and written so that the cheapest ways to look good lose: a strategy that ran on
only some of the floor's cells (where it happens to tie) is "not comparable", and a cheap one that knows no
more than the floor is "not worth shipping", however cheap.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bench.report import data
from bench.results.stats import Interval, paired_interval, verdict
from bench.scoring import metrics as M

FLOOR = "truncate"
NOT_MEASURABLE = "not measurable here"
KEY = ("scenario", "window", "seed")


@dataclass(frozen=True)
class Delta:
    """One strategy against one reference on one metric: the paired difference (strategy minus reference)
    over the cells both scored, and over how many of the reference's cells that is."""
    metric: str
    diff: Interval | None
    verdict: str          # better / tied / worse, or NOT_MEASURABLE
    paired: int           # cells with a value on both sides
    of: int               # the reference's cells with a value (what a full comparison pairs)

    @property
    def partial(self) -> bool:
        return self.paired < self.of

    def text(self) -> str:
        if self.diff is None:
            return NOT_MEASURABLE
        return f"{self.verdict} {_signed(self.diff)}" + (f" ({self.paired} of {self.of} cells)" if self.partial else "")


def higher(metric: str) -> bool:
    return metric == "retention" or M.higher_is_better(metric)


def base(strategy: str) -> str:
    """A row label's strategy (`naive · offline`, `full (oracle)` -> naive, full)."""
    return str(strategy).split(data.SEP)[0].split(" (")[0]


def is_oracle(df):
    return (df["oracle"].fillna(0).astype(float) > 0) if "oracle" in df.columns else df["strategy"].str.endswith(" (oracle)")


def versus(cells, reference, metrics: list[str]) -> dict[str, dict[str, Delta]]:
    """Per row label of `cells` (strategy, or strategy · writer) and metric: its Delta against the cells of
    `reference` (a boolean mask over `cells`). A strategy is paired with the reference's cell of the same
    scenario, window, seed and writer; where the reference never ran under that writer (it calls none), with
    its cell of the same scenario, window and seed."""
    ref = cells[reference]
    own: dict[tuple, dict[str, Any]] = {}
    anywriter: dict[tuple, dict[str, Any]] = {}
    for r in ref.to_dict("records"):
        k = tuple(str(r[c]) for c in KEY)
        own[(*k, str(r["writer"]))] = r
        anywriter.setdefault(k, r)
    writers = set(ref["writer"].astype(str))
    out: dict[str, dict[str, Delta]] = {}
    for label, g in cells[~reference].groupby("strategy", sort=False):
        rows = g.to_dict("records")
        out[label] = {}
        for m in metrics:
            if m not in cells.columns:
                continue
            pairs: dict[str, list[tuple[float, float]]] = {}
            of = 0
            for r in rows:
                k = tuple(str(r[c]) for c in KEY)
                b = own.get((*k, str(r["writer"]))) if str(r["writer"]) in writers else anywriter.get(k)
                if b is None or not _value(b.get(m)):
                    continue
                of += 1
                if _value(r.get(m)):
                    pairs.setdefault(k[0], []).append((float(b[m]), float(r[m])))
            of = max(of, _count_ref(ref, m, {str(r["writer"]) for r in rows} & writers))
            diff = paired_interval(pairs.values()) if pairs else None
            out[label][m] = Delta(m, diff, verdict(diff, higher(m)) if diff else NOT_MEASURABLE,
                                  sum(len(v) for v in pairs.values()), of)
    return out


def _count_ref(ref, metric: str, writers: set[str]) -> int:
    """The reference's cells with a value (under one of the strategy's writers, when it ran under them)."""
    cells = ref[ref["writer"].astype(str).isin(writers)] if writers else ref.drop_duplicates(list(KEY))
    return int(cells[metric].notna().sum()) if metric in cells.columns else 0


def _value(v: Any) -> bool:
    return v is not None and v == v and v != ""


def _signed(iv: Interval) -> str:
    if iv.high - iv.low < 1e-9:
        return f"{iv.mean:+.3f}"
    return f"{iv.mean:+.3f} [{iv.low:+.2f}, {iv.high:+.2f}]"


@dataclass(frozen=True)
class Call:
    """What the first screen says of one strategy on the cost-versus-knowledge front."""
    strategy: str
    kind: str          # ship / trade / floor / not worth / not comparable / fragile
    sentence: str


def calls(front: list[tuple[str, float, float]], floor: dict[str, dict[str, Delta]], worst: dict[str, list[str]],
          floor_names: set[str], harm: dict[str, str] | None = None) -> list[Call]:
    """One Call per strategy on the front (`front`: name, cost ×full, retention, cheapest first). `floor`: the
    Deltas against truncate; `worst`: per strategy the stress writers under which its retention falls below
    the floor's; `harm`: per strategy its worst change under a stress writer, said beside a candidate. Only a
    strategy better than the floor on retention, worse on no metric, paired on every one of the floor's cells
    and not below the floor under a stress writer is one to ship."""
    out = []
    for name, cost, known in front:
        d = floor.get(name, {})
        head = f"{name} (cost ×full {cost:.2f}, retention {known:.3f})"
        if name in floor_names:
            out.append(Call(name, "floor", f"{head} is the floor: it keeps no working context, so it is only as "
                                           "good as what still fits the window"))
            continue
        ret = d.get("retention")
        if ret is None or ret.diff is None:
            out.append(Call(name, "not comparable", f"{head}: no cell paired with the floor's, so not comparable"))
            continue
        if ret.partial:
            out.append(Call(name, "not comparable", f"{head} ran on {ret.paired} of the floor's {ret.of} cells: "
                                                    "not comparable (a strategy must face every session)"))
            continue
        if ret.verdict != "better":
            what = "knows less than" if ret.verdict == "worse" else "knows no more than"
            out.append(Call(name, "not worth", f"{head} {what} truncate ({_signed(ret.diff)} retention): not "
                                               "worth shipping, whatever it saves"))
            continue
        losses = [f"{label(m)} {_signed(x.diff)}" for m, x in d.items() if x.verdict == "worse" and m != "retention"]
        gain = f"+{ret.diff.mean:.3f} retention over truncate"
        stress = f"; its worst under a stress writer: {harm[base(name)]}" if harm and harm.get(base(name)) else ""
        if worst.get(name):
            out.append(Call(name, "fragile", f"{head}: {gain}, but under {', '.join(worst[name])} it falls below "
                                             "truncate: fragile to its writer's errors"))
        elif losses:
            out.append(Call(name, "trade", f"{head}: {gain}, at the price of being worse than truncate on "
                                           f"{', '.join(losses)}{stress}"))
        else:
            out.append(Call(name, "ship", f"{head}: {gain} and worse than truncate on no metric{stress}"))
    return out


def paragraph(found: list[Call]) -> str:
    """The computed "what to ship" paragraph: the call, then what each strategy on the front trades."""
    ship = [c for c in found if c.kind == "ship"]
    if not found:
        return ("What to ship: no call, because there is no cost-versus-knowledge front to read (cost ×full needs "
                "the oracle `full` in `strategies=`); the verdicts against truncate are below.")
    if ship:
        best = ship[-1]       # the front runs cheapest first: the last candidate knows the most
        lead = (f"What to ship: {best.strategy} knows the most of the strategies that beat truncate with no "
                "metric worse" + (f"; {', '.join(c.strategy for c in ship[:-1])} cost less and know less." if
                                  len(ship) > 1 else "."))
    else:
        lead = ("What to ship: no strategy on the front beats truncate on retention with no metric worse, on "
                "every session and under every stress writer; read the trades below before choosing.")
    return lead + " On the cost-versus-knowledge front, cheapest first: " + "; ".join(c.sentence for c in found) + "."


def label(metric: str) -> str:
    m = M.BY_COLUMN.get(metric)
    return m.label if m is not None else metric


__all__ = ["Delta", "Call", "versus", "calls", "paragraph", "FLOOR", "NOT_MEASURABLE", "base", "higher", "label"]
