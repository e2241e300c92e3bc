"""Structural faults of every compaction (issue 24, item 5): deterministic, model-free checks of the context
a compaction installs, read from the logs like every score.

Users meet these before any retention loss: a provider rejects a tool result without its call, an empty or
missionless history leaves the agent with nothing to do, a file attached twice is paid twice, an
instruction already handled shown as the latest message gets carried out again, a compaction that leaves the
context over its trigger compacts again at once, and a strategy that compacts before every request makes no
progress at all. Each is checked on the first agent request after each successful compaction (the
replacement context the model really gets), against the scenario's record and truth; each fault is one
checks.csv row named by compaction and request. The oracle never compacts, so it has none.
"""
from __future__ import annotations

from bisect import bisect_left
from collections import Counter
import weakref
from typing import Any

from bench.harness.messages import EVENT_TAGS, Message
from bench.harness.strategy import default_reserve, trigger_limit
from bench.text import normalize
from bench.scoring.metric import CELLS, CONSOLE, HEADLINE, Family, Metric

KINDS = {
    "missionless": "the replacement context holds neither a mission in force (its keys) nor any summary",
    "orphan_call": "a tool call without its result",
    "orphan_result": "a tool result without its call",
    "duplicate": "the same file or instruction attached twice (more often than the record has it)",
    "replayed": "a user instruction already handled, placed after the last assistant turn as if pending",
    "over_trigger": "the context after the compaction is still above the compaction trigger",
    "no_progress": "a third material compaction in a row (at consecutive agent requests: a writer call, or 20% of the "
                   "context removed) with no scripted progress",
}
COLUMN = "structural_faults"
FAMILY = Family((
    Metric(COLUMN, "lower", "structural faults of the cell's compactions (" + ", ".join(KINDS) + "; each named in "
           "checks.csv, `point=fault`): deterministic and model-free", short="faults", label="structural faults",
           aggregate="total", audited=True, views={CONSOLE, HEADLINE, CELLS}),
    *(Metric(f"fault_{k}", "info", f"structural faults of kind {k}: {why}", aggregate="total") for k, why in KINDS.items()),
))
SUMMARY_TAGS = frozenset(("placeholder", "probe", "next"))   # non-event tags that are no summary
MIN_DUP = 40          # characters: a shorter text repeated ("ok", "deleted") is no attached file
MATERIAL = 0.20       # a compaction without a writer call counts toward `no_progress` when it removes this share


def material(c: dict[str, Any]) -> bool:
    """Whether a compaction rebuilds the context: it called a writer, or removed at least MATERIAL of it. Masking a
    few old tool outputs to fit (a few percent, no writer) leaves the agent where it was; a loop of rebuilds is
    the one that makes no progress."""
    before, after = int(c.get("before") or 0), int(c.get("after") or 0)
    return bool(c.get("calls")) or (before > 0 and before - after >= MATERIAL * before)


class Faults:
    """Fed a cell's requests in order (`add`); `columns()` the counts, `rows(base)` one checks.csv row per
    fault. `compactions`: the cell's compactions.jsonl records."""

    def __init__(self, cell: Any, judge: Any, compactions: list[dict[str, Any]]):
        self.judge, self.timeline = judge, judge.timeline
        window = int(cell.window)
        reserve, margin = default_reserve(window)
        reserve = reserve if getattr(cell, "reserve_output", None) is None else cell.reserve_output
        margin = margin if getattr(cell, "margin", None) is None else cell.margin
        self.limit = trigger_limit(window, reserve, margin)
        self.starts = sorted((int(c["request"]), int(c.get("n") or 0)) for c in compactions if c.get("ok"))
        self.material = {int(c["request"]) for c in compactions if c.get("ok") and material(c)}
        self.next = 0                       # the next compaction whose first agent request is awaited
        self.found: list[dict[str, Any]] = []
        self.run: list[int] = []            # record positions of the current run of compacted agent requests
        self.progress = self._progress(judge.s)
        self.record_pos = {m.id: i for i, m in enumerate(judge.rendered)}
        self.norms: dict[int, tuple[Message, str, list[str]]] = {}   # id(message) -> (it, normalised, long segments)

    @staticmethod
    def _progress(scenario: Any) -> list[int]:
        """Record positions of scripted progress: an item finished, a mission ended, a user's message."""
        pos = scenario.index()
        t = scenario.truth
        marks = [pos[x] for x in (*(it.done for w in t.workstreams for it in w.items),
                                  *(m.until for m in t.mission)) if x in pos]
        marks += [i for i, e in enumerate(scenario.events) if e.role == "user"]
        return sorted(marks)

    def add(self, r: Any) -> None:
        if r.kind != "agent":
            return
        compacted = heavy = False
        while self.next < len(self.starts) and self.starts[self.next][0] <= r.i:
            compacted, n = True, self.starts[self.next][1]
            heavy = heavy or self.starts[self.next][0] in self.material
            self.next += 1
        pos = self.timeline.pos.get(r.record.get("event"), 0)
        self.run = [*self.run, pos] if heavy else []
        if not compacted:
            return
        for kind, detail in self.check(r, pos):
            self.found.append({"n": n, "request": r.i, "event": r.record.get("event"), "kind": kind,
                               "detail": detail})

    def check(self, r: Any, pos: int) -> list[tuple[str, str]]:
        msgs: list[Message] = r.messages
        out: list[tuple[str, str]] = []
        verbatim = self.judge.verbatim
        event = [m for m in msgs if m.tag in EVENT_TAGS and verbatim.get(m.id) == m.hash and m.id != "system"]
        written = [m for m in msgs if not (m.tag in EVENT_TAGS and verbatim.get(m.id) == m.hash)
                   and m.tag not in SUMMARY_TAGS and m.id != "system" and m.text.strip()]
        active = self.timeline.at(pos)
        if not written:
            texts = [self._norm(m)[0] for m in msgs if m.id != "system"]
            held = [x for x in active.missions for keys in ([normalize(k) for k in (x.keys or (x.text,))],)
                    if any(all(k in t for k in keys) for t in texts)]
            if active.missions and not held:
                out.append(("missionless", "no summary, and no mission in force is held: "
                            + ", ".join(m.id for m in active.missions)))
            elif not active.missions and not any(m.role == "user" and m.tag == "user" for m in event):
                out.append(("missionless", "no summary and no user message: the history was replaced by nothing"))
        calls = {c.id for m in msgs if m.role == "assistant" for c in m.calls}
        results = {m.call_id for m in msgs if m.role == "tool" and m.call_id}
        if calls - results:
            out.append(("orphan_call", "calls without their result: " + _ids(calls - results)))
        if results - calls:
            out.append(("orphan_result", "results without their call: " + _ids(results - calls)))
        out.extend(self._duplicates(msgs, pos))
        last_assistant = max((i for i, m in enumerate(msgs) if m.role == "assistant"), default=-1)
        asked_before = max((i for i, e in enumerate(self.judge.s.events[:pos]) if e.role == "assistant"), default=-1)
        replayed = [m.id for m in msgs[last_assistant + 1:] if m.tag == "user" and m.role == "user"
                    and verbatim.get(m.id) == m.hash and self.record_pos.get(m.id, pos) < asked_before]
        if replayed:
            out.append(("replayed", "handled already, shown as pending: " + _ids(replayed)))
        if r.tokens > self.limit:
            out.append(("over_trigger", f"{r.tokens} tokens after the compaction, trigger {self.limit}"))
        if len(self.run) >= 3:
            first = self.run[-3]
            if not any(first < p < pos for p in self.progress):
                out.append(("no_progress", f"rebuilt the context before {len(self.run)} agent requests in a row "
                            "with no item finished and no user message"))
        return out

    def _duplicates(self, msgs: list[Message], pos: int) -> list[tuple[str, str]]:
        """A text (a message, or a part a strategy wrote) present more often than the record before this
        request has it: the same message twice, or a file or instruction copied beside itself."""
        seen: Counter = Counter()
        names: dict[str, str] = {}
        for m in msgs:
            if m.id == "system" or m.tag in SUMMARY_TAGS:
                continue
            for t in self._norm(m)[1]:
                seen[t] += 1
                names.setdefault(t, m.id)
        many = [t for t, n in seen.items() if n > 1]
        if not many:
            return []
        record = _record_texts(self.judge)
        dup = [names[t] for t in many if seen[t] > max(1, bisect_left(record.get(t, ()), pos))]
        return [("duplicate", "attached more than once: " + _ids(dup))] if dup else []

    def _norm(self, m: Message) -> tuple[str, list[str]]:
        """(the message's normalised text, its long segments normalised), once per message object."""
        got = self.norms.get(id(m))
        if got is None or got[0] is not m:
            text = normalize(m.text)
            segs = [t for t in ((text,) if not m.parts else (normalize(p.text) for p in m.parts)) if len(t) >= MIN_DUP]
            got = self.norms[id(m)] = (m, text, segs)
        return got[1], got[2]

    def columns(self) -> dict[str, Any]:
        kinds = Counter(f["kind"] for f in self.found)
        return {COLUMN: len(self.found), **{f"fault_{k}": kinds.get(k, 0) for k in KINDS}}

    def rows(self, base: dict[str, Any]) -> list[dict[str, Any]]:
        return [{**base, "check_point": f["n"] + 1, "point": "fault", "request": f["request"], "event": f["event"],
                 "metric": "fault", "item": f["kind"], "kind": "structural", "score": 1,
                 "detail": f"compaction {f['n']}: {f['detail']}"} for f in self.found]


# per Judge, held weakly (as ledger.full_sizes): a finished scenario's Judge is not kept alive here
_RECORDS: "weakref.WeakKeyDictionary[Any, dict[str, list[int]]]" = weakref.WeakKeyDictionary()


def _record_texts(judge: Any) -> dict[str, list[int]]:
    """Each long normalised event text of a scenario's record -> the positions holding it, once per Judge."""
    index = _RECORDS.get(judge)
    if index is None:
        index = {}
        for i, m in enumerate(judge.rendered):
            t = normalize(m.text)
            if len(t) >= MIN_DUP:
                index.setdefault(t, []).append(i)
        _RECORDS[judge] = index
    return index


def _ids(ids: Any) -> str:
    ids = sorted(ids)
    return ", ".join(ids[:5]) + (f" (+{len(ids) - 5} more)" if len(ids) > 5 else "")


__all__ = ["Faults", "FAMILY", "KINDS", "COLUMN"]
