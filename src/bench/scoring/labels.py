"""A labelled reading corpus: one careful reader's verdict per line, in the format anyone can bring.

Each line of a labels file (JSON Lines) names a scenario, an agent event (`at`), the context the model
would see at that agent request (system prompt excluded), one truth item, one metric, and a reader's
answer (`label` 1 or 0) with a `note` saying why. The scorer is measured against these lines like any
instrument against a reference (`bench.scoring.calibrate`), so the file is read strictly: a line that
does not say exactly what it means is bad input, one problem per line (`FILE:LINE: key: message`),
never a guess. A relative `scenario` path is read against the labels file's folder, so a corpus
travels with the scenarios it points at.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.errors import BadInput
from bench.parsing import json_objects
from bench.scenarios.loader import load
from bench.scenarios.model import Scenario

KEYS = ("id", "scenario", "at", "context", "item", "metric", "label", "note")
ENTRY_KEYS = ("role", "tag", "text")
ROLES = ("user", "assistant", "tool")
# A label's metric and the name the scorer gives it in checks.csv.
METRICS = {"goal": "goal", "constraint": "constraint", "fact": "fact", "decision": "decision",
           "leakage": "leakage", "stale": "stale_constraint", "revived": "rejected_back"}


@dataclass(frozen=True)
class Entry:
    role: str
    tag: str
    text: str


@dataclass(frozen=True)
class Label:
    id: str
    scenario: Scenario
    at: str
    context: tuple[Entry, ...]
    item: str
    metric: str
    label: int
    note: str
    line: int


def read_labels(path: str | Path) -> list[Label]:
    """Every line of a labels file, checked; BadInput with one line per problem otherwise (a line that is
    not a JSON object, a missing, unknown or mistyped key, a scenario that does not load, an `at` that is
    not an assistant event, an item that is not of the metric's kind or not in force at `at`)."""
    path = Path(path)
    rows, problems = json_objects(path)
    out: list[Label] = []
    scenarios: dict[Path, Scenario | list[str]] = {}
    ids: dict[str, int] = {}
    for n, where, row in rows:
        here = _fields(row, where)
        if here:
            problems.extend(here)
            continue
        if row["id"] in ids:
            problems.append(f"{where}: id: '{row['id']}' is also the id of line {ids[row['id']]}")
            continue
        ids[row["id"]] = n
        file = (path.parent / row["scenario"]) if not Path(row["scenario"]).is_absolute() else Path(row["scenario"])
        file = file.resolve()
        if file not in scenarios:
            try:
                scenarios[file] = load(file)
            except BadInput as exc:
                scenarios[file] = exc.problems
            except OSError as exc:
                scenarios[file] = [str(exc)]
        sc = scenarios[file]
        if isinstance(sc, list):
            problems.append(f"{where}: scenario: {row['scenario']} does not load ({sc[0] if sc else 'no file'})")
            continue
        here = _in_force(sc, row, where)
        if here:
            problems.extend(here)
            continue
        out.append(Label(row["id"], sc, row["at"], tuple(Entry(**e) for e in row["context"]), row["item"],
                         row["metric"], row["label"], row["note"], n))
    if problems:
        raise BadInput(problems)
    if not out:
        raise BadInput(f"{path}: no labels")
    return out


def _fields(row: dict[str, Any], where: str) -> list[str]:
    out = [f"{where}: {k}: missing" for k in KEYS if k not in row]
    out += [f"{where}: {k}: unknown key (a label has exactly {', '.join(KEYS)})" for k in row if k not in KEYS]
    for k in ("id", "scenario", "at", "item", "note"):
        if k in row and not (isinstance(row[k], str) and (row[k].strip() or k == "note")):
            out.append(f"{where}: {k}: must be a non-empty string")
    if "metric" in row and row["metric"] not in METRICS:
        out.append(f"{where}: metric: '{row['metric']}' is not one of {', '.join(METRICS)}")
    if "label" in row and (isinstance(row["label"], bool) or row["label"] not in (0, 1)):
        out.append(f"{where}: label: must be 1 or 0")
    if "context" in row:
        ctx = row["context"]
        if not isinstance(ctx, list) or not ctx:
            out.append(f"{where}: context: must be a non-empty list of messages")
        else:
            for i, e in enumerate(ctx):
                if not (isinstance(e, dict) and set(e) == set(ENTRY_KEYS)):
                    out.append(f"{where}: context[{i}]: must hold exactly {', '.join(ENTRY_KEYS)}")
                elif e["role"] not in ROLES:
                    out.append(f"{where}: context[{i}].role: '{e['role']}' is not one of {', '.join(ROLES)}")
                elif not (isinstance(e["tag"], str) and e["tag"].strip() and isinstance(e["text"], str)):
                    out.append(f"{where}: context[{i}]: tag must be a non-empty string and text a string")
    return out


def _in_force(sc: Scenario, row: dict[str, Any], where: str) -> list[str]:
    """The item exists with the metric's kind and the metric applies to it at `at` (DESIGN §2's truth in
    force: an item counts once its event is before `at`)."""
    pos = sc.index()
    at = pos.get(row["at"])
    if at is None or sc.events[at].role != "assistant":
        return [f"{where}: at: '{row['at']}' is not an assistant event of {sc.id}"]
    before = lambda e: e is not None and e in pos and pos[e] < at   # noqa: E731
    t, item, metric = sc.truth, row["item"], row["metric"]
    bad = lambda why: [f"{where}: item: '{item}' {why}"]   # noqa: E731
    if metric == "goal":
        found = {m.id: m for m in t.mission}.get(item) or {w.id: w for w in t.workstreams}.get(item)
        if found is None:
            return bad(f"is not a mission or workstream of {sc.id}")
        if not before(found.from_):
            return bad(f"is not in force at {row['at']}")
        if getattr(found, "until", None) and before(found.until):
            return bad(f"has ended by {row['at']}")
        if hasattr(found, "items") and all(before(it.done) for it in found.items):
            return bad(f"is finished by {row['at']} (no next item to score)")
    elif metric in ("constraint", "stale"):
        c = {c.id: c for c in t.constraints}.get(item)
        if c is None:
            return bad(f"is not a constraint of {sc.id}")
        ends = [x.from_ for x in t.constraints if x.replaces == item] + ([c.until] if c.until else [])
        ended = any(before(e) for e in ends)
        if not before(c.from_):
            return bad(f"is not in force at {row['at']}")
        if metric == "constraint" and ended:
            return bad(f"has ended by {row['at']} (a stale label, not a constraint one)")
        if metric == "stale" and not ended:
            return bad(f"has not ended by {row['at']} (stale asks about an ended rule)")
    elif metric == "fact":
        f = {f.id: f for f in t.facts}.get(item)
        if f is None:
            return bad(f"is not a fact of {sc.id}")
        if not before(f.from_):
            return bad(f"is not in force at {row['at']}")
    elif metric in ("decision", "revived"):
        d = {d.id: d for d in t.decisions}.get(item)
        if d is None:
            return bad(f"is not a decision of {sc.id}")
        if not before(d.from_):
            return bad(f"is not in force at {row['at']}")
        if metric == "revived" and not d.rejected:
            return bad("has no rejected options")
    elif metric == "leakage":
        i = {i.id: i for i in t.injections}.get(item)
        if i is None:
            return bad(f"is not an injection of {sc.id}")
        if not before(i.event):
            return bad(f"is not yet seen at {row['at']}")
    return []


__all__ = ["Label", "Entry", "read_labels", "KEYS", "METRICS"]
