"""Failed compactions and non-answers, read from compactions.jsonl: what the console, the report's first screen
and the run's exit code say about a writer that did not do its task.

A compaction record is a failure when the strategy's own step failed (`ok: false`): a writer error, an answer
that is not one (bench.harness.answers: cut at max_tokens, empty, a loop, a chat reply, "None." under every
heading), a checkpoint still invalid after its repair; its fallback (drop the oldest turns, vibey's
mechanical step) then ran. A writer's final answer (a call without tool calls) that the harness judged no
answer carries `non_answer` on its call, whatever the strategy did with it (an external program may keep it):
a cell whose every compaction was answered only with non-answers is flagged.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from bench.harness.logs import KEY_COLUMNS, read_jsonl
from bench.harness.model import is_stress


@dataclass
class CellFailures:
    cell: str
    attempts: int = 0                  # compaction records
    failed: int = 0                    # ok: false
    why: Counter = field(default_factory=Counter)        # failed compactions by the first words of their error
    fallbacks: Counter = field(default_factory=Counter)  # fallbacks taken by failed compactions
    answered: int = 0                  # compactions with at least one final writer answer
    non_answers: int = 0               # ... all of whose final answers were non-answers
    non_answer_why: Counter = field(default_factory=Counter)

    @property
    def flagged(self) -> bool:
        """The writer answered every compaction of the cell (that it answered at all) with a non-answer."""
        return self.answered > 0 and self.non_answers == self.answered

    @property
    def all_failed(self) -> bool:
        return self.attempts > 0 and self.failed == self.attempts

    def strategy(self) -> str:
        parts = self.cell.split("/")
        return parts[1] if len(parts) >= 2 else "?"

    def writer(self) -> str:
        parts = self.cell.split("/")
        return "/".join(parts[2:-2]) if len(parts) >= len(KEY_COLUMNS) else "?"


def short(error: Any) -> str:
    """An error's kind: its words before the first colon ("not a summary", "model failed", "garbled answer")."""
    text = str(error or "").strip()
    return (text.split(":", 1)[0] or "failed")[:60]


def read(records: Iterable[dict[str, Any]]) -> dict[str, CellFailures]:
    """Per cell (in the order first seen) what failed, from compaction records."""
    out: dict[str, CellFailures] = {}
    for r in records:
        cell = str(r.get("cell", "?"))
        c = out.setdefault(cell, CellFailures(cell))
        c.attempts += 1
        if r.get("ok") is not True:
            c.failed += 1
            c.why[short(r.get("error"))] += 1
            if r.get("fallback"):
                c.fallbacks[short(r.get("fallback"))] += 1
        finals = [k for k in r.get("calls") or () if isinstance(k, dict) and not k.get("error")
                  and "finish" in k and not k.get("tool_calls")]
        if finals:
            c.answered += 1
            if all(k.get("non_answer") for k in finals):
                c.non_answers += 1
                c.non_answer_why[str(finals[-1]["non_answer"]).split(" (")[0]] += 1
    return out


def of_run(run_dir: Path) -> dict[str, CellFailures]:
    return read(read_jsonl(Path(run_dir) / "compactions.jsonl"))


def _counts(counter: Counter) -> str:
    return ", ".join(f"{why} {n}" for why, n in counter.most_common())


def cell_note(c: CellFailures) -> list[str]:
    """What a cell's console line must say about its failures."""
    notes = []
    if c.failed:
        fell = f"; fell back: {_counts(c.fallbacks)}" if c.fallbacks else ""
        notes.append(f"{c.failed} of {c.attempts} compactions failed ({_counts(c.why)}{fell})")
    if c.flagged:
        notes.append(f"NON-ANSWERS: the writer answered every compaction with no answer ({_counts(c.non_answer_why)})")
    return notes


def sentences(cells: dict[str, CellFailures]) -> list[str]:
    """Per strategy and writer with failures, one sentence (a stress profile's failures are by design, said as
    such); then one per writer whose non-answers a cell was answered with throughout."""
    by: dict[tuple[str, str], list[CellFailures]] = {}
    for c in cells.values():
        by.setdefault((c.strategy(), c.writer()), []).append(c)
    out = []
    for (strategy, writer), group in sorted(by.items()):
        failed, attempts = sum(c.failed for c in group), sum(c.attempts for c in group)
        if not failed:
            continue
        why, fell = Counter(), Counter()
        for c in group:
            why.update(c.why)
            fell.update(c.fallbacks)
        whole = sum(c.all_failed for c in group)
        text = (f"Failed compactions: {strategy} with `{writer}`: {failed} of {attempts} ({_counts(why)})"
                + (f"; the fallback ran instead ({_counts(fell)})" if fell else "")
                + (f"; every compaction failed in {whole} of {len(group)} cells — their scores are the fallback's, "
                   "not the writer's" if whole else "") + ".")
        if is_stress(writer):
            text += " (under a stress profile)"
        out.append(text)
    flagged = [c for c in cells.values() if c.flagged]
    for writer in sorted({c.writer() for c in flagged}):
        mine = [c for c in flagged if c.writer() == writer]
        why = Counter()
        for c in mine:
            why.update(c.non_answer_why)
        names = ", ".join(c.cell for c in mine[:4]) + (" ..." if len(mine) > 4 else "")
        out.append(f"Non-answers: `{writer}` answered every compaction of {len(mine)} cell(s) with no answer "
                   f"({_counts(why)}): {names}.")
    return out


__all__ = ["CellFailures", "read", "of_run", "cell_note", "sentences", "short"]
