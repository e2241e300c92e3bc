"""SWE-agent trajectories (`.traj`): `history` is OpenAI-style chat with `tool_call_ids`.

Function-calling runs answer each call with a `tool` message; older text-mode
runs put the command in the assistant's `action` and its output in the next
message marked `message_type: observation`, which we pair as a call and result.
A file without `history` falls back to `trajectory` steps (action, observation,
response).
"""
from __future__ import annotations

from typing import Any

from bench.errors import BadInput
from bench.scenarios.importers.common import Transcript, Turn, text_of
from bench.scenarios.importers.openai_chat import kind, openai_calls


def read(raw: Any, origin: str, stem: str) -> list[Transcript]:
    if not isinstance(raw, dict) or not isinstance(raw.get("history") or raw.get("trajectory"), list):
        raise BadInput(f"{origin}: not a SWE-agent trajectory (expected a mapping with a 'history' or 'trajectory' list)")
    title = f"SWE-agent: {stem}"
    if isinstance(raw.get("history"), list) and raw["history"]:
        return [_from_history(raw["history"], origin, stem, title)]
    return [_from_steps(raw["trajectory"], origin, stem, title)]


def _from_history(history: list[Any], origin: str, sid: str, title: str) -> Transcript:
    system, turns, problems = [], [], []
    pending_action: str | None = None   # text-mode: the call id waiting for its observation
    for n, m in enumerate(history):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            problems.append(f"{origin}: history[{n}]: expected a mapping with a 'role'")
            continue
        role, text = m["role"], text_of(m.get("content"))
        if role == "system":
            system.append(text)
        elif role == "assistant":
            calls = openai_calls(m.get("tool_calls"), f"{origin}: history[{n}]", problems)
            if not calls and isinstance(m.get("action"), str) and m["action"].strip():
                pending_action = f"action-{n}"
                calls = [(pending_action, "bash", {"command": m["action"]})]
            turns.append(Turn("assistant", text, calls=calls))
        elif role == "tool":
            ids = m.get("tool_call_ids") or [m.get("tool_call_id")]
            if not isinstance(ids, list):
                problems.append(f"{origin}: history[{n}]: tool_call_ids: expected a list of call ids, got {kind(ids)}")
                continue
            turns.append(Turn("tool", text, call=str(ids[0])))
        elif role == "user" and m.get("message_type") == "observation" and pending_action:
            turns.append(Turn("tool", text, call=pending_action))
            pending_action = None
        elif role == "user":
            turns.append(Turn("user", text))
        else:
            problems.append(f"{origin}: history[{n}]: unknown role '{role}'")
    if problems:
        raise BadInput(problems)
    return Transcript(sid, title, "\n\n".join(system), turns, origin)


def _from_steps(steps: list[Any], origin: str, sid: str, title: str) -> Transcript:
    turns = []
    for n, step in enumerate(steps):
        if not isinstance(step, dict):
            raise BadInput(f"{origin}: trajectory[{n}]: expected a mapping")
        cid = f"step-{n}"
        turns.append(Turn("assistant", text_of(step.get("response") or step.get("thought")),
                          calls=[(cid, "bash", {"command": text_of(step.get("action"))})]))
        turns.append(Turn("tool", text_of(step.get("observation")), call=cid))
    return Transcript(sid, title, "", turns, origin)
