"""The scorer's trail of one cell, for the readers that show it (the viewer): what changed in the verdicts
from one agent request to the next, and which truth items each message of an agent request shows.

Written by `score_cell` as it walks the cell (verdicts.jsonl, one line per agent request whose verdicts
changed, then one line with the marks), so a reader shows what was scored without scoring again: no
tokenizer, no Judge, no second walk. Only changes are written (most requests change nothing) and a
message's marks once per cell, by its log key (id and hash, as requests.jsonl names it).
"""
from __future__ import annotations

import json
from typing import IO, Any

from bench.harness.logs import VERDICTS
from bench.scoring.checks import Hits, Judge


def keys(h: Hits | None) -> list[str]:
    """The truth items a message's findings show, as "metric:item" (the findings the scorer merges)."""
    if h is None or h.empty:
        return []
    out = [f"goal:{x}" for x in sorted(h.missions)]
    out += [f"constraint:{x}" for x in sorted(h.constraints)]
    out += [f"stale_constraint:{x}" for x in sorted(h.quoted | h.held)]
    out += [f"leakage:{x}" for x in sorted(h.leaks)]
    out += [f"fact:{x}" for x in sorted(h.facts)]
    out += [f"decision:{x}" for x in sorted(h.decisions)]
    out += [f"rejected_back:{x}" for x in sorted(h.revived)]
    out += [f"user_words:{x}" for x in sorted(h.words)]
    return out


class Trail:
    """Collects one cell's verdict changes and message marks while `score_cell` walks it."""

    def __init__(self, cell: str, judge: Judge):
        self.cell, self.judge = cell, judge
        self.lines: list[dict[str, Any]] = []
        self.marks: dict[str, list[str]] = {}
        self._state: dict[str, tuple[float, str]] = {}
        self._last: list | None = None

    def add(self, r: Any, checks: list) -> None:
        """One judged agent request: its new messages' marks, and the items whose verdict changed (set to
        [score, detail]) or left force (gone)."""
        pos = 0
        for s in r.record.get("seq") or []:
            if isinstance(s, list):
                pos += s[1] - s[0]
                continue
            key = f"{s.get('id')}:{s.get('h')}"
            if key not in self.marks and pos < len(r.messages):
                self.marks[key] = keys(self.judge.shows(r.messages[pos]))
            pos += 1
        if checks is self._last:         # `judged` repeats an unchanged request's very checks
            return
        self._last = checks
        now = {f"{c.metric}:{c.item}": (c.score, c.detail) for c in checks}
        changed = {k: list(v) for k, v in now.items() if self._state.get(k) != v}
        gone = [k for k in self._state if k not in now]
        self._state = now
        if changed or gone:
            self.lines.append({"cell": self.cell, "i": r.i, "set": changed, "gone": gone})

    def write(self, fh: IO[str]) -> None:
        for line in self.lines:
            fh.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
        marks = {k: v for k, v in self.marks.items() if v}
        fh.write(json.dumps({"cell": self.cell, "marks": marks}, ensure_ascii=False, separators=(",", ":")) + "\n")


__all__ = ["VERDICTS", "Trail", "keys"]
