"""recoverable: what a summary drops can be looked up again (Cursor's "Dynamic context discovery", seed 001).

Two moves. A long tool output goes to a file the moment it arrives and the context keeps a short pointer
in its place (the path, its size, its first lines; the call keeps its result), with no model call, so far
fewer summaries are forced. When a summary is still needed (as naive's: the writer gets the context, the
pointers in it), it carries a pointer to the full transcript, so a detail it left out can be searched for.
"""
from __future__ import annotations

from bench.harness.messages import Message, Part, make
from bench.harness.strategy import turn_units
from bench.tokens import PER_MESSAGE

from bench.strategies.edits import check_share, window_share
from bench.strategies.summary import Summarizing, prompt

PROMPT = prompt("naive.md")
TRANSCRIPT = "transcripts/{scenario}.jsonl"


class Recoverable(Summarizing):
    PROMPT = PROMPT

    def __init__(self, long: float | int = 0.05, head_lines: int = 5, budget: float | int = 0.1,
                 retain: float | int = 0.2, trigger: float | int | None = None):
        super().__init__(budget, trigger)
        check_share(long, "long")
        check_share(retain, "retain")
        if isinstance(head_lines, bool) or not isinstance(head_lines, int) or head_lines < 0:
            raise ValueError(f"head_lines must be a whole number >= 0, got {head_lines!r}")
        self.long_at, self.head_lines, self.retain_at = long, head_lines, retain

    def begin(self, session) -> None:
        super().begin(session)
        self.saved: list[str] = []

    def add(self, msg: Message) -> None:
        long = window_share(self.long_at, self.session.window, "long")
        if msg.role == "tool" and msg.tokens > long:
            msg = self.pointer(msg)
        super().add(msg)

    def pointer(self, msg: Message) -> Message:
        """The tool result as a pointer to the file holding it: path, size, first lines."""
        path = f"tool-outputs/{msg.id}.txt"
        self.saved.append(path)
        lines = msg.text.splitlines()
        head = "\n".join(lines[:self.head_lines])
        text = (f"[Output saved to {path}: {len(lines)} lines, {msg.tokens} tokens. The first {min(len(lines), self.head_lines)} "
                f"lines:]\n{head}\n[Read {path} for the rest.]")
        return make(self.session.tok, id=msg.id, role="tool", text=text, tag="pointer", t=msg.t, call_id=msg.call_id,
                    tool=msg.tool)

    def rebuild(self, text: str) -> tuple[list[Message], dict]:
        path = TRANSCRIPT.format(scenario=self.session.scenario)
        n = len(self.session.record)
        frame = (f"[Harness: summary]\nA summary of the session so far, written for you by the harness's writer (not "
                 f"the user). The full transcript is in {path} (messages #1-#{n}): search it for anything this "
                 "summary leaves out.\n\n")
        summary = self.session.message(id=f"summary-{self.rounds}", role="user", text=frame + text, tag="summary",
                                       parts=(Part("frame", frame), Part("summary", text)))
        retain = window_share(self.retain_at, self.session.window, "retain")
        units = turn_units([m for m in self.messages if m.tag != "summary"])
        kept, used = [], 0
        for unit in reversed(units[1:] if len(units) > 1 else units):
            cost = sum(m.tokens + PER_MESSAGE for m in unit)
            if used + cost > retain:
                break
            kept[:0], used = unit, used + cost
        return [summary, *kept], {"transcript": path, "pointers": list(self.saved), "verbatim": [m.id for m in kept]}
