"""What every importer shares: a format-neutral transcript, its conversion to scenario events,
the derived truth, the default window, and writing the file.

Readers only translate their format into `Turn`s; pairing calls with results,
unique ids, truth and validation happen here once, so the four formats behave
the same way on the same kind of mess (reused call ids, calls without results,
results without calls).
"""
from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from bench.errors import BadInput
from bench.scenarios.loader import check
from bench.scenarios.model import Call, Scenario, calls_text, norm_call
from bench.scenarios.schema import MAX_WINDOW
from bench.tokens import PER_MESSAGE, tokenizer
from bench.text import first_sentence, harness_made, substantive  # noqa: F401  (importers and tests use them from here)
from bench.scenarios.importers.secrets import Scan
from bench.scenarios.importers.truth import derive_truth, keys_of, kind_of  # noqa: F401  (the derived truth lives in truth.py)
from bench.parsing import parse_args, text_of  # noqa: F401  (the OpenAI format's readers: importers use them from here)

@dataclass
class Turn:
    """One message of a source transcript, in neutral form."""
    role: str                                  # user | assistant | tool | background | system
    text: str = ""
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)   # (source call id, tool, args)
    call: str | None = None                    # tool: the source call id it answers
    source: str | None = None                  # background: watch | cron | callback | session | harness
    t: float | None = None                     # seconds since the session started, when the source has times
    at: str | None = None                      # where in the source: a line number ("12") or a step ("steps[4]")


@dataclass
class Boundary:
    """A compaction the source harness made, in neutral form: after how many turns, and what it installed."""
    turns: int                                 # how many turns of the transcript came before it
    trigger: str = "unknown"                   # auto | manual | unknown
    pre_tokens: int | None = None              # the context size the harness reported before it
    # in order: (kind, role, text) the harness wrote, or the index of a turn it kept verbatim (OpenHands' view)
    installed: list[tuple[str, str, str] | int] = field(default_factory=list)


@dataclass
class Transcript:
    id: str
    title: str
    system: str
    turns: list[Turn]
    origin: str                                # "FILE" or "FILE record N", for messages
    boundaries: list[Boundary] = field(default_factory=list)


def seconds(stamp: Any) -> float | None:
    """An ISO timestamp as epoch seconds; None when absent or unreadable (the loader then paces events)."""
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def each_record(records: list[Any], origin: str, build: Callable[[int, Any, str], Transcript]) -> list[Transcript]:
    """One transcript per record; every bad record is reported, not just the first."""
    out, problems = [], []
    for i, rec in enumerate(records):
        try:
            out.append(build(i, rec, f"{origin} record {i}"))
        except BadInput as exc:
            problems.extend(exc.problems)
    if problems:
        raise BadInput(problems)
    return out


def slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return (s or "imported")[:60].strip("-")


# ---------------------------------------------------------------- events


def events_from(turns: list[Turn]) -> tuple[list[dict[str, Any]], list[str]]:
    """Scenario events with fresh ids; returns (events, notes about what had to be adjusted).

    Source call ids are not trusted to be unique (SWE-agent replays reuse them), so
    each call gets a new id and a result pairs with the latest unanswered call of
    its source id. A call that never gets a result loses its call (its text stays);
    a result with no call becomes a harness background message, and so does a user
    message the harness wrote (an interruption notice, a command caveat or wrapper, an
    evaluation harness's automatic reply: bench/text.py `harness_made`), whatever the
    format called it.
    """
    events: list[dict[str, Any]] = []
    notes: list[str] = []
    n = {"u": 0, "a": 0, "r": 0, "b": 0, "c": 0}
    open_calls: dict[str, list[tuple[dict[str, Any], str]]] = {}   # source id -> [(assistant event, new id)]
    answered: set[str] = set()

    def next_id(prefix: str) -> str:
        n[prefix] += 1
        return f"{prefix}{n[prefix]}"

    for turn in turns:
        ev: dict[str, Any]
        if turn.role == "assistant":
            ev = {"id": next_id("a"), "role": "assistant", "text": turn.text}
            if turn.calls:
                ev["calls"] = []
                for src, tool, args in turn.calls:
                    new = next_id("c")
                    ev["calls"].append({"id": new, "tool": tool or "tool", "args": args})
                    open_calls.setdefault(src, []).append((ev, new))
        elif turn.role == "tool":
            pending = open_calls.get(turn.call or "", [])
            if pending:
                _, new = pending.pop(0)
                ev = {"id": next_id("r"), "role": "tool", "call": new, "text": turn.text}
                answered.add(new)
            else:
                notes.append(f"a tool result for unknown call '{turn.call}' became a harness message")
                ev = {"id": next_id("b"), "role": "background", "source": "harness", "text": turn.text}
        elif turn.role == "background" or harness_made(turn.text):
            ev = {"id": next_id("b"), "role": "background", "source": turn.source or "harness", "text": turn.text}
        else:
            ev = {"id": next_id("u"), "role": "user", "text": turn.text}
        if turn.t is not None:
            ev["t"] = round(turn.t, 3)
        events.append(ev)
    for ev in events:
        if ev.get("calls"):
            kept = [c for c in ev["calls"] if c["id"] in answered]
            if len(kept) < len(ev["calls"]):
                notes.append(f"{ev['id']}: {len(ev['calls']) - len(kept)} call(s) without a result dropped")
            if kept:
                ev["calls"] = kept
                alts = {norm_call(c["tool"], c["args"]): c for c in kept[1:]}
                alts.pop(norm_call(kept[0]["tool"], kept[0]["args"]), None)
                if alts:   # calls the agent made together: any of them is as right a next action first
                    ev["equivalent"] = [{"tool": c["tool"], "args": copy.deepcopy(c["args"])} for c in alts.values()]
            else:
                del ev["calls"]
    _monotonic(events)
    return events, notes


def _monotonic(events: list[dict[str, Any]]) -> None:
    """Source clocks can step back (retries, merged logs, a skipped line stamped later than the first
    kept one); the format needs non-negative, non-decreasing times: when the first kept event is
    stamped before the session's start, times count from it, and a step back keeps the time before it."""
    times = [ev["t"] for ev in events if "t" in ev]
    shift = -min(0.0, times[0]) if times else 0.0
    last = 0.0
    for ev in events:
        if "t" in ev:
            last = ev["t"] = round(max(last, ev["t"] + shift), 3)


# ---------------------------------------------------------------- scenario


def default_window(system_tokens: int, message_tokens: list[int]) -> int:
    """A quarter of the session, rounded to 1,000, at least 4,096 and room for the system prompt
    plus the largest message, so compactions happen and every request can still fit."""
    total = system_tokens + sum(message_tokens)
    quarter = round(total / 4 / 1000) * 1000
    room = -(-int((system_tokens + max(message_tokens, default=0) + 1000) / 0.8) // 1000) * 1000
    return max(4096, quarter, room)


def compactions_from(events: list[dict[str, Any]], boundaries: list[Boundary], notes: list[str]) -> list[dict[str, Any]]:
    """The scenario's `compactions`: each boundary after the event of its last turn (turns and events are one
    to one), its installed messages as events when they repeat one verbatim (Codex keeps the user's own
    messages), else as the harness's text. A boundary before any event or after the last request shapes no
    request and is left out, with a note."""
    out = []
    asks = [i for i, e in enumerate(events) if e["role"] == "assistant"]
    for b in boundaries:
        if b.turns == 0 or not any(a >= b.turns for a in asks):
            notes.append(f"a compaction {'before the first message' if b.turns == 0 else 'after the last request'} "
                         "shapes no request: left out")
            continue
        pos = b.turns - 1
        earlier = {(e["role"], e["text"].strip()): e["id"] for e in events[:pos + 1]
                   if e["role"] in ("user", "assistant") and not e.get("calls") and e["text"].strip()}
        installed: list[dict[str, Any]] = []
        for x in b.installed:
            if isinstance(x, int):
                if x <= pos:
                    installed.append({"kind": "retained", "event": events[x]["id"]})
                continue
            kind, role, text = x
            if not text.strip():
                continue
            ref = earlier.get((role, text.strip())) if kind == "retained" else None
            installed.append({"kind": kind, "event": ref} if ref else
                             {"kind": kind, **({"role": role} if role != "user" else {}), "text": text})
        rc: dict[str, Any] = {"after": events[pos]["id"], "trigger": b.trigger}
        if b.pre_tokens is not None:
            rc["pre_tokens"] = b.pre_tokens
        out.append({**rc, "installed": installed})
    return out


def _sources(truth: dict[str, Any], at: dict[str, str | None], origin: str) -> None:
    """Each derived item's place in the source file, so a person can check it there (`import --review`)."""
    for items in truth.values():
        for item in (x for w in items for x in (w.get("items", ()) if "items" in w else [w])):   # a workstream's
            where = at.get(item.get("from", ""))
            item["source"] = (f"{origin}:{where}" if where and where.isdigit() else f"{origin} {where}" if where
                              else f"{origin} (event {item.get('from')})")


def session_tokens(data: dict[str, Any]) -> int:
    """A scenario dict's length for `--min-tokens`: its messages' texts and tool calls, as the harness counts them."""
    tok = tokenizer()
    return sum(tok.count(e.get("text", "")) + tok.count(calls_text(Call(c["id"], c["tool"], c.get("args") or {})
                                                                    for c in e.get("calls") or ()))
               for e in data["events"])


def recorded_peak(s: Scenario, tok) -> int:
    """The largest request the source harness's own compactions leave, in this suite's tokens: the window the
    harness lived in, so `recorded` fits it and every other strategy compacts under the same budget."""
    size = {e.id: tok.count(e.text) + tok.count(calls_text(e.calls)) + PER_MESSAGE for e in s.events}
    after = {rc.after: rc for rc in s.compactions}
    ctx, peak = 0, 0
    for e in s.events:
        if e.role == "assistant":
            peak = max(peak, ctx)
        ctx += size[e.id]
        if e.id in after:
            ctx = sum(size[x.event] if x.event else tok.count(x.text) + PER_MESSAGE for x in after[e.id].installed)
    return peak + tok.count(s.system) + PER_MESSAGE + max(size.values())


def redact(tr: Transcript) -> dict[str, Any]:
    """The secret scan (secrets.py) over everything of a transcript that reaches the scenario file, in place;
    returns what it found, for the scenario's provenance."""
    scan = Scan()
    tr.system = scan.text(tr.system)
    for turn in tr.turns:
        turn.text = scan.text(turn.text)
        turn.calls = [(src, tool, scan.value(args)) for src, tool, args in turn.calls]
    for b in tr.boundaries:
        b.installed = [x if isinstance(x, int) else (x[0], x[1], scan.text(x[2])) for x in b.installed]
    return scan.record()


def scenario(tr: Transcript, *, user: str, window: int | None, tags: list[str],
             provenance: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[str]]:
    """The scenario dict for a transcript, its secrets redacted, validated; raises BadInput naming the transcript."""
    found = redact(tr)
    events, notes = events_from(tr.turns)
    if not any(e["role"] == "assistant" for e in events):
        raise BadInput(f"{tr.origin}: no assistant message, nothing to replay")
    data: dict[str, Any] = {"scenario": 1, "id": tr.id, "title": tr.title, "user": user, "window": window or MAX_WINDOW,
                            "tags": ["imported", *tags], "system": tr.system or "(no system prompt in the source)",
                            "events": events, "truth": derive_truth(events, tr.system)}
    _sources(data["truth"], {e["id"]: turn.at for e, turn in zip(events, tr.turns)}, tr.origin)
    compactions = compactions_from(events, tr.boundaries, notes)
    if compactions:
        data["compactions"] = compactions
    data["provenance"] = {**(provenance or {"format": tags[0] if tags else "unknown"}), **found}
    if found["secrets_redacted"]:
        notes.append(f"{found['secrets_redacted']} secret(s) redacted ({', '.join(found['secret_kinds'])})")
    parsed, ck = check(data)
    if parsed is None:
        raise BadInput([f"{tr.origin}: {ck.display(p)}: {m}" for p, m in ck.problems])
    if window is None:
        tok = tokenizer()
        data["window"] = default_window(tok.count(parsed.system), [tok.count(e.text) + tok.count(calls_text(e.calls))
                                                                   for e in parsed.events])
        if parsed.compactions:
            data["window"] = max(data["window"], -(-int(recorded_peak(parsed, tok) / 0.85) // 1000) * 1000)
    return data, notes


def dump(data: dict[str, Any], path: Path) -> None:
    """JSON (one event per line) or YAML, by the file's suffix; an unwritable path is BadInput naming it."""
    if path.suffix in (".yaml", ".yml"):
        import yaml

        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120)
    else:
        text = dumps(data)
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:   # half a surrogate pair from a source read without read_json (hf:)
        raise BadInput(f"{path}: not written: the transcript holds a lone UTF-16 surrogate, not a character")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw)
    except OSError as exc:
        raise BadInput(f"{path}: cannot write: {exc.strerror or exc}")


def dumps(data: dict[str, Any]) -> str:
    """Scenario JSON with one event / truth item / probe per line: greppable, small diffs, fast to load."""
    out = []
    for key, value in data.items():
        if key in ("events", "probes", "compactions") and value:
            rows = ",\n".join("  " + json.dumps(v, ensure_ascii=False) for v in value)
            out.append(f"{json.dumps(key)}: [\n{rows}\n]")
        elif key == "truth" and value:
            sections = [f"  {json.dumps(name)}: [\n" + ",\n".join("    " + json.dumps(v, ensure_ascii=False) for v in items) + "\n  ]"
                        for name, items in value.items()]
            out.append(f"{json.dumps(key)}: {{\n" + ",\n".join(sections) + "\n}")
        else:
            out.append(f"{json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    return "{\n" + ",\n".join(out) + "\n}\n"
