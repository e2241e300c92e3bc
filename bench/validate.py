"""Scenario validation (DESIGN §2): every problem in a file, each tied to its key path.

`check` turns parsed data into a Scenario or a list of (key path, problem);
`bench.loader` adds the file name and line numbers when it reports them.
"""
from __future__ import annotations

import math
import re
from typing import Any

from .scenario import (CONSTRAINT_KINDS, FORMAT_VERSION, PACING, PROBE_KINDS, ROLES, SOURCES, Call,
                       Constraint, Decision, Event, Fact, Injection, Item, Mission, Probe, Scenario,
                       Truth, Workstream)
from .text import normalize  # re-exported by bench.loader

ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")

Path_ = tuple  # a key path such as ("events", 3, "t")


# ---------------------------------------------------------------- checking


class _Check:
    """Collects problems with the key path they belong to."""

    def __init__(self) -> None:
        self.problems: list[tuple[Path_, str]] = []
        self.event_ids: list[Any] = []

    def add(self, path: Path_, msg: str) -> None:
        self.problems.append((path, msg))

    def mapping(self, value: Any, path: Path_, required: dict, optional: dict) -> dict | None:
        if not isinstance(value, dict):
            self.add(path, f"must be a mapping, got {_kind(value)}")
            return None
        for key in value:
            if key not in required and key not in optional:
                known = ", ".join(sorted(list(required) + list(optional)))
                self.add(path + (key,), f"unknown key '{key}' (allowed: {known})")
        out = {}
        for key, typ in required.items():
            if key not in value:
                self.add(path, f"missing required key '{key}'")
            elif self.typed(value[key], path + (key,), typ):
                out[key] = value[key]
        for key, typ in optional.items():
            if key in value and value[key] is not None and self.typed(value[key], path + (key,), typ):
                out[key] = value[key]
        return out

    def typed(self, value: Any, path: Path_, typ: Any) -> bool:
        ok = _is(value, typ)
        if not ok:
            self.add(path, f"must be {_name(typ)}, got {_kind(value)}")
        return ok

    def display(self, path: Path_) -> str:
        parts: list[str] = []
        for i, key in enumerate(path):
            if isinstance(key, int):
                if path[:i] == ("events",) and key < len(self.event_ids) and isinstance(self.event_ids[key], str):
                    parts.append("." + self.event_ids[key])
                else:
                    parts.append(f"[{key}]")
            else:
                parts.append(("." if parts else "") + str(key))
        return "".join(parts) or "(top level)"


def _is(value: Any, typ: Any) -> bool:
    if typ == "str":
        return isinstance(value, str)
    if typ == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if typ == "num":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if typ == "strs":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if typ == "list":
        return isinstance(value, list)
    if typ == "map":
        return isinstance(value, dict)
    if typ == "bool":
        return isinstance(value, bool)
    raise AssertionError(typ)


def _name(typ: str) -> str:
    return {"str": "a string", "int": "an integer", "num": "a number", "strs": "a list of strings",
            "list": "a list", "map": "a mapping", "bool": "true or false"}[typ]


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number"}.get(type(value), type(value).__name__)


TOP_REQUIRED = {"scenario": "int", "id": "str", "window": "int", "system": "str", "events": "list"}
TOP_OPTIONAL = {"title": "str", "user": "str", "tags": "strs", "truth": "map", "probes": "list"}
EVENT_REQUIRED = {"id": "str", "role": "str"}
EVENT_OPTIONAL = {"text": "str", "t": "num", "calls": "list", "call": "str", "source": "str", "skill": "str"}
TRUTH_SHAPES = {
    "mission": ({"id": "str", "from": "str", "text": "str"}, {"keys": "strs", "until": "str"}),
    "workstreams": ({"id": "str", "from": "str", "title": "str"}, {"items": "list"}),
    "constraints": ({"id": "str", "from": "str", "kind": "str", "quote": "str"},
                    {"keys": "strs", "replaces": "str", "until": "str"}),
    "injections": ({"id": "str", "event": "str", "payload": "strs"}, {"alternatives": "list"}),
    "facts": ({"id": "str", "from": "str", "keys": "strs"}, {}),
    "decisions": ({"id": "str", "from": "str", "keys": "strs"}, {"rejected": "strs"}),
}
PROBE_REQUIRED = {"id": "str", "at": "str", "kind": "str", "ask": "str"}
PROBE_OPTIONAL = {"expect": "strs", "reject": "strs", "rubric": "str"}


def _events(ck: _Check, raw: list) -> list[Event]:
    events: list[Event] = []
    seen: dict[str, int] = {}
    calls: dict[str, tuple[int, Call]] = {}  # call id -> (event position, call)
    results: dict[str, list[str]] = {}
    t_prev: float | None = None
    ck.event_ids = [e.get("id") if isinstance(e, dict) else None for e in raw]
    for i, item in enumerate(raw):
        path = ("events", i)
        ev = ck.mapping(item, path, EVENT_REQUIRED, EVENT_OPTIONAL)
        if ev is None or "id" not in ev or "role" not in ev:
            continue
        eid, role = ev["id"], ev["role"]
        if not ID_RE.match(eid):
            ck.add(path + ("id",), f"id '{eid}' must match [a-z0-9-]+")
        if eid in seen:
            ck.add(path + ("id",), f"duplicate event id '{eid}' (first at events[{seen[eid]}])")
        seen.setdefault(eid, i)
        if role not in ROLES:
            ck.add(path + ("role",), f"unknown role '{role}' (allowed: {', '.join(ROLES)})")
            continue
        text = ev.get("text")
        if text is None and not (role == "assistant" and ev.get("calls")):
            ck.add(path, "missing required key 'text'")
        # role-specific keys
        for key, owner in (("calls", "assistant"), ("call", "tool"), ("source", "background")):
            if key in ev and role != owner:
                ck.add(path + (key,), f"'{key}' is only allowed on {owner} events")
        source = ev.get("source")
        if role == "background":
            if source is None:
                ck.add(path, f"background event needs 'source' ({', '.join(SOURCES)})")
            elif source not in SOURCES:
                ck.add(path + ("source",), f"unknown background source '{source}' (allowed: {', '.join(SOURCES)})")
        event_calls: list[Call] = []
        if role == "assistant":
            for j, c in enumerate(ev.get("calls") or []):
                cp = path + ("calls", j)
                cm = ck.mapping(c, cp, {"id": "str", "tool": "str"}, {"args": "map"})
                if cm is None or "id" not in cm or "tool" not in cm:
                    continue
                if cm["id"] in calls:
                    ck.add(cp + ("id",), f"duplicate call id '{cm['id']}'")
                    continue
                if not _json_safe(cm.get("args") or {}):
                    ck.add(cp + ("args",), "args must be plain JSON (string keys; strings, numbers, booleans, "
                                           "lists, mappings; quote dates and times)")
                call = Call(cm["id"], cm["tool"], dict(cm.get("args") or {}))
                calls[call.id] = (i, call)
                event_calls.append(call)
        call_ref = ev.get("call")
        if role == "tool":
            if call_ref is None:
                ck.add(path, "tool event needs 'call' (the id of an earlier call)")
            elif call_ref not in calls:
                ck.add(path + ("call",), f"result for unknown call '{call_ref}' (no earlier assistant call has this id)")
            else:
                results.setdefault(call_ref, []).append(eid)
                if len(results[call_ref]) == 2:
                    ck.add(path + ("call",), f"call '{call_ref}' already has a result ({results[call_ref][0]})")
        t = ev.get("t")
        if t is not None and not math.isfinite(t):
            ck.add(path + ("t",), f"t must be a finite number, got {t}")
            t = None
        if t is not None and t < 0:
            ck.add(path + ("t",), f"t must not be negative, got {t}")
        if t is None:
            t = (t_prev or 0.0) + (PACING[role] if t_prev is not None else 0.0)
        elif t_prev is not None and t < t_prev:
            ck.add(path + ("t",), f"t decreases from {t_prev:g} to {t:g}")
        t_prev = max(t, t_prev if t_prev is not None else t)
        events.append(Event(eid, role, text or "", float(t), tuple(event_calls), call_ref,
                            source, ev.get("skill")))
    for cid, (pos, _call) in calls.items():
        if cid not in results:
            ck.add(("events", pos, "calls"), f"call '{cid}' has no result")
    return events


def _truth(ck: _Check, raw: dict, events: list[Event]) -> Truth:
    by_id = {e.id: e for e in events}
    out: dict[str, list] = {k: [] for k in TRUTH_SHAPES}
    ids: dict[str, Path_] = {}
    for key in raw:
        if key not in TRUTH_SHAPES:
            ck.add(("truth", key), f"unknown key '{key}' (allowed: {', '.join(TRUTH_SHAPES)})")
    for section, (req, opt) in TRUTH_SHAPES.items():
        items = raw.get(section)
        if items is None:
            continue
        if not ck.typed(items, ("truth", section), "list"):
            continue
        for i, item in enumerate(items):
            path = ("truth", section, i)
            m = ck.mapping(item, path, req, opt)
            if m is None or "id" not in m:
                continue
            if m["id"] in ids:
                ck.add(path + ("id",), f"duplicate truth id '{m['id']}'")
            ids.setdefault(m["id"], path)
            for ref in ("from", "until", "event"):
                if ref in m and m[ref] not in by_id:
                    ck.add(path + (ref,), f"unknown event '{m[ref]}'")
            for key in ("quote", "text", "title"):
                if key in m and not m[key].strip():
                    ck.add(path + (key,), f"{key} must not be blank")
            for key in ("keys", "payload", "rejected"):
                if key in m and any(not k.strip() for k in m[key]):
                    ck.add(path + (key,), f"{key} must not contain blank entries")
            if section in ("facts", "decisions") and not m.get("keys") or section == "injections" and not m.get("payload"):
                what = "payload" if section == "injections" else "keys"
                ck.add(path, f"needs at least one entry in '{what}', or it can never be lost")
            out[section].append((path, m))
    # cross checks that need the whole section
    for path, m in out["constraints"]:
        if m.get("kind") is not None and m["kind"] not in CONSTRAINT_KINDS:
            ck.add(path + ("kind",), f"unknown constraint kind '{m['kind']}' (allowed: {', '.join(CONSTRAINT_KINDS)})")
        src = by_id.get(m.get("from"))
        if src is not None and "quote" in m and normalize(m["quote"]) not in normalize(src.text):
            ck.add(path + ("quote",), f"quote is not a substring of event {src.id}'s text")
    constraint_ids = {m["id"] for _, m in out["constraints"]}
    for path, m in out["constraints"]:
        if "replaces" in m and m["replaces"] not in constraint_ids:
            ck.add(path + ("replaces",), f"unknown constraint '{m['replaces']}'")
    for path, m in out["injections"]:
        for j, alt in enumerate(m.get("alternatives") or ()):
            if not _strings(alt) or not alt or any(not k.strip() for k in alt):
                ck.add(path + ("alternatives", j), "must be a non-empty list of non-blank strings (one key set)")
        ev = by_id.get(m.get("event"))
        if ev is None:
            continue
        if ev.role != "background":
            ck.add(path + ("event",), f"event {ev.id} is a {ev.role} event; injections name background events")
        for key in m.get("payload", []):
            if normalize(key) not in normalize(ev.text):
                ck.add(path + ("payload",), f"payload '{key}' does not occur in event {ev.id}'s text")
    for path, m in out["facts"]:
        ev = by_id.get(m.get("from"))
        for key in m.get("keys", []) if ev is not None else []:
            if normalize(key) not in normalize(ev.text):
                ck.add(path + ("keys",), f"key '{key}' does not occur in event {ev.id}'s text")
    workstreams = []
    for path, m in out["workstreams"]:
        items = []
        seen_items: set[str] = set()
        for j, it in enumerate(m.get("items") or []):
            ip = path + ("items", j)
            im = ck.mapping(it, ip, {"id": "str"}, {"done": "str"})
            if im is None or "id" not in im:
                continue
            if im["id"] in seen_items:
                ck.add(ip + ("id",), f"duplicate item id '{im['id']}'")
            seen_items.add(im["id"])
            if "done" in im and im["done"] not in by_id:
                ck.add(ip + ("done",), f"unknown event '{im['done']}'")
            items.append(Item(im["id"], im.get("done")))
        workstreams.append(Workstream(m["id"], m.get("from", ""), m.get("title", ""), tuple(items)))

    def tup(m: dict, key: str) -> tuple[str, ...]:
        return tuple(m.get(key) or ())

    return Truth(
        mission=tuple(Mission(m["id"], m.get("from", ""), m.get("text", ""), tup(m, "keys"), m.get("until"))
                      for _, m in out["mission"]),
        workstreams=tuple(workstreams),
        constraints=tuple(Constraint(m["id"], m.get("from", ""), m.get("kind", ""), m.get("quote", ""),
                                     tup(m, "keys"), m.get("replaces"), m.get("until"))
                          for _, m in out["constraints"]),
        injections=tuple(Injection(m["id"], m.get("event", ""), tup(m, "payload"),
                                   tuple(tuple(a) for a in m.get("alternatives") or () if _strings(a)))
                         for _, m in out["injections"]),
        facts=tuple(Fact(m["id"], m.get("from", ""), tup(m, "keys")) for _, m in out["facts"]),
        decisions=tuple(Decision(m["id"], m.get("from", ""), tup(m, "keys"), tup(m, "rejected"))
                        for _, m in out["decisions"]),
    )


def _probes(ck: _Check, raw: list, events: list[Event]) -> list[Probe]:
    known = {e.id for e in events}
    probes, seen = [], set()
    for i, item in enumerate(raw):
        path = ("probes", i)
        m = ck.mapping(item, path, PROBE_REQUIRED, PROBE_OPTIONAL)
        if m is None or not {"id", "at", "kind", "ask"} <= m.keys():
            continue
        if m["id"] in seen:
            ck.add(path + ("id",), f"duplicate probe id '{m['id']}'")
        seen.add(m["id"])
        if m["at"] not in known:
            ck.add(path + ("at",), f"unknown event '{m['at']}'")
        if m["kind"] not in PROBE_KINDS:
            ck.add(path + ("kind",), f"unknown probe kind '{m['kind']}' (allowed: {', '.join(PROBE_KINDS)})")
        if not m.get("expect") and not m.get("rubric"):
            ck.add(path, "a probe needs 'expect' (rule grading) or 'rubric' (judge grading)")
        probes.append(Probe(m["id"], m["at"], m["kind"], m["ask"], tuple(m.get("expect") or ()),
                            tuple(m.get("reject") or ()), m.get("rubric")))
    return probes


def check(data: Any) -> tuple[Scenario | None, _Check]:
    """Validate parsed data; the Scenario is None when anything is wrong."""
    ck = _Check()
    top = ck.mapping(data, (), TOP_REQUIRED, TOP_OPTIONAL)
    if top is None:
        return None, ck
    if "scenario" in top and top["scenario"] != FORMAT_VERSION:
        ck.add(("scenario",), f"unsupported format version {top['scenario']} (this version reads {FORMAT_VERSION})")
    if "id" in top and not ID_RE.match(top["id"]):
        ck.add(("id",), f"id '{top['id']}' must match [a-z0-9-]+")
    if "window" in data and "window" in top and top["window"] <= 0:
        ck.add(("window",), f"window must be a positive integer, got {top['window']}")
    events = _events(ck, top.get("events", []))
    if "events" in top and not events and not ck.problems:
        ck.add(("events",), "no events")
    if events and not any(e.role == "assistant" for e in events):
        ck.add(("events",), "no assistant event, so nothing is ever requested")
    truth = _truth(ck, top.get("truth", {}), events)
    probes = _probes(ck, top.get("probes", []), events)
    if ck.problems:
        return None, ck
    scenario = Scenario(id=top["id"], title=top.get("title", top["id"]), user=top.get("user", "User"),
                        window=top["window"], system=top["system"], events=tuple(events),
                        tags=tuple(top.get("tags", ())), truth=truth, probes=tuple(probes))
    return scenario, ck


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _json_safe(value: Any) -> bool:
    """Args are hashed and sent as JSON; a YAML date or a numeric key would break that later."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_safe(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_json_safe(v) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (str, int, bool))
