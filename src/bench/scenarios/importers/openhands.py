"""OpenHands event streams: JSONL with one task a line (`{instance_id, history: [...]}`),
or a JSON list of events, or one record.

Mapping: the agent's `system` action is the system prompt; a user `message`
is a user event; an agent action with tool-call metadata is an assistant event
whose call is answered by the observation that names it as `cause`; agent
`message`/`finish` actions are plain assistant text; `recall` actions and their
observations are OpenHands' own context plumbing and are left out; an
observation nothing caused (an error report) becomes a harness message.
"""
from __future__ import annotations

from typing import Any

from bench.errors import BadInput
from bench.scenarios.importers.common import Boundary, Transcript, Turn, each_record, seconds, slug, text_of
from bench.scenarios.importers.openai_chat import kind, tool_name

SKIP_ACTIONS = ("recall", "system", "change_agent_state")
CONDENSING = ("condensation", "condensation_request")
SKIP_OBSERVATIONS = ("recall", "agent_state_changed", "null")


def read(raw: Any, origin: str, stem: str) -> list[Transcript]:
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        raise BadInput(f"{origin}: expected OpenHands records (JSONL, one task a line) or a list of events")
    if all(isinstance(e, dict) and ("action" in e or "observation" in e) for e in raw):
        return [transcript(raw, origin, stem, f"OpenHands: {stem}")]

    def one(i: int, rec: Any, where: str) -> Transcript:
        if not isinstance(rec, dict) or not isinstance(rec.get("history"), list):
            raise BadInput(f"{where}: no 'history' list of events")
        name = str(rec.get("instance_id") or i)
        return transcript(rec["history"], where, slug(f"{stem}-{name}"), f"OpenHands: {name}")
    return each_record(raw, origin, one)


def transcript(history: list[Any], origin: str, sid: str, title: str) -> Transcript:
    system, turns, problems = "", [], []
    # Ids and causes pair as strings (that is how events_from pairs them); anything but a
    # string or a number is not an event id and is reported below.
    caused = {str(e["cause"]) for e in history if isinstance(e, dict) and "observation" in e and _is_id(e.get("cause"))}
    start, placed = None, 0
    boundaries: list[Boundary] = []
    turn_of: dict[str, int] = {}          # OpenHands event id -> the turn it became
    view: list[str] = []                  # the ids of the events the agent's context holds (OpenHands' View)
    requested = ""                        # who asked for a condensation since the last one
    for n, e in enumerate(history):
        for turn in turns[placed:]:
            turn.at = f"history[{n - 1}]"
        if len(turns) > placed and isinstance(history[n - 1], dict) and _is_id(history[n - 1].get("id")):
            turn_of[str(history[n - 1]["id"])] = placed
        placed = len(turns)
        if isinstance(e, dict) and _is_id(e.get("id")) and e.get("action") not in CONDENSING:
            view.append(str(e["id"]))
        if not isinstance(e, dict):
            problems.append(f"{origin}: history[{n}]: expected a mapping")
            continue
        t = seconds(e.get("timestamp"))
        start = t if start is None and t is not None else start
        rel = None if t is None or start is None else t - start
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        if "action" in e:
            action, src = e["action"], e.get("source")
            if action == "system":
                system = text_of(args.get("content")) or text_of(e.get("message"))
            elif action == "condensation_request":
                requested = "manual" if src == "user" else "auto"
            elif action == "condensation":
                view = _condense(view, args, turns, turn_of, boundaries, requested or "unknown")
                requested = ""
            elif action in SKIP_ACTIONS:
                continue
            elif src == "user":
                turns.append(Turn("user", text_of(args.get("content")) or text_of(e.get("message")), t=rel))
            elif src == "agent":
                meta = e.get("tool_call_metadata") or {}
                if not isinstance(meta, dict):
                    problems.append(f"{origin}: history[{n}]: tool_call_metadata: expected a mapping, got {kind(meta)}")
                    continue
                if e.get("id") is not None and not _is_id(e["id"]):
                    problems.append(f"{origin}: history[{n}]: id: expected an event id (a string or number), "
                                    f"got {kind(e['id'])}")
                    continue
                thought = text_of(args.get("thought")) or (text_of(args.get("content")) if action == "message" else "")
                if action == "finish":
                    thought = "\n\n".join(x for x in (thought, text_of(args.get("final_thought"))) if x)
                calls = []
                if e.get("id") is not None and str(e["id"]) in caused:
                    call_args = {k: v for k, v in args.items() if k not in ("thought", "is_input")}
                    name = tool_name(meta.get("function_name") or action,
                                     f"{origin}: history[{n}]: tool_call_metadata.function_name (or action)", problems)
                    calls = [(str(e["id"]), name, call_args)]
                turns.append(Turn("assistant", thought or text_of(e.get("message")), calls=calls, t=rel))
            else:
                turns.append(Turn("background", text_of(e.get("message")), source="harness", t=rel))
        elif "observation" in e:
            if e["observation"] in SKIP_OBSERVATIONS:
                continue
            text = text_of(e.get("content")) or text_of(e.get("message"))
            cause = e.get("cause")
            if cause is not None and not _is_id(cause):
                problems.append(f"{origin}: history[{n}]: cause: expected an event id (a string or number), got {kind(cause)}")
                continue
            turns.append(Turn("tool", text, call=str(cause), t=rel) if cause is not None
                         else Turn("background", text, source="harness", t=rel))
        else:
            problems.append(f"{origin}: history[{n}]: neither an action nor an observation")
    for turn in turns[placed:]:
        turn.at = f"history[{len(history) - 1}]"
    if problems:
        raise BadInput(problems)
    return Transcript(sid, title, system, turns, origin, boundaries)


def _condense(view: list[str], args: dict[str, Any], turns: list[Turn], turn_of: dict[str, int],
              boundaries: list[Boundary], trigger: str) -> list[str]:
    """OpenHands' condensation: the events it forgets leave the view, its summary (if any) goes in at
    `summary_offset`; the view left is what the agent continued from. Returns that view."""
    ids = args.get("forgotten_event_ids")
    gone = {str(x) for x in ids} if isinstance(ids, list) else set()
    lo, hi = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
    if isinstance(lo, int) and isinstance(hi, int):
        gone |= {str(x) for x in range(lo, hi + 1)}
    kept = [x for x in view if x not in gone]
    installed: list[tuple[str, str, str] | int] = [turn_of[x] for x in kept if x in turn_of]
    summary = text_of(args.get("summary"))
    if summary.strip():
        offset = args.get("summary_offset") if isinstance(args.get("summary_offset"), int) else 0
        before = sum(1 for x in kept[:offset] if x in turn_of)
        installed.insert(before, ("summary", "user", summary))
    boundaries.append(Boundary(len(turns), trigger, None, installed))
    return kept


def _is_id(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)
