"""The viewer's data: per cell, its requests as the log's deltas over a message table, every compaction,
and per agent request the verdict on each truth item in force.

Contexts are not written out request by request (a default run's contexts would be gigabytes): each
request keeps the log's delta — runs of the previous request's messages, and references to messages in a
table — and the page rebuilds the context it is asked for. The harness's renderings of a scenario's
events go in one table per scenario, shared by its cells. Verdicts come from `scoring.trace` (the
scorer's own `judged`), item marks on messages from `Judge.hits`, so the page shows what was scored.
Each blob is gzip-compressed JSON, unpacked by the page only when a cell is opened.
"""
from __future__ import annotations

import gzip
import json
from typing import Any

from bench.harness.logs import KEY_COLUMNS, read_jsonl
from bench.results.store import read_csv
from bench.report.data import _count, _text
from bench.report.writers import _calls, _number
from bench.results.trace import Run, RunCell, labels, shows, status
from bench.scoring.metrics import METRICS

# The verdicts an item can show: kept, partial or lost; for a lower-is-better metric its own word, or clean.
KINDS = ("agent", "compaction", "probe", "warm")   # what requests.jsonl's `kind` may say; anything else shows as "other"
STATUS = ["kept", "partial", "lost", *(m.verdict for m in METRICS if m.verdict), "clean"]


def pack(obj: Any) -> bytes:
    return gzip.compress(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), 9, mtime=0)


class Tables:
    """Message tables: one per scenario (the harness's renderings) and one per cell (everything else)."""

    def __init__(self, run: Run):
        self.run = run
        self.scenario: dict[str, dict[tuple, int]] = {}
        self.rows: dict[str, list[list[Any]]] = {}

    def ref(self, cell: RunCell, m: Any, verbatim: bool, own: dict[tuple, int], own_rows: list) -> int:
        """The message's index: >= 0 in the cell's table, < 0 (-1 - i) in the scenario's. A row is
        [role, tag, tokens, text, the "metric:item" keys the scorer finds in it]."""
        key = (m.id, m.hash)
        table, rows = (self.scenario.setdefault(cell.scenario, {}), self.rows.setdefault(cell.scenario, [])) \
            if verbatim else (own, own_rows)
        if key not in table:
            table[key] = len(rows)
            rows.append([m.role, m.tag, m.tokens, m.text, shows(self.run.judge(cell), m)])
        return -1 - table[key] if verbatim else table[key]


def cell_blob(run: Run, cell: RunCell, records: list[dict[str, Any]], compactions: list[dict[str, Any]],
              tables: Tables) -> dict[str, Any]:
    """One cell's page data (see the module docstring). A request is [i, kind, tokens, event or purpose,
    over the window, delta, verdict changes]; the changes map "metric:item" to [status, detail] for an
    item whose verdict differs from the previous agent request's, or to null once it is out of force."""
    own: dict[tuple, int] = {}
    own_rows: list[list[Any]] = []
    reqs: list[list[Any]] = []
    by_i: dict[int, int] = {}

    def seen(r: Any) -> None:
        seq, pos, out = r.record.get("seq") or [], 0, []
        for s in seq:
            if isinstance(s, list):
                out.append([_count(s[0]), _count(s[1])])
                pos += s[1] - s[0]
            else:
                m = r.messages[pos]
                out.append(tables.ref(cell, m, "text" not in s, own, own_rows))
                pos += 1
        by_i[r.i] = len(reqs)
        # a results folder is a shared artifact: every value from it is data of a known type, never markup
        reqs.append([_count(r.i), r.kind if r.kind in KINDS else "other", _count(r.tokens),
                     _text(r.record.get("event") or r.record.get("purpose") or ""),
                     1 if r.record.get("over") is True else 0, out, None])

    state: dict[str, tuple[int, str]] = {}
    for r, checks, _over in run.judged(cell, records, seen):
        now: dict[str, tuple[int, str]] = {}
        for c in checks:
            now[f"{c.metric}:{c.item}"] = (STATUS.index(status(c)), c.detail)
        change: dict[str, Any] = {k: list(v) for k, v in now.items() if state.get(k) != v}
        change.update({k: None for k in state if k not in now})
        reqs[by_i[r.i]][6] = change
        state = now
    comps = [{"n": _count(c.get("n")), "request": _count(c.get("request")), "ok": c.get("ok") is True,
              "before": _count(c.get("before")), "after": _count(c.get("after")), "text": _text(c.get("text")),
              "fallback": _text(c.get("fallback")), "error": _text(c.get("error")), "repairs": _count(c.get("repairs")),
              "latency_s": round(sum(_number(x.get("latency_s")) or 0.0 for x in _calls(c)), 3),
              "calls": len(_calls(c)),
              # why each writer call finished, and why the harness judged an answer no answer (bench.harness.answers)
              "finish": ", ".join(_text(x.get("finish")) for x in _calls(c) if x.get("finish")),
              "non_answer": next((_text(x["non_answer"]) for x in _calls(c) if x.get("non_answer")), "")}
             for c in compactions]
    return {"requests": reqs, "messages": own_rows, "compactions": comps}


def graded(run_dir: Any, wanted: set[str]) -> dict[str, dict[str, list]]:
    """Per cell, from checks.csv: the next action at each continuation point ([request, point, class, the
    actor's call, the scripted call, answerable]) and each structural fault ([request, kind, detail]), as
    the scorer wrote them, for the page to show beside the request."""
    out: dict[str, dict[str, list]] = {n: {"next": [], "faults": []} for n in wanted}
    for r in read_csv(run_dir / "checks.csv"):
        name = "/".join(r.get(k, "") for k in KEY_COLUMNS)
        if name not in out or r.get("metric") not in ("next_action", "fault"):
            continue
        req = int(r["request"]) if str(r.get("request", "")).isdigit() else None
        if r["metric"] == "fault":
            out[name]["faults"].append([req, r.get("item", ""), r.get("detail", "")])
            continue
        actor, _, scripted = (r.get("detail") or "").partition("; scripted: ")
        out[name]["next"].append([req, r.get("point", ""), r.get("item", ""), actor.removeprefix("actor: "), scripted,
                                  r.get("kind") == "answerable"])
    return out


def build(run: Run, chosen: list[RunCell]) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """(the cells' index, blobs by id): "c<N>" per cell, "s:<scenario>" per scenario table."""
    wanted = {c.name for c in chosen}
    records: dict[str, list[dict[str, Any]]] = {n: [] for n in wanted}
    for rec in read_jsonl(run.dir / "requests.jsonl"):
        if rec.get("cell") in wanted:
            records[rec["cell"]].append(rec)
    comps: dict[str, list[dict[str, Any]]] = {n: [] for n in wanted}
    for rec in read_jsonl(run.dir / "compactions.jsonl"):
        if rec.get("cell") in wanted:
            comps[rec["cell"]].append(rec)
    tables = Tables(run)
    index, blobs = [], {}
    marks = graded(run.dir, wanted)
    for n, cell in enumerate(chosen):
        if run.judge(cell) is None or not records[cell.name]:
            continue
        blob = cell_blob(run, cell, records[cell.name], comps[cell.name], tables)
        blob.update(marks.get(cell.name, {}))
        blobs[f"c{n}"] = pack(blob)
        index.append({"id": f"c{n}", "name": cell.name, "scenario": cell.scenario, "strategy": cell.strategy,
                      "writer": cell.writer, "window": cell.window, "oracle": cell.oracle,
                      "requests": sum(1 for r in blob["requests"] if r[1] == "agent"),
                      "compactions": sum(1 for c in blob["compactions"] if c["ok"]),
                      "failed": sum(1 for c in blob["compactions"] if not c["ok"])})
    for scenario, rows in tables.rows.items():
        blobs[f"s:{scenario}"] = pack({"messages": rows, "labels": labels(run.scenario(scenario)),
                                       "status": STATUS})
    return index, blobs
