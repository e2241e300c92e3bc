"""The viewer's data, read from a run's logs only: per cell its requests as the log's deltas over a message
table, every compaction, the scorer's verdict changes and message marks (verdicts.jsonl, the scorer's
trail), the next actions and faults (checks.csv); per scenario the text of the harness's renderings.

Nothing here scores, counts tokens or replays: token counts are the log's, verdicts and marks the
scorer's (`bench.scoring.trail`), and a verbatim message's text is the scenario event's rendering
(`render_text`), so writing a default run's view costs reading its files once. Contexts are not written
out request by request (a default run's would be gigabytes): a request keeps the log's delta, runs of the
previous request's messages and references into a table, and the page rebuilds the context it is asked for.
"""
from __future__ import annotations

from typing import Any, Iterable

from bench.harness.logs import KEY_COLUMNS, VERDICTS, read_jsonl
from bench.harness.messages import render_text
from bench.report.data import _count, _text
from bench.report.writers import _calls, _number
from bench.results.store import read_csv
from bench.results.trace import Run, RunCell, labels, verdict
from bench.scoring.metrics import METRICS

# The verdicts an item can show: kept, partial or lost; for a lower-is-better metric its own word, or clean.
KINDS = ("agent", "compaction", "probe", "warm")   # what requests.jsonl's `kind` may say; anything else shows as "other"
STATUS = ["kept", "partial", "lost", *(m.verdict for m in METRICS if m.verdict), "clean"]


class Tables:
    """Message tables: one per scenario (the harness's renderings, shared by its cells) and one per cell
    (what the strategy wrote). A row is [role, tag, tokens, text]; tokens are the log's."""

    def __init__(self, run: Run):
        self.run = run
        self.scenario: dict[str, dict[tuple, int]] = {}
        self.rows: dict[str, list[list[Any]]] = {}
        self.events: dict[str, dict[str, Any]] = {}

    def ref(self, cell: RunCell, s: dict[str, Any], own: dict[tuple, int], own_rows: list) -> int:
        """The logged message's index: >= 0 in the cell's table, < 0 (-1 - i) in the scenario's."""
        verbatim = "text" not in s
        key = (s.get("id"), s.get("h"), s.get("n"))
        if not (type(key[0]) is str and type(key[1]) is str and type(key[2]) is int):   # a damaged log
            key = (_text(key[0]), _text(key[1]), _count(key[2]))
        table, rows = (self.scenario.setdefault(cell.scenario, {}), self.rows.setdefault(cell.scenario, [])) \
            if verbatim else (own, own_rows)
        at = table.get(key)
        if at is None:
            at = table[key] = len(rows)
            text = self.rendered(cell, key[0]) if verbatim else _text(s.get("text"))
            rows.append([_text(s.get("role")), _text(s.get("tag")), max(0, key[2]), text])
        return -1 - at if verbatim else at

    def rendered(self, cell: RunCell, event: str) -> str:
        scenario = self.run.scenario(cell.scenario)
        if scenario is None:
            return ""
        if event == "system":
            return scenario.system
        if cell.scenario not in self.events:
            self.events[cell.scenario] = {e.id: e for e in scenario.events}
        e = self.events[cell.scenario].get(event)
        return render_text(e, scenario.user, self.run.marked(cell)) if e is not None else \
            f"(event {event} is not in {cell.scenario}: the scenario changed since the run)"


def cell_blob(cell: RunCell, records: list[dict[str, Any]], compactions: list[dict[str, Any]],
              trail: list[dict[str, Any]], tables: Tables) -> dict[str, Any]:
    """One cell's page data (see the module docstring). A request is [i, kind, tokens, event or purpose,
    over the window, delta, verdict changes]; the changes map "metric:item" to [status, detail] for an
    item whose verdict differs from the previous agent request's, or to null once it is out of force.
    `marks` maps a message's reference to the items the scorer found in it."""
    own: dict[tuple, int] = {}
    own_rows: list[list[Any]] = []
    reqs: list[list[Any]] = []
    by_i: dict[int, int] = {}
    marks: dict[str, list[str]] = {}
    logged = next((t.get("marks") for t in trail if isinstance(t.get("marks"), dict)), {})
    for rec in records:
        out = []
        for s in rec.get("seq") or []:
            if type(s) is list and len(s) == 2:
                out.append(s if type(s[0]) is int and type(s[1]) is int and 0 <= s[0] <= s[1] else
                           [_count(s[0]), _count(s[1])])
            elif type(s) is dict:
                ref = tables.ref(cell, s, own, own_rows)
                out.append(ref)
                found = logged.get(f"{_text(s.get('id'))}:{_text(s.get('h'))}")
                if isinstance(found, list) and found:
                    marks[str(ref)] = [_text(k) for k in found]
        i, tokens = rec.get("i"), rec.get("tokens")
        i = i if type(i) is int and i >= 0 else _count(i)
        by_i[i] = len(reqs)
        # a results folder is a shared artifact: every value from it is data of a known type, never markup
        reqs.append([i, rec.get("kind") if rec.get("kind") in KINDS else "other",
                     tokens if type(tokens) is int and tokens >= 0 else _count(tokens),
                     _text(rec.get("event") or rec.get("purpose") or ""), 1 if rec.get("over") is True else 0, out,
                     None])
    for t in trail:
        k = by_i.get(_count(t.get("i"))) if "i" in t else None
        if k is None:
            continue
        change: dict[str, Any] = {}
        for key, v in (t.get("set") or {}).items() if isinstance(t.get("set"), dict) else ():
            score = _number(v[0]) if isinstance(v, list) and v else None
            if score is not None:
                change[_text(key)] = [STATUS.index(verdict(_text(key).partition(":")[0], score)),
                                      _text(v[1]) if len(v) > 1 else ""]
        change.update({_text(key): None for key in t.get("gone") or () if isinstance(t.get("gone"), list)})
        reqs[k][6] = {**(reqs[k][6] or {}), **change}
    comps = [compaction(c) for c in compactions]
    return {"requests": reqs, "messages": own_rows, "marks": marks, "compactions": comps,
            "scored": bool(trail)}


def compaction(c: dict[str, Any]) -> dict[str, Any]:
    """A compactions.jsonl record as the page shows it, every field of its known type."""
    calls = _calls(c)
    return {"n": _count(c.get("n")), "request": _count(c.get("request")), "ok": c.get("ok") is True,
            "before": _count(c.get("before")), "after": _count(c.get("after")), "text": _text(c.get("text")),
            "fallback": _text(c.get("fallback")), "error": _text(c.get("error")), "repairs": _count(c.get("repairs")),
            "latency_s": round(sum(_number(x.get("latency_s")) or 0.0 for x in calls), 3), "calls": len(calls),
            # why each writer call finished, and why the harness judged an answer no answer (bench.harness.answers)
            "finish": ", ".join(_text(x.get("finish")) for x in calls if x.get("finish")),
            "non_answer": next((_text(x["non_answer"]) for x in calls if x.get("non_answer")), "")}


def graded(rows: Iterable[dict[str, str]], wanted: set[str]) -> dict[str, dict[str, list]]:
    """Per cell, from checks.csv: the next action at each continuation point ([request, point, class, the
    actor's call, the scripted call, answerable]) and each structural fault ([request, kind, detail]), as
    the scorer wrote them, for the page to show beside the request."""
    out: dict[str, dict[str, list]] = {n: {"next": [], "faults": []} for n in wanted}
    for r in rows:
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


def by_cell(path: Any, wanted: set[str]) -> dict[str, list[dict[str, Any]]]:
    """A per-cell log's records of the wanted cells, each cell's in order."""
    out: dict[str, list[dict[str, Any]]] = {n: [] for n in wanted}
    for rec in read_jsonl(path):
        if rec.get("cell") in out:
            out[rec["cell"]].append(rec)
    return out


def build(run: Run, chosen: list[RunCell]) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    """(the data file id of each cell that has one, by cell name; the files' data by id): "c<N>" per
    cell, "s<N>" per scenario table."""
    wanted = {c.name for c in chosen}
    records = by_cell(run.dir / "requests.jsonl", wanted)
    comps = by_cell(run.dir / "compactions.jsonl", wanted)
    trails = by_cell(run.dir / VERDICTS, wanted)
    marks = graded(read_csv(run.dir / "checks.csv"), wanted)
    tables = Tables(run)
    ids: dict[str, str] = {}
    files: dict[str, dict[str, Any]] = {}
    for n, cell in enumerate(chosen):
        if not records[cell.name]:
            continue
        blob = cell_blob(cell, records[cell.name], comps[cell.name], trails[cell.name], tables)
        blob.update(marks.get(cell.name, {}))
        ids[cell.name] = f"c{n}"
        files[f"c{n}"] = blob
    scen_ids = {s: f"s{k}" for k, s in enumerate(tables.rows)}
    for cell in chosen:
        if cell.name in ids:
            files[ids[cell.name]]["table"] = scen_ids.get(cell.scenario, "")
    for scenario, rows in tables.rows.items():
        found = run.scenario(scenario)
        files[scen_ids[scenario]] = {"messages": rows, "labels": labels(found) if found else {}, "status": STATUS}
    return ids, files
