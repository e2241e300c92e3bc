"""Harbor's Agent Trajectory Interchange Format (ATIF, `trajectory.json`): `{schema_version, session_id, agent,
steps: [...]}`, one trajectory a file (or a JSON list / JSONL of them).

A `system` step before any other is the system prompt; a `user` step is the user's message; an `agent` step is
an assistant event with its `tool_calls`, and each `observation.results` entry answers the call its
`source_call_id` names (an entry without one becomes a harness message). ATIF has no compaction record of its
own (v1.2 lets a system step record "context management"), so a compaction is a later `system` step whose
`extra` names one: `extra.compaction` true, or `extra.type` / `extra.kind` `compaction` or `compact_boundary`
(as converters write Claude Code's boundary). Its `message` (else the `content` of its observation results) is
what the harness installed, `extra.trigger` and `extra.pre_tokens` (or `preTokens`, `tokens_before`) its
trigger and size; a `user` step right after it marked `extra.is_compact_summary` is its summary too. Any other
later system step is a harness message.
"""
from __future__ import annotations

from typing import Any

from bench.errors import BadInput
from bench.scenarios.importers.common import Boundary, Transcript, Turn, each_record, parse_args, seconds, slug, text_of
from bench.scenarios.importers.openai_chat import kind, tool_name

MARKS = ("compaction", "compact_boundary", "context_compaction")


def read(raw: Any, origin: str, stem: str) -> list[Transcript]:
    records = raw if isinstance(raw, list) else [raw]

    def one(i: int, rec: Any, where: str) -> Transcript:
        if not isinstance(rec, dict) or not isinstance(rec.get("steps"), list):
            raise BadInput(f"{where}: expected an ATIF trajectory (a mapping with a 'steps' list)")
        sid = slug(f"{stem}-{i}") if len(records) > 1 else stem
        agent = rec.get("agent") if isinstance(rec.get("agent"), dict) else {}
        return transcript(rec["steps"], where, sid, f"{agent.get('name') or 'agent'} trajectory {rec.get('session_id') or sid}")
    return each_record(records, origin, one) if len(records) > 1 else [one(0, records[0], origin)]


def transcript(steps: list[Any], origin: str, sid: str, title: str) -> Transcript:
    system, turns, boundaries, problems = "", [], [], []
    noted: set[int] = set()     # boundaries whose summary so far is the marker step's own message
    start = None
    for n, st in enumerate(steps):
        where, before = f"{origin}: steps[{n}]", len(turns)
        if not isinstance(st, dict):
            problems.append(f"{where}: expected a mapping, got {kind(st)}")
            continue
        t = seconds(st.get("timestamp"))
        start = t if start is None and t is not None else start
        rel = None if t is None or start is None else t - start
        src, text = st.get("source"), text_of(st.get("message"))
        extra = st.get("extra") if isinstance(st.get("extra"), dict) else {}
        results = (st.get("observation") or {}).get("results") if isinstance(st.get("observation"), dict) else None
        results = results if isinstance(results, list) else []
        if src == "system" and not turns and not boundaries:
            system = "\n\n".join(x for x in (system, text) if x)
        elif src == "system" and _marked(extra):
            pre = next((extra[k] for k in ("pre_tokens", "preTokens", "tokens_before") if isinstance(extra.get(k), int)), None)
            b = Boundary(len(turns), extra.get("trigger") if extra.get("trigger") in ("auto", "manual") else "unknown", pre)
            body = text or "\n\n".join(text_of(r.get("content")) for r in results if isinstance(r, dict))
            if body.strip():
                b.installed.append(("summary", "user", body))
                noted.add(id(b))
            boundaries.append(b)
        elif src == "user" and extra.get("is_compact_summary") and boundaries and boundaries[-1].turns == len(turns):
            b = boundaries[-1]    # the summary step holds what was installed; the marker's own message was a note
            b.installed = [x for x in b.installed if not (x[0] == "summary" and id(b) in noted)] + [("summary", "user", text)]
            noted.discard(id(b))
        elif src == "user":
            turns.append(Turn("user", text, t=rel))
        elif src == "system":
            turns.append(Turn("background", text, source="harness", t=rel))
        elif src == "agent":
            calls = []
            for j, c in enumerate(st.get("tool_calls") or []):
                if not isinstance(c, dict):
                    problems.append(f"{where}: tool_calls[{j}]: expected a mapping, got {kind(c)}")
                    continue
                name = tool_name(c.get("function_name"), f"{where}: tool_calls[{j}].function_name", problems)
                calls.append((str(c.get("tool_call_id")), name, parse_args(c.get("arguments"))))
            turns.append(Turn("assistant", text, calls=calls, t=rel))
            for r in results:
                if not isinstance(r, dict):
                    continue
                body = text_of(r.get("content"))
                call = r.get("source_call_id")
                turns.append(Turn("tool", body, call=str(call), t=rel) if call is not None else
                             Turn("background", body, source="harness", t=rel))
        else:
            problems.append(f"{where}: source '{src}' (expected system, user or agent)")
        for turn in turns[before:]:
            turn.at = f"steps[{n}]"
    if problems:
        raise BadInput(problems)
    return Transcript(sid, title, system, turns, origin, boundaries)


def _marked(extra: dict[str, Any]) -> bool:
    return any(extra.get(k) is True for k in MARKS) or extra.get("type") in MARKS or extra.get("kind") in MARKS
