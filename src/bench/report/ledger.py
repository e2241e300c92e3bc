"""The report's tokens-per-task section: each strategy's ledger (`bench.scoring.ledger`) and where it breaks even.

Savings alone favour forgetting and writer tokens alone favour doing nothing, so the section shows one bill:
the ledger's lines as means per cell, their total, and the request from which the savings over `full` stay
above the strategy's own costs ("never" when a cell compacted and never got there).
"""
from __future__ import annotations

from statistics import median
from typing import Any

from bench.report.render import Doc, Table
from bench.scoring.ledger import LINES, lines

TOTAL = "task_tokens"


def breakeven(cells: list[dict[str, Any]]) -> str:
    """The median break-even request over the cells that compacted, and how many never got there."""
    compacted = [c for c in cells if _num(c.get("compactions"))]
    if not compacted:
        return "—"
    got = [_num(c.get("breakeven_request")) for c in compacted if _num(c.get("breakeven_request"))]
    never = len(compacted) - len(got)
    if not got:
        return f"never ({never} of {len(compacted)})"
    return f"{median(got):g}" + (f"; never in {never} of {len(compacted)}" if never else "")


def table(scored) -> tuple[list[str], list[list[Any]]]:
    """One row per strategy (as labelled in the headline): the ledger's lines, the total and the break-even."""
    cols = ["strategy", *(label for label, *_ in LINES), "total", "break-even request"]
    body = []
    for strategy, group in scored.groupby("strategy", sort=False):
        cells = group.to_dict("records")
        ledgers = [lines(c) for c in cells]
        means = [round(sum(ln[k][1] for ln in ledgers) / len(cells)) for k in range(len(LINES))]
        total = round(sum(_num(c.get(TOTAL)) for c in cells) / len(cells))
        body.append([strategy, *means, total, breakeven(cells)])
    return cols, body


def section(doc: Doc, scored) -> None:
    if scored.empty or TOTAL not in scored.columns:
        return
    cols, body = table(scored)
    doc.h("Tokens per task")
    doc.table(Table(cols, body, "Each strategy's bill in tokens, means per cell: the agent's input (without the "
                                "cache writes a compaction caused, shown apart), its output, the writer's calls, and "
                                "what the agent then spent re-reading (re-fetch) and redoing in the rollouts from the "
                                "continuation points; the lines add up to the total. Break-even: the median request "
                                "from which the savings over `full` stay above these costs (\"never\": a cell that "
                                "compacted and never got there; — : no compaction)."))


def _num(v: Any) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if x != x else x


__all__ = ["section", "table", "breakeven"]
