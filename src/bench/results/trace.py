"""The scorer's findings on a finished run, request by request, for the readers that show them (the
report's "what was lost"). Nothing here scores: every verdict comes from `judged` (the same schedule and
rules as `score_cell`) and every per-message finding from `Judge.hits` (the same findings the scorer
merges), so what a reader shows cannot drift from what was scored. The viewer reads the scorer's own
trail instead (verdicts.jsonl, `bench.scoring.trail`) and needs only `verdict` and `labels` from here.

A run's cells are rebuilt from its own files: config.yaml names the scenarios, the markers and the
encoding; summary.csv the cells; requests.jsonl their requests.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from bench import units as U
from bench.errors import BadInput
from bench.harness.messages import Message
from bench.scenarios.model import Scenario
from bench.scoring.checks import WORSE, Check, Judge
from bench.scoring.metrics import BY_NAME
from bench.results.store import KEY_COLUMNS
from bench.scenarios import loader
from bench import HOME
from bench.tokens import encoding_for
from bench.tokens import tokenizer
from bench.harness.logs import read_jsonl, replay_requests
from bench.scoring import judged


@dataclass(frozen=True)
class RunCell:
    """One cell of a finished run, as its files name it."""
    name: str               # scenario/strategy/writer/window/seed, as requests.jsonl's `cell`
    scenario: str
    strategy: str
    writer: str
    window: int
    oracle: bool


def cells(summary) -> list[RunCell]:
    """The cells of summary.csv (a DataFrame), in its order."""

    out = []
    for row in summary.to_dict("records"):
        oracle = row.get("oracle")
        if oracle == oracle and oracle and str(row["strategy"]).endswith(" (oracle)"):   # the report's label
            row = {**row, "strategy": str(row["strategy"])[:-len(" (oracle)")]}
        name = "/".join(_key(row[c]) for c in KEY_COLUMNS)
        out.append(RunCell(name, str(row["scenario"]), str(row["strategy"]), str(row["writer"]),
                           int(row["window"]), bool(oracle == oracle and oracle)))
    return out


def _key(v: Any) -> str:
    """A summary value as the run wrote it into a cell name (pandas reads 16000 back as 16000.0)."""
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


class Run:
    """The scenarios, tokenizer and marker setting a run's cells were scored with."""

    def __init__(self, run_dir: Path, cfg: dict[str, Any], known: Iterable[Scenario] = ()):
        """`known`: scenarios the caller loaded from the same config (the run that just ended), so they
        are not read and validated again; an id two of them share is looked up as usual."""
        self.dir, self.cfg = Path(run_dir), cfg
        self._scenarios: dict[str, Scenario] | None = None
        self._judges: dict[tuple[str, str], Judge] = {}
        ids = Counter(s.id for s in known)
        self._one: dict[str, Scenario] = {s.id: s for s in known if ids[s.id] == 1}

    def _paths(self) -> list[Path]:

        patterns = self.cfg.get("scenarios") or []
        patterns = [patterns] if isinstance(patterns, str) else [str(p) for p in patterns]
        try:
            return loader.expand(patterns, base=HOME) if patterns else []
        except BadInput:
            return []

    @property
    def scenarios(self) -> dict[str, Scenario]:
        """The run's scenarios by id ({} when config.yaml names none or they cannot be found here)."""
        if self._scenarios is None:

            try:
                found = loader.load_all(self._paths())
            except BadInput:
                found = []
            self._scenarios = {s.id: s for s in found}
        return self._scenarios

    def path(self, sid: str) -> Path | None:
        """The file named for scenario `sid` among the run's, if any."""
        return next((p for p in self._paths() if p.stem == sid), None)

    def scenario(self, sid: str) -> Scenario | None:
        """One scenario by id, loading only its file when the file is named for it (library files are)."""
        if self._scenarios is not None or sid in self._one:
            return (self._scenarios or self._one).get(sid)

        named = [p for p in self._paths() if p.stem == sid]
        try:
            found = loader.load(named[0]) if named else None
        except BadInput:
            found = None
        if found is None or found.id != sid:
            return self.scenarios.get(sid)
        self._one[sid] = found
        return found

    def setting(self, cell: RunCell, key: str) -> Any:
        """A setting of the cell: its sweep variant's value (the strategy label `name[key=value,...]` that
        a `-m` run writes) over config.yaml's."""
        label = cell.strategy
        if label.endswith("]") and "[" in label:
            for part in label[label.index("[") + 1:-1].split(","):
                k, _, v = part.partition("=")
                if k == key:
                    return {"true": True, "false": False, "null": None, "none": None}.get(v.lower(), v)
        return self.cfg.get(key)

    def marked(self, cell: RunCell) -> bool:
        value = self.setting(cell, "markers")
        return True if value is None else bool(value)

    def encoding(self, writer: str, cell: RunCell | None = None) -> str:

        swept = self.setting(cell, "encoding") if cell is not None else None
        return str(swept or self.cfg.get("encoding") or encoding_for(writer))

    def judge(self, cell: RunCell) -> Judge | None:
        """The scorer's judge for a cell's scenario, or None when the scenario is not available."""

        scenario = self.scenario(cell.scenario)
        if scenario is None:
            return None
        key = (cell.scenario, self.encoding(cell.writer, cell), self.marked(cell))
        if key not in self._judges:
            self._judges[key] = Judge(scenario, tokenizer(key[1]), key[2])
        return self._judges[key]

    def requests(self, cell: RunCell, records: list[dict[str, Any]] | None = None) -> Iterator[Any]:
        """The cell's requests rebuilt from requests.jsonl (or from its `records`, already read)."""

        scenario = self.scenario(cell.scenario)
        recs = records if records is not None else read_jsonl(self.dir / "requests.jsonl", cell.name)
        yield from replay_requests(iter(recs), scenario, tokenizer(self.encoding(cell.writer, cell)), self.marked(cell))

    def judged(self, cell: RunCell, records: list[dict[str, Any]] | None = None,
               seen=None) -> Iterator[tuple[Any, list[Check], bool]]:
        """`scoring.judged` on one cell of the run: (agent request, its checks, over the window)."""

        judge = self.judge(cell)
        if judge is None:
            return iter(())
        return judged(self.requests(cell, records), judge, cell.oracle, seen)


def status(c: Check) -> str:
    """A check's verdict in a reader's words (`verdict`)."""
    return verdict(c.metric, c.score)


def verdict(metric: str, score: float) -> str:
    """A score's verdict in a reader's words: kept, partial (a constraint's keys without its quote),
    lost; for the metrics where more is worse: leaked, stale, revived, or clean."""
    if metric in WORSE:
        return "clean" if score <= 0 else BY_NAME[metric].verdict
    return "kept" if score >= 1 else "partial" if score > 0 else "lost"


def leak_sentence(judge: Judge, messages: list[Message], injection: str) -> str:
    """The sentence (unit) of the first message the scorer finds leaking `injection`, in its own words;
    else of the first that holds it under a label only (it leaks where the request also puts the user's
    words under that label)."""
    keysets = next((ks for iid, ks in judge.injections if iid == injection), [])
    for found in ("leaks", "covered"):
        for m in messages:
            if injection not in getattr(judge.hits(m), found):
                continue
            for u in U.units(m.text):
                if any(U.together(u, ks) for ks in keysets):
                    at = m.text.lower().find(u.text)     # the unit's words are normalised: show the message's own
                    return m.text[at:at + len(u.text)] if at >= 0 else u.text
            return m.text[:300]
    return ""


def labels(scenario: Scenario) -> dict[str, str]:
    """What each truth item says, keyed "metric:item" like the scorer's marks (`scoring.trail.keys`): a
    reader's label, not a key set."""
    t = scenario.truth
    out: dict[str, str] = {}
    for m in t.mission:
        out[f"goal:{m.id}"] = m.text
    for w in t.workstreams:
        for it in w.items:
            out[f"goal:{w.id}:{it.id}"] = f"{w.title}: next is {it.id}"
    for c in t.constraints:
        out[f"constraint:{c.id}"] = out[f"stale_constraint:{c.id}"] = f"{c.kind}: “{c.quote}”"
    for i in t.injections:
        out[f"leakage:{i.id}"] = "payload: " + ", ".join(i.payload)
    for f in t.facts:
        out[f"fact:{f.id}"] = "keys: " + ", ".join(f.keys)
    for d in t.decisions:
        out[f"decision:{d.id}"] = "keys: " + ", ".join(d.keys)
        if d.rejected:
            out[f"rejected_back:{d.id}"] = "rejected: " + ", ".join(d.rejected)
    for e in scenario.events:
        if e.role == "user" and scenario.imported:
            out[f"user_words:{e.id}"] = e.text[:160]
    return out


__all__ = ["Run", "RunCell", "cells", "status", "verdict", "leak_sentence", "labels"]
