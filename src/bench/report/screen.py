"""The report's first section, "What to ship": the computed call, each strategy against truncate and against
the oracle with paired intervals and verdicts, cost against knowledge with its Pareto front, and robustness
beside them (bench.report.decide has the rules). It reads the same headline cells as every table below it,
so the first screen and the details never disagree; with several writers every row is `strategy · writer`.
"""
from __future__ import annotations

from typing import Any, Callable

from bench.report import data, figures, headline
from bench.report import decide as D
from bench.report.render import Doc, Mark, Table

STRESS_HOW = ("Robustness was not measured in this run: no stress writer ran. Run the strategies that call a "
              "writer under the offline writer's stress profiles too (`compaction-bench run stress=[realistic]`, "
              "the default; more profiles in docs/models.md) to see which design collapses when its writer errs.")


def metrics(scored) -> list[str]:
    """Retention (goal, constraints, facts), then every headline score the cells hold, in the registry's order."""
    return ["retention", *[c for c, _, _ in headline.METRICS if c in scored.columns and scored[c].notna().any()]]


def short(x: float) -> str:
    """A signed difference in as few characters as a table cell needs: +.41, -16.2."""
    if abs(x) < 0.0005:
        return "0"
    text = f"{x:+.2f}" if abs(x) < 1 else f"{x:+.3g}" if abs(x) < 100 else f"{x:+.0f}"
    return text.replace("+0.", "+.").replace("-0.", "-.")


def mark(d: D.Delta | None) -> Mark:
    if d is None or d.diff is None:
        return Mark(D.NOT_MEASURABLE, D.NOT_MEASURABLE)
    iv = d.diff
    sub = "" if iv.high - iv.low < 1e-9 else f"{short(iv.low)} … {short(iv.high)}"
    if d.partial:
        sub = f"{sub}; {d.paired} of {d.of} cells".strip("; ")
    return Mark(short(iv.mean), d.verdict, sub)


def table(t, deltas: dict[str, dict[str, D.Delta]], cols: list[str], note: str, ident: str,
          beside: tuple[list[str], dict[str, list[Any]]] = ([], {}),
          ceiling: dict[str, dict[str, D.Delta]] | None = None) -> Table:
    """One row per strategy (its cells count is the headline's; a partial pairing says so in its cell), a
    verdict cell per metric, then `ceiling`'s retention (the gap to the oracle, so the first screen holds
    both ends), then `beside`: (headers, per strategy its cells), the robustness columns."""
    top = ["retention vs full"] if ceiling else []
    header = ["strategy", "cost ×full", *[D.label(m) for m in cols], *top, *beside[0]]
    body = []
    for r in t.to_dict("records"):
        if r["strategy"] not in deltas:
            continue
        gap = [mark(ceiling.get(r["strategy"], {}).get("retention"))] if ceiling else []
        extra = beside[1].get(D.base(r["strategy"]), [Mark("calls no writer", "calls no writer")] * len(beside[0]))
        body.append([r["strategy"], r.get("cost_vs_full"), *[mark(deltas[r["strategy"]].get(m)) for m in cols],
                     *gap, *extra])
    return Table(header, [[None if v != v else v for v in row] for row in body], note, id=ident)


def fragile(summary, scored) -> tuple[dict[str, list[str]], Any]:
    """(per headline row label, the stress writers under which its retention is worse than truncate's on the
    same sessions, paired; the robustness rows with each strategy's worst harm per stress writer)."""
    cells = summary[~D.is_oracle(summary)]
    stress = cells[data.stressed(cells)]
    if stress.empty:
        return {}, None
    floor = cells[(cells["strategy"].map(D.base) == D.FLOOR) & ~data.stressed(cells)]
    import pandas as pd

    joined = pd.concat([data.per_writer(stress, 2), floor], ignore_index=True)
    vs = D.versus(joined, (joined["strategy"].map(D.base) == D.FLOOR) & ~data.stressed(joined), ["retention"])
    out: dict[str, list[str]] = {}
    labels = set(scored["strategy"])
    for label, d in vs.items():
        name, writer = label.split(data.SEP, 1)
        if d["retention"].verdict == "worse":
            for row in labels:          # the headline rows of this strategy (every writer compared)
                if D.base(row) == name:
                    out.setdefault(row, []).append(f"`{writer}`")
    rob = data.robustness(cells, [c for c, _, _ in headline.METRICS if c in cells.columns])
    return out, rob


def robustness(rob, below: dict[str, list[str]]) -> tuple[list[str], dict[str, list[Any]]]:
    """Each strategy's worst drop under each stress writer, as columns beside its verdicts: (headers, per
    strategy its cells)."""
    if rob is None or rob.empty:
        return [], {}
    writers = sorted(set(rob["writer"].astype(str)))
    rows: dict[str, list[Any]] = {}
    for strategy, g in rob.groupby("strategy", sort=True):
        by = {str(r["writer"]): r for r in g.to_dict("records")}
        row: list[Any] = rows.setdefault(strategy, [])
        for w in writers:
            worst = data.worst_harm(by[w], headline.METRICS) if w in by else None
            if worst is None:
                row.append(None)
                continue
            harm, name, change = worst
            fell = any(f"`{w}`" in v for k, v in below.items() if D.base(k) == strategy)
            row.append(Mark(f"{name} {short(change)}" if harm > headline.EQUAL else "loses nothing",
                            "worse" if harm > headline.EQUAL else "tied", "below truncate" if fell else ""))
    return [f"worst under {w}" for w in writers], rows


ROBUST_NOTE = (" The last column (one per stress writer; only strategies that call a writer run under one): the strategy's largest harm when the offline writer is made "
               "to err the way LLM writers do (a stand-in, not an LLM), its worst metric's change against the same "
               "strategy with `offline` on the same sessions; \"below truncate\" when its retention there is worse "
               "than truncate's, paired. The robustness section below has every metric.")


def worst_text(rob) -> dict[str, str]:
    """Per strategy, its largest harm over every stress writer (`offline:realistic`: constraints -0.521)."""
    out: dict[str, tuple[float, str]] = {}
    for r in ([] if rob is None or rob.empty else rob.to_dict("records")):
        worst = data.worst_harm(r, headline.METRICS)
        if worst is not None and worst[0] > headline.EQUAL and worst[0] > out.get(r["strategy"], (0.0, ""))[0]:
            out[r["strategy"]] = (worst[0], f"{worst[1]} {worst[2]:+.3f} under `{r['writer']}`")
    return {k: v for k, (_, v) in out.items()}


def reading(points, front) -> str:
    on = " → ".join(f"{D.base(n)} ({c:.2f}, {k:.3f})" for n, c, k in front)
    behind = [n for n, _, _, o in points if not o]
    text = f"The front, cheapest first (cost ×full, retention): {on}"
    if behind:
        text += (f"; {len(behind)} other strateg{'y is' if len(behind) == 1 else 'ies are'} dearer than one on it "
                 "for no more knowledge")
    return text + "."


def section(doc: Doc, summary, scored, t, paint: Callable[..., Any], colours) -> None:
    """The first screen. `summary`: every cell (stress writers included), labelled; `scored`: the headline cells
    (one row label per strategy, or strategy · writer); `t`: headline.table(scored)."""
    doc.h("What to ship")
    if t.empty or scored.empty:
        doc.p("What to ship: no call, because no cell is in the headline (every session fits the window, so no "
              "strategy needed to compact); the cells are listed below.")
        return
    cols = metrics(scored)
    oracle = D.is_oracle(scored)
    floor_mask = (scored["strategy"].map(D.base) == D.FLOOR) & ~oracle
    vs_floor = D.versus(scored[~oracle], floor_mask[~oracle], cols) if floor_mask.any() else {}
    vs_full = D.versus(scored, oracle, cols) if oracle.any() else {}
    below, rob = fragile(summary, scored)
    pts = headline.pareto(t, "cost_vs_full", True)
    front = [(n, p, k) for n, p, k, over in pts if not over]
    floors = {n for n in t["strategy"] if D.base(n) == D.FLOOR}
    doc.side(True)
    if vs_floor:
        doc.p(D.paragraph(D.calls(front, vs_floor, below, floors, worst_text(rob))))
    else:
        doc.p("What to ship: this run has no `truncate` cells, so no strategy can be measured against the floor "
              "(add `truncate` to `strategies=`).")
    if pts:
        points = [(n, p, k, not over) for n, p, k, over in pts]
        top = next((r for r in t.to_dict("records") if "(oracle)" in str(r["strategy"]) and
                    r.get("cost_vs_full") == r.get("cost_vs_full") and r.get("retention") == r.get("retention")), None)
        doc.figure(paint(figures.front, points, "Cost against knowledge: one marker per strategy, its mean cost "
                                                "relative to `full` on the same sessions against its mean retention; "
                                                "the dashed step is the Pareto front (outlined markers: nothing is "
                                                "both cheaper and knows more).", colours,
                         (top["strategy"], top["cost_vs_full"], top["retention"]) if top else None),
                   reading(points, front))
    doc.side(False)
    several = " One row per strategy · writer: the writers' cells are never pooled." if \
        scored["writer"].nunique() > 1 else ""
    beside = robustness(rob, below)
    if vs_floor:
        doc.table(table(t, vs_floor, cols, "Each strategy against `truncate` (the floor: it keeps no working context), "
                        "paired by scenario, window, seed and writer on the headline cells: the mean difference "
                        "(strategy minus truncate) and its 95% interval (bootstrap over scenarios, "
                        "bench/results/stats.py). ▲ better / ▼ worse when the whole interval is on one side of 0 "
                        "(for leakage, stale, revived and structural faults, lower is better), = tied otherwise; "
                        "\"n of N cells\" when the strategy did not face every session the floor did. "
                        "\"retention vs full\": the same against the oracle (the ceiling; every metric against it "
                        "is in the table below)."
                        + several + (ROBUST_NOTE if beside[0] else ""), "versus-floor", beside, vs_full or None))
    if not beside[0]:
        doc.p(STRESS_HOW if not data.stressed(summary).any() else
              "Robustness was not measured in this run: its stress writers ran without `offline` cells of the same "
              "strategies and sessions to measure their drop from (add `offline` to `writer.model`).")
    if vs_full:
        doc.table(table(t, vs_full, cols, "Each strategy against the oracle `full` (the ceiling: it holds every "
                        "event and ignores the window), paired the same way: how much is left to gain. \"not "
                        "measurable here\": the oracle itself does not score the metric on these sessions (or no "
                        "probe was answerable), so no number is given." + several, "versus-oracle"))
