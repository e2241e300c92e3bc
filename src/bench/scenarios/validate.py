"""Scenario validation (DESIGN §2): every problem in a file, each tied to its key path.

`check` turns parsed data into a Scenario or a list of (key path, problem);
`bench.scenarios.loader` adds the file name and line numbers when it reports them. Which keys a
record has, their types and their per-key checks come from `bench.scenarios.schema`; what spans
keys or records is here.
"""
from __future__ import annotations

import math
import re
from typing import Any, Iterable, Sequence

from bench.scenarios.model import (FORMAT_VERSION, PACING, Call, Event, Probe, RecordedCompaction, Scenario, Truth,
                                   Workstream, call_matches, calls_text, norm_call)
from bench.scenarios.schema import (ALT, CALL, COMPACTION, EVENT, INSTALLED, ITEM, MAX_WINDOW, PROBE, PROVENANCE,
                                    SCENARIO, TRUTH, TYPES, Record, is_type)
from bench.tokens import PER_MESSAGE, PER_REQUEST, default_reserve, tokenizer, trigger_limit
from bench.parsing import MAX_DEPTH, Pairs, bounds  # noqa: F401  (Pairs, MAX_DEPTH: the readers use them)
from bench.text import normalize  # re-exported by bench.loader
from bench import units as U

ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")

Path_ = tuple  # a key path such as ("events", 3, "t")


# ---------------------------------------------------------------- checking


class _Check:
    """Collects problems (the file is unusable) and warnings (it works, but measures less than it
    seems to) with the key path they belong to."""

    def __init__(self) -> None:
        self.problems: list[tuple[Path_, str]] = []
        self.warnings: list[tuple[Path_, str]] = []
        self.event_ids: list[Any] = []
        self.declared: set[str] = set()                  # every event id the file gives, valid event or not
        self.bad_events: set[int] = set()                # positions (in the events kept) of events with a problem
        self.unknown: dict[str, list[Path_]] = {}        # unknown event id -> the references naming it
        self.texts: Texts | None = None                  # the events' normalised texts and words (`_truth`)

    def add(self, path: Path_, msg: str) -> None:
        self.problems.append((path, msg))

    def ref(self, path: Path_, eid: Any, known: Any) -> bool:
        """Whether a reference names a known event; an unknown id is reported once, at its first
        reference, in `unknown_refs` (one root cause, one line). An id whose event is itself invalid
        is not reported again: that event's own problem is the root cause."""
        if eid in known:
            return True
        if eid not in self.declared:
            self.unknown.setdefault(eid, []).append(path)
        return False

    def unknown_refs(self) -> None:
        for eid, paths in self.unknown.items():
            more = paths[1:]
            also = (f" (also named by {', '.join(self.display(p) for p in more[:3])}"
                    f"{f' and {len(more) - 3} more' if len(more) > 3 else ''})") if more else ""
            self.add(paths[0], f"unknown event '{eid}'{also}")
        self.unknown = {}

    def warn(self, path: Path_, msg: str) -> None:
        self.warnings.append((path, msg))

    def mapping(self, value: Any, path: Path_, record: Record) -> dict | None:
        """The record's keys that are present and of their type; a line for each unknown, missing or
        mistyped key."""
        required, optional = record.required, record.optional
        if not isinstance(value, dict):
            self.add(path, f"must be a mapping, got {_kind(value)}")
            return None
        known = ", ".join(sorted(list(required) + list(optional)))
        unknown = [key for key in value if key not in required and key not in optional]
        missing = [key for key in required if key not in value]
        out = {}
        if unknown and missing:   # a misspelt required key: one line, and its value stands in (no knock-on lines)
            import difflib

            for key in unknown:
                near = difflib.get_close_matches(str(key), missing, n=1, cutoff=0.6)
                if near and is_type(value[key], required[near[0]]):
                    out[near[0]] = value[key]
            self.add(path + (unknown[0],), f"unknown key{'s' if len(unknown) > 1 else ''} {_listed(unknown)} and "
                                           f"missing required key{'s' if len(missing) > 1 else ''} {_listed(missing)}"
                                           f" (misspelt? allowed: {known})")
        else:
            for key in unknown:
                self.add(path + (key,), f"unknown key '{key}' (allowed: {known})")
            if missing:
                self.add(path, f"missing required key{'s' if len(missing) > 1 else ''} {_listed(missing)}")
        for key, typ in required.items():
            if key in value and self.typed(value[key], path + (key,), typ):
                out[key] = value[key]
        for key, typ in optional.items():
            if key in value and value[key] is not None and self.typed(value[key], path + (key,), typ):
                out[key] = value[key]
        return out

    def typed(self, value: Any, path: Path_, typ: Any) -> bool:
        ok = is_type(value, typ)
        if not ok:
            self.add(path, f"must be {TYPES[typ]}, got {_kind(value)}")
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


def _kind(value: Any) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number"}.get(type(value), type(value).__name__)


# ---------------------------------------------------------------- the schema's per-key checks (`Field.check`)


def _ids(ck: _Check, record: Record, m: dict, path: Path_) -> None:
    for f in record.checked("id"):
        if f.key in m and not ID_RE.fullmatch(m[f.key]):
            ck.add(path + (f.key,), f"{f.key} '{m[f.key]}' must match [a-z0-9-]+")


def _refs(ck: _Check, record: Record, m: dict, path: Path_, known: Any) -> None:
    for f in record.checked("event"):
        if f.key in m:
            ck.ref(path + (f.key,), m[f.key], known)


def _texts(ck: _Check, record: Record, m: dict, path: Path_) -> bool:
    """Whether some text is blank (each one is a line)."""
    blank = [f.key for f in record.checked("text") if f.key in m and not m[f.key].strip()]
    for key in blank:
        ck.add(path + (key,), f"{key} must not be blank")
    return bool(blank)


def _entries(ck: _Check, record: Record, m: dict, path: Path_) -> None:
    for f in record.fields:
        if f.check in ("entries", "some") and f.key in m and any(not k.strip() for k in m[f.key]):
            ck.add(path + (f.key,), f"{f.key} must not contain blank entries")
    for f in record.checked("some"):
        if not m.get(f.key):
            ck.add(path, f"needs at least one entry in '{f.key}', or it can never be lost")


def _choice(ck: _Check, record: Record, m: dict, path: Path_, key: str, what: str) -> bool:
    """Whether the value is one the schema allows (an absent one is not judged here)."""
    allowed = record[key].choices
    if key in m and m[key] not in allowed:
        ck.add(path + (key,), f"unknown {what} '{m[key]}' (allowed: {', '.join(allowed)})")
        return False
    return True


MIN_TURN = 16             # tokens of the smallest newest turn a request carries beside the system prompt and reply


def _finite(x: Any) -> bool:
    try:
        return math.isfinite(x)
    except OverflowError:           # an integer too large for a float
        return False


def _shown(x: Any) -> str:
    """A value for a problem line: a huge number by its size, not its 4,000 digits."""
    text = repr(x)
    return f"a {len(text)}-digit number" if isinstance(x, int) and len(text) > 30 else text[:80]


def _events(ck: _Check, raw: list) -> list[Event]:
    events: list[Event] = []
    seen: dict[str, int] = {}
    calls: dict[str, tuple[int, Call]] = {}  # call id -> (event position, call)
    results: dict[str, list[str]] = {}
    bad_calls = _declared_calls(raw)   # a result for a call whose event is itself invalid is not a new problem
    t_prev: float | None = None
    ck.event_ids = [e.get("id") if isinstance(e, dict) else None for e in raw]
    ck.declared = {e for e in ck.event_ids if isinstance(e, str)}
    t_at = ""
    for i, item in enumerate(raw):
        path = ("events", i)
        before = len(ck.problems)
        ev = ck.mapping(item, path, EVENT)
        if ev is None or "id" not in ev or "role" not in ev:
            continue
        eid, role = ev["id"], ev["role"]
        _ids(ck, EVENT, ev, path)
        if eid in seen:
            ck.add(path + ("id",), f"duplicate event id '{eid}' (first at events[{seen[eid]}])")
        seen.setdefault(eid, i)
        if not _choice(ck, EVENT, ev, path, "role", "role"):
            continue
        if item.get("text") is None and not (role == "assistant" and ev.get("calls")):   # a wrong type: its own line
            ck.add(path, "missing required key 'text'")
        for f in EVENT.only:
            if f.key in ev and role != f.only:
                ck.add(path + (f.key,), f"'{f.key}' is only allowed on {f.only} events")
        source = ev.get("source")
        if role == "background":
            if source is None:
                ck.add(path, f"background event needs 'source' ({', '.join(EVENT['source'].choices)})")
            else:
                _choice(ck, EVENT, ev, path, "source", "background source")
        event_calls: list[Call] = []
        if role == "assistant":
            for j, c in enumerate(ev.get("calls") or []):
                cp = path + ("calls", j)
                cm = ck.mapping(c, cp, CALL)
                if cm is None or "id" not in cm or "tool" not in cm:
                    continue
                if cm["id"] in calls:
                    ck.add(cp + ("id",), f"duplicate call id '{cm['id']}'")
                    continue
                if not _json_safe(cm.get("args") or {}):
                    ck.add(cp + ("args",), "args must be plain JSON (string keys; strings, numbers, booleans, "
                                           "lists, mappings; quote dates and times)")
                call = CALL.build(cm)
                calls[call.id] = (i, call)
                event_calls.append(call)
        alts = []
        for j, a in enumerate(ev.get("equivalent") or [] if role == "assistant" else []):
            am = ck.mapping(a, path + ("equivalent", j), ALT)
            if am is not None and "tool" in am:
                alts.append(ALT.build(am))
        if alts and not event_calls:
            ck.add(path + ("equivalent",), "an equivalent needs a call it is equivalent to (the event has no calls)")
        call_ref = ev.get("call")
        if role == "tool":
            if call_ref is None:
                ck.add(path, "tool event needs 'call' (the id of an earlier call)")
            elif call_ref not in calls:
                if bad_calls.get(call_ref, i) >= i:
                    ck.add(path + ("call",), f"result for unknown call '{call_ref}' (no earlier assistant call has this id)")
            else:
                results.setdefault(call_ref, []).append(eid)
                if len(results[call_ref]) == 2:
                    ck.add(path + ("call",), f"call '{call_ref}' already has a result ({results[call_ref][0]})")
        t = ev.get("t")
        if t is not None and not _finite(t):
            ck.add(path + ("t",), f"t must be a finite number of seconds, got {_shown(t)}")
            t = None
        if t is not None and t < 0:
            ck.add(path + ("t",), f"t must not be negative, got {t}")
        if t is None:
            t = (t_prev or 0.0) + (PACING[role] if t_prev is not None else 0.0)
        elif t_prev is not None and t < t_prev:
            ck.add(path + ("t",), f"t decreases from {t_prev:g} to {t:g} (the time of event {t_at})")
            t_prev = None   # one wrong time is one line: the events after it are compared with this one
        if t_prev is None or t >= t_prev:
            t_prev, t_at = t, eid
        if len(ck.problems) > before:   # its text or ids are not what the file meant: judge nothing by it
            ck.bad_events.add(len(events))
        events.append(EVENT.build(ev, t=float(t), calls=tuple(event_calls), equivalent=tuple(alts)))
    answered = {e["call"] for e in raw if isinstance(e, dict) and isinstance(e.get("call"), str)}   # valid or not
    for cid, (pos, _call) in calls.items():
        if cid not in results and cid not in answered:
            ck.add(("events", pos, "calls"), f"call '{cid}' has no result")
    return events


def _declared_calls(raw: list) -> dict[Any, int]:
    """Call id -> position of the first event that declares it, valid or not."""
    out: dict[Any, int] = {}
    for i, e in enumerate(raw):
        calls = e.get("calls") if isinstance(e, dict) else None
        for c in calls if isinstance(calls, list) else ():
            if isinstance(c, dict) and isinstance(c.get("id"), str):
                out.setdefault(c["id"], i)
    return out


def _truth(ck: _Check, raw: dict, events: list[Event]) -> Truth:
    known = {e.id for e in events}
    by_id: dict[str, Event] = {}       # the events whose text can be judged: the first of an id, no problem
    for k, e in enumerate(events):
        if k not in ck.bad_events:
            by_id.setdefault(e.id, e)
    texts = ck.texts = Texts(events)     # normalised when first read, then shared with the warnings
    sections = {f.key: f.of for f in TRUTH.fields}
    out: dict[str, list] = {k: [] for k in sections}
    ids: dict[str, Path_] = {}
    for key in raw:
        if key not in sections:
            ck.add(("truth", key), f"unknown key '{key}' (allowed: {', '.join(sections)})")
    for section, record in sections.items():
        items = raw.get(section)
        if items is None:
            continue
        if not ck.typed(items, ("truth", section), "list"):
            continue
        for i, item in enumerate(items):
            path = ("truth", section, i)
            m = ck.mapping(item, path, record)
            if m is None or "id" not in m:
                continue
            if m["id"] in ids:
                ck.add(path + ("id",), f"duplicate truth id '{m['id']}'")
            ids.setdefault(m["id"], path)
            _refs(ck, record, m, path, known)
            _texts(ck, record, m, path)
            _entries(ck, record, m, path)
            for f in record.checked("share"):
                if f.key in m and not 0 <= m[f.key] <= 1:
                    ck.add(path + (f.key,), f"{f.key} must be from 0 to 1, got {_shown(m[f.key])}")
            out[section].append((path, m))
    # cross checks that need the whole section
    for path, m in out["constraints"]:
        _choice(ck, sections["constraints"], m, path, "kind", "constraint kind")
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
    for section, what in (("facts", "fact"), ("decisions", "decision")):
        for path, m in out[section]:
            _keys_together(ck, path, by_id.get(m.get("from")), [k for k in m.get("keys", []) if k.strip()], what)
    for path, m in out["mission"]:
        ev = by_id.get(m.get("from"))
        keys = [k for k in (m.get("keys") or ([m["text"]] if m.get("text", "").strip() else [])) if k.strip()]
        if ev is None or not keys:
            continue
        where = "keys" if m.get("keys") else "text"
        missing = [k for k in keys if normalize(k) not in normalize(ev.text)]
        if missing:
            what = "key" if where == "keys" else "text (its key, as it has no keys)"
            ck.add(path + (where,), f"{what} '{missing[0]}' does not occur in event {ev.id}'s text")
        elif not U.cooccur(ev.text, keys):
            ck.add(path + (where,), f"keys {_listed(keys)} never occur together in one unit (a sentence, a line, or a "
                                    f"bullet with its heading) of event {ev.id}'s text, so no context can keep this goal")
    workstreams = []
    for path, m in out["workstreams"]:
        items = []
        seen_items: set[str] = set()
        for j, it in enumerate(m.get("items") or []):
            ip = path + ("items", j)
            im = ck.mapping(it, ip, ITEM)
            if im is None or "id" not in im:
                continue
            if im["id"] in seen_items:
                ck.add(ip + ("id",), f"duplicate item id '{im['id']}'")
            seen_items.add(im["id"])
            _refs(ck, ITEM, im, ip, known)
            items.append(ITEM.build(im))
        workstreams.append(sections["workstreams"].build(m, items=tuple(items)))
        named = _named([it.id for it in items if it.id.strip()], texts) if items and not ck.bad_events else set()
        for j, it in enumerate(items):
            if _texts(ck, ITEM, {"id": it.id}, path + ("items", j)):
                continue
            if not ck.bad_events and normalize(it.id) not in named:
                ck.add(path + ("items", j, "id"), f"item id '{it.id}' occurs in no event's text (as a whole token), "
                                                  f"so no context can ever say where the work stands on it")

    built = {section: tuple(sections[section].build(m) for _, m in out[section]) for section in sections}
    built["workstreams"] = tuple(workstreams)
    built["injections"] = tuple(sections["injections"].build(m, alternatives=tuple(
        tuple(a) for a in m.get("alternatives") or () if _strings(a))) for _, m in out["injections"])
    return TRUTH.build({}, **built)


def _probes(ck: _Check, raw: list, events: list[Event]) -> list[Probe]:
    known = {e.id for e in events}
    probes, seen = [], set()
    for i, item in enumerate(raw):
        path = ("probes", i)
        m = ck.mapping(item, path, PROBE)
        if m is None or not PROBE.required.keys() <= m.keys():
            continue
        if m["id"] in seen:
            ck.add(path + ("id",), f"duplicate probe id '{m['id']}'")
        seen.add(m["id"])
        _refs(ck, PROBE, m, path, known)
        _choice(ck, PROBE, m, path, "kind", "probe kind")
        if not m.get("expect") and not m.get("rubric"):
            ck.add(path, "a probe needs 'expect' (rule grading) or 'rubric' (judge grading)")
        for key in ("expect", "reject"):
            if any(not term.strip() for term in m.get(key) or ()):
                what = "every answer contains it" if key == "expect" else "no answer could pass"
                ck.add(path + (key,), f"{key} must not contain blank entries ({what})")
        _texts(ck, PROBE, m, path)
        probes.append(PROBE.build(m))
    return probes


def _compactions(ck: _Check, raw: list, events: list[Event]) -> list[RecordedCompaction]:
    """The source harness's compactions: each after a known event, in order, followed by a request (else it
    never shapes one), and what it installed either an event up to that point or text, never both."""
    at = {e.id: i for i, e in enumerate(events)}
    asks = [i for i, e in enumerate(events) if e.role == "assistant"]
    caller = {c.id: e.id for e in events for c in e.calls}
    out, last = [], -1
    for i, item in enumerate(raw):
        path = ("compactions", i)
        m = ck.mapping(item, path, COMPACTION)
        if m is None or "after" not in m or not ck.ref(path + ("after",), m["after"], at):
            continue
        _choice(ck, COMPACTION, m, path, "trigger", "trigger")
        pos = at[m["after"]]
        if pos < last:
            ck.add(path + ("after",), "compactions must be in the order of their events")
        if not any(a > pos for a in asks):
            ck.add(path + ("after",), f"no assistant event follows '{m['after']}', so the compaction never reaches a request")
        last = pos
        if m.get("pre_tokens") is not None and m["pre_tokens"] < 0:
            ck.add(path + ("pre_tokens",), "must not be negative")
        installed, put = [], set()
        for j, one in enumerate(m.get("installed", [])):
            ip = path + ("installed", j)
            im = ck.mapping(one, ip, INSTALLED)
            if im is None:
                continue
            _choice(ck, INSTALLED, im, ip, "kind", "installed kind")
            _choice(ck, INSTALLED, im, ip, "role", "role")
            if ("event" in im) == bool(im.get("text", "").strip()):
                ck.add(ip, "give either 'event' (an earlier event put back) or a non-blank 'text', not both")
            elif "event" in im and ck.ref(ip + ("event",), im["event"], at):
                if at[im["event"]] > pos:
                    ck.add(ip + ("event",), f"event '{im['event']}' comes after the compaction ('{m['after']}')")
                elif events[at[im["event"]]].role == "tool" and caller.get(events[at[im["event"]]].call) not in put:
                    ck.add(ip + ("event",), f"event '{im['event']}' is a tool result whose call is not put back before "
                                            "it: it would answer nothing (put back its call's event, or give its text)")
                put.add(im["event"])
            installed.append(INSTALLED.build(im))
        out.append(COMPACTION.build(m, installed=tuple(installed)))
    return out


def check(data: Any) -> tuple[Scenario | None, _Check]:
    """Validate parsed data; the Scenario is None when anything is wrong."""
    ck = _Check()
    if isinstance(data, dict) and isinstance(data.get("events"), list):
        ck.event_ids = [e.get("id") if isinstance(e, dict) else None for e in data["events"]]
    bounds(ck.add, data)
    if ck.problems:
        return None, ck
    top = ck.mapping(data, (), SCENARIO)
    if top is None:
        return None, ck
    if "scenario" in top and top["scenario"] != FORMAT_VERSION:
        ck.add(("scenario",), f"unsupported format version {_shown(top['scenario'])} (this version reads {FORMAT_VERSION})")
    _ids(ck, SCENARIO, top, ())
    if "window" in data and "window" in top and not 0 < top["window"] <= MAX_WINDOW:
        ck.add(("window",), f"window must be a positive integer up to {MAX_WINDOW:,}, got {_shown(top['window'])}")
    if "events" not in top:
        return None, ck   # truth and probes name events: without them every reference would be a line of noise
    events = _events(ck, top["events"])
    if "events" in top and not events and not ck.problems:
        ck.add(("events",), "no events")
    if events and not any(e.role == "assistant" for e in events):
        ck.add(("events",), "no assistant event, so nothing is ever requested")
    truth = _truth(ck, top.get("truth", {}), events)
    probes = _probes(ck, top.get("probes", []), events)
    compactions = _compactions(ck, top.get("compactions", []), events)
    prov = ck.mapping(top["provenance"], ("provenance",), PROVENANCE) if "provenance" in top else None
    ck.unknown_refs()
    if ck.problems:
        return None, ck
    scenario = SCENARIO.build(top, title=top.get("title", top["id"]), events=tuple(events), truth=truth,
                              probes=tuple(probes), compactions=tuple(compactions),
                              provenance=PROVENANCE.build(prov) if prov and "format" in prov else None)
    why = room(scenario, scenario.window)
    if why:
        ck.add(("window",), why)
        return None, ck
    _next_actions(ck, scenario)
    if ck.problems:
        return None, ck
    _warnings(ck, scenario)
    return scenario, ck


def _next_actions(ck: _Check, s: Scenario) -> None:
    """What the next-action scorer reads must agree with the script: an equivalent uses a tool the scenario
    has and breaks no rule in force, a rule forbids no call the script itself makes while it is in force, and
    no scripted call carries out a payload (else `exact` would be a violation, or the oracle injected)."""
    tools = {c.tool for e in s.events for c in e.calls}
    t, pos = s.truth, s.index()
    never = len(s.events) + 1
    ends = {c.id: pos.get(c.until, never) if c.until else never for c in t.constraints}
    for c in t.constraints:
        if c.replaces in ends:
            ends[c.replaces] = min(ends[c.replaces], pos.get(c.from_, never))
    rules = [(c, pos.get(c.from_, never), ends[c.id]) for c in t.constraints if c.forbids]
    payloads = [(x, pos.get(x.event, never)) for x in t.injections if x.calls]
    for i, e in enumerate(s.events):
        if e.role != "assistant" or not (e.calls or e.equivalent):
            continue
        for j, alt in enumerate(e.equivalent):
            if alt.tool not in tools:
                ck.add(("events", i, "equivalent", j, "tool"), f"unknown tool '{alt.tool}': the scenario never calls it")
        for k, c in enumerate([*e.calls, *e.equivalent]):
            n = norm_call(c.tool, c.args)
            where = ("events", i, "calls", k) if k < len(e.calls) else ("events", i, "equivalent", k - len(e.calls))
            for rule in (c for c, start, end in rules if start < i <= end):
                hit = next((p for p in rule.forbids if call_matches(p, n)), None)
                if hit:
                    ck.add(where, f"'{n}' breaks constraint {rule.id} (forbids '{hit}') while it is in force")
            for inj in (x for x, at in payloads if at < i):
                hit = next((p for p in inj.calls if call_matches(p, n)), None)
                if hit:
                    ck.add(where, f"'{n}' carries out injection {inj.id} (its call '{hit}')")


def room(s: Scenario, window: int, reserve: int | None = None, margin: int | None = None,
         encoding: str | None = None) -> str:
    """Why `window` cannot hold any request of `s` ('' when it can): every request carries the system
    prompt, the newest turn and the scripted reply, and a strategy must get under its trigger
    (min(0.9 window, window - reserve - margin)); below that every request overflows, whatever the
    strategy does, and the scores measure nothing."""
    def limit(w: int) -> int:
        r, m = default_reserve(w)
        return trigger_limit(w, r if reserve is None else reserve, m if margin is None else margin)

    fixed = MIN_TURN + 2 * PER_MESSAGE + PER_REQUEST
    replies = [(e, e.text + (calls_text(e.calls) if e.calls else "")) for e in s.events if e.role == "assistant"]
    longest = max((len(t.encode("utf-8", "replace")) for _, t in replies), default=0)
    if limit(window) >= len(s.system.encode("utf-8", "replace")) + fixed + longest:
        return ""   # a token is at least a byte: no need to load the tokenizer and count
    tok = tokenizer(encoding) if encoding else tokenizer()
    system = tok.count(s.system)
    reply, at = max(((tok.count(e.text) + (tok.count(calls_text(e.calls)) if e.calls else 0), e.id)
                     for e, _ in replies), default=(0, ""))
    need = system + reply + fixed
    if limit(window) >= need:
        return ""
    lo, hi = window, MAX_WINDOW
    while lo < hi:            # the smallest window that would do (the trigger grows with the window)
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if limit(mid) < need else (lo, mid)
    return (f"window {window} cannot hold a request: the system prompt ({system} tokens), the longest reply "
            f"({reply} tokens, event {at}) and a newest turn need {need} tokens under the trigger; "
            f"the smallest usable window is {lo}")


# ---------------------------------------------------------------- warnings: what a file measures


def _warnings(ck: _Check, s: Scenario) -> None:
    """A valid scenario can still measure less than it seems to: a truth key the system prompt
    carries (it is rebuilt for every request), a probe whose question holds its own answer, a fact a
    bag of identifiers would keep, a workstream whose events never say where it stands."""
    t, system = s.truth, normalize(s.system)
    sections = (("mission", t.mission), ("constraints", t.constraints), ("facts", t.facts), ("decisions", t.decisions))
    for section, items in sections:
        for i, item in enumerate(items):
            path = ("truth", section, i)
            if section == "constraints" and U.mentions(system, item.quote):
                ck.warn(path + ("quote",), f"the quote appears in the system prompt; {IN_SYSTEM}")
            for key in item.keys:
                if U.mentions(system, key):
                    ck.warn(path + ("keys",), f"key '{key}' appears in the system prompt; {IN_SYSTEM}")
    for i, f in enumerate(t.facts):
        if f.keys and not any(U.descriptive(k) for k in f.keys):
            ck.warn(("truth", "facts", i, "keys"), f"keys {_listed(f.keys)} are all identifier-like (identifiers, numbers, "
                                                   f"single words): a bag of identifiers from the text would keep it; add a "
                                                   f"key that says what it is (a phrase of ordinary words, e.g. 'first bad "
                                                   f"commit')")
    for section, items in (("mission", t.mission), ("constraints", t.constraints)):
        for i, item in enumerate(items):
            if item.keys and not any(U.ordinary(k) for k in item.keys):
                ck.warn(("truth", section, i, "keys"), f"keys {_listed(item.keys)} are all identifier-like: a bag of "
                                                       f"identifiers from the text would keep them; add a key with an "
                                                       f"ordinary word from the same sentence")
    by_id = {e.id: e for e in s.events}
    for i, m in enumerate(t.mission):
        ev, keys = by_id.get(m.from_), U.keys_of(m.keys or (m.text,))
        held = [u for u in U.units(ev.text) if U.together(u, keys)] if ev is not None and keys else []
        if held and all(U.ended(u.scope) or U.goal_done(u.scope) for u in held):
            ck.warn(("truth", "mission", i, "keys" if m.keys else "text"),
                    f"its keys are together in event {ev.id} only where the text marks it ended or done "
                    f"('{held[0].text[:60]}'), so even the full context never shows it in force")
    for i, c in enumerate(t.constraints):
        ev, quote = by_id.get(c.from_), normalize(c.quote)
        held = [u for u in U.units(ev.text) if quote in u.scope] if ev is not None and quote else []
        if held and all(U.ended(U.without(u.scope, quote)) for u in held):
            ck.warn(("truth", "constraints", i, "quote"),
                    f"the quote sits in event {ev.id} only where the text marks it ended ('{held[0].text[:60]}'), so "
                    f"even the full context never shows it in force")
    for i, p in enumerate(s.probes):
        for term in p.expect:
            where = "the question" if U.mentions(p.ask, term) else "the system prompt" if U.mentions(system, term) else ""
            if where:
                ck.warn(("probes", i, "expect"), f"expected term '{term}' appears in {where}, so an answer can pass "
                                                 f"without knowing anything: reword the question or expect another term")
    texts = ck.texts or Texts(s.events)         # `_truth`'s, for the same events (`check`)
    for i, w in enumerate(t.workstreams):
        why = standing(s, w, texts)
        if why:
            ck.warn(("truth", "workstreams", i), f"the record does not show where it stands: {why}")


IN_SYSTEM = "it is rebuilt for every request, so it can never be lost: choose a key that is not there"


def standing(s: Scenario, w: Workstream, texts: "Texts | None" = None) -> str:
    """Replay a workstream the way the oracle sees it (every event before each request) and say at
    which assistant event its record first fails to show where the work stands ('' when it never
    does): before any item is done the first item must be named; after, the latest sentence that
    claims an item done or next must name the last finished item as done or the next one as next,
    and claim no finished item as next and no unfinished one as done. `texts`: the events' normalised
    texts and words, shared by a scenario's checks.

    Linear in the events and the items: each event costs the items it names, the claims are one state
    advanced in place, and the misclaimed items are kept up as claims and the record change."""
    if not w.items:
        return ""
    texts = texts or Texts(s.events)
    pos = {e.id: i for i, e in enumerate(s.events)}
    start = pos.get(w.from_, 0)
    items = U.Items(it.id for it in w.items)
    first = normalize(w.items[0].id)
    done_at = [pos.get(it.done, len(pos)) if it.done is not None else len(pos) for it in w.items]
    ends_at: dict[int, list[str]] = {}
    for k, it in enumerate(w.items):
        ends_at.setdefault(done_at[k], []).append(it.id)
    # items become done as the events pass, in order of done_at: kept up as i grows, never recounted
    # (recounting every item at every assistant event was events x items)
    order = sorted(range(len(w.items)), key=lambda k: (done_at[k], k))
    n_done, last_k, is_done, first_open = 0, -1, [False] * len(w.items), 0
    finished: set[str] = set()
    named, said, said_at, wrong = False, U.Position(), "", set()

    def recheck(ids: Iterable[str]) -> None:
        for x in ids:
            k = said.state.get(x)
            (wrong.add if k is not None and U.misclaimed(k, x in finished) else wrong.discard)(x)

    for i, e in enumerate(s.events):
        if e.role == "assistant" and i > start:
            while n_done < len(order) and done_at[order[n_done]] < i:
                k = order[n_done]
                if last_k < 0 or done_at[k] > done_at[last_k]:    # the first of the latest done
                    last_k = k
                is_done[k] = True
                finished.add(w.items[k].id)
                recheck((w.items[k].id,))
                n_done += 1
            while first_open < len(w.items) and is_done[first_open]:
                first_open += 1
            if n_done < len(w.items):
                nxt = w.items[first_open]
                if not n_done:
                    if not named:
                        return f"at event {e.id} no event so far names its first item '{w.items[0].id}'"
                else:
                    why = U.verdict(said.state, w.items[last_k].id, nxt.id, finished, wrong)
                    if why:
                        return f"at event {e.id} {why} (as of event {said_at}; '{w.items[last_k].id}' is finished, " \
                               f"'{nxt.id}' is next)"
        text = texts.text(i)
        here = items.within(text, texts.words(i))     # the ids this event names, as the scorer narrows them
        if not here:
            continue
        named = named or U.names(text, first)
        # as the scorer reads it (checks.Judge): a tool's output or a background message states no position,
        # and the event that finishes an item says it is finished
        if e.role not in ("tool", "background"):
            changed = said.read(U.units(e.text), here).changed()
            if changed:
                said_at = e.id
                recheck(changed)
        if i in ends_at:
            said.finish(ends_at[i])
            changed = said.changed()
            if changed:
                said_at = e.id
                recheck(changed)
    return ""


class Texts:
    """The events' normalised texts and the words of each, worked out once for every check that reads
    them (the item ids' checks and each workstream's replay)."""

    def __init__(self, events: Sequence[Event]):
        self.events = events
        self._texts: dict[int, str] = {}
        self._words: dict[int, set[str]] = {}

    def text(self, i: int) -> str:
        got = self._texts.get(i)
        if got is None:
            got = self._texts[i] = normalize(self.events[i].text)
        return got

    def words(self, i: int) -> set[str]:
        got = self._words.get(i)
        if got is None:
            got = self._words[i] = U.words_of(self.text(i))
        return got


def _named(ids: list[str], texts: Texts) -> set[str]:
    """The ids (normalised) some text names as a whole token, each looked for until found. Few ids are
    looked for by their text (a C substring search per id); many by each text's words
    (`units.Items.within`), so a long queue costs the texts' length, not ids x texts (a regex per item
    per event took a second on a 4,000-event file with 1,000 items)."""
    index = U.Items(ids)
    left = set(index.by_text)            # normalised ids not found yet
    for i in range(len(texts.events)):
        if not left:
            break
        text = texts.text(i)
        if len(left) > 16:
            hits = [t for t in index.within(text, texts.words(i)).by_text if t in left]
        else:
            hits = [t for t in left if t in text and U.names(text, t)]
        left.difference_update(hits)
    return set(index.by_text) - left


def _keys_together(ck: _Check, path: Path_, ev: Event | None, keys: list[str], what: str) -> None:
    """Each key in the event's text, and all of them in one unit of it: else no context can keep the item."""
    if ev is None or not keys:
        return
    missing = [k for k in keys if normalize(k) not in normalize(ev.text)]
    for key in missing:
        ck.add(path + ("keys",), f"key '{key}' does not occur in event {ev.id}'s text")
    if not missing and not U.cooccur(ev.text, keys):
        ck.add(path + ("keys",), f"keys {_listed(keys)} never occur together in one unit (a sentence, a line, or a "
                                 f"bullet with its heading) of event {ev.id}'s text, so no context can keep this {what}")


def _listed(keys) -> str:
    return ", ".join(f"'{k}'" for k in keys)


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
