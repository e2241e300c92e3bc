"""Structural faults (issue 24, item 5): a hand fixture per fault kind, each a strategy that commits exactly
that fault, run end to end through the replay and score_cell; the oracle and a careful strategy have none."""
from __future__ import annotations

import asyncio

import pytest

from bench.harness.strategy import Compaction, drop_oldest
from bench.runner.cells import run_cell
from bench.runner.plan import plan
from bench.models import build
from bench.results.store import read_csv
from bench.scoring.faults import KINDS
from bench.strategies.truncate import Truncate

SCEN = "scenarios/hand/pr-queue-small.yaml"


class Careful(Truncate):
    """Truncate plus a one-line summary that restates the mission: no fault of any kind (whole turns go)."""

    async def compact(self) -> Compaction:
        comp = await super().compact()
        note = self.session.message(id="note", role="user", tag="summary",
                                    text="Summary: the mission is to review and merge the open PRs in the queue.")
        self.messages = [note, *[m for m in self.messages if m.id != "note"]]
        return comp


class OrphanResult(Careful):
    """Drops the oldest assistant message that made calls, keeps its results."""

    async def compact(self) -> Compaction:
        comp = await super().compact()
        first = next((m for m in self.messages if m.calls), None)
        self.messages = [m for m in self.messages if m is not first]
        return comp


class Duplicate(Careful):
    """Attaches a (short) tool result a second time (a file attached twice)."""

    async def compact(self) -> Compaction:
        comp = await super().compact()
        tool = min((m for m in self.messages if m.role == "tool" and len(m.text) >= 40), key=lambda m: m.tokens)
        self.messages = [*self.messages, self.session.message(id="again", role="user", tag="summary", text=tool.text)]
        return comp


class Replayed(Careful):
    """Puts the user's first message (handled long ago) back at the end, as if it were the latest request."""

    def begin(self, session) -> None:
        super().begin(session)
        self.first_user = None

    def add(self, msg) -> None:
        if self.first_user is None and msg.role == "user" and msg.tag == "user":
            self.first_user = msg
        super().add(msg)

    async def compact(self) -> Compaction:
        comp = await super().compact()
        self.messages = [m for m in self.messages if m is not self.first_user] + [self.first_user]
        return comp


class OverTrigger(Careful):
    """Compacts when asked, but keeps far more than the trigger allows."""

    async def compact(self) -> Compaction:
        before = self.size()
        return Compaction(before=before, after=before, text="(kept everything)")


class Nibble(Careful):
    """Compacts before every request once the first compaction happened, dropping only the oldest turn: what
    masking does to fit, cheap and no rebuild, so no `no_progress`."""
    SHARE = 1.0

    def should_compact(self) -> bool:
        return getattr(self, "started", False) or super().should_compact()

    async def compact(self) -> Compaction:
        self.started = True
        before = self.size()
        self.messages, _ = drop_oldest(self.messages, before, min(before - 1, int(before * self.SHARE)))
        return Compaction(before=before, after=self.size())


class Thrash(Nibble):
    """The same loop, rebuilding the context each time (a third of it dropped, no writer): no progress."""
    SHARE = 0.66


def run(strategy: str, tmp_path, scenario: str = SCEN) -> tuple[dict, list[dict]]:
    cells, _, _ = plan([f"scenarios=[{scenario}]", f"strategies=[{strategy}]", "probes.enabled=false"], False)
    c = cells[0]
    row = asyncio.run(run_cell(c, build(c.writer), tmp_path))
    faults = [r for r in read_csv(tmp_path / "checks.csv") if r["point"] == "fault"]
    return row, faults


def kinds(row: dict) -> set[str]:
    return {k for k in KINDS if row[f"fault_{k}"]}


@pytest.mark.parametrize("strategy, kind", [
    ("bench.strategies.adversaries.blank_slate.BlankSlate", "missionless"),
    ("bench.strategies.adversaries.drop_results.DropResults", "orphan_call"),
    ("test_faults.OrphanResult", "orphan_result"),
    ("test_faults.Duplicate", "duplicate"),
    ("test_faults.Replayed", "replayed"),
    ("test_faults.OverTrigger", "over_trigger"),
    ("test_faults.Thrash", "no_progress"),
])
def test_each_fault_is_named_by_compaction_and_request(strategy, kind, tmp_path):
    row, faults = run(strategy, tmp_path)
    assert kind in kinds(row), (kind, row)
    assert row["structural_faults"] == sum(row[f"fault_{k}"] for k in KINDS) == len(faults)
    mine = [f for f in faults if f["item"] == kind]
    assert mine and all(f["request"] and f["event"] and f["detail"].startswith("compaction ") for f in mine)


def test_the_oracle_and_a_careful_strategy_have_none(tmp_path):
    for name in ("full", "test_faults.Careful"):
        row, faults = run(name, tmp_path / name.split(".")[-1])
        assert row["structural_faults"] == 0 and not faults, (name, faults)
    row, _ = run("test_faults.Careful", tmp_path / "again")
    assert row["compactions"] > 0


def test_a_cheap_compaction_at_every_request_is_no_loop(tmp_path):
    row, _ = run("test_faults.Nibble", tmp_path, "scenarios/library/withdrawal-12k.json")
    assert row["compactions"] > 3 and row["fault_no_progress"] == 0


def test_the_precise_fixtures_commit_only_their_own_fault(tmp_path):
    for name, kind in (("test_faults.OrphanResult", "orphan_result"), ("test_faults.Duplicate", "duplicate"),
                       ("test_faults.Replayed", "replayed")):
        row, _ = run(name, tmp_path / kind)
        assert kinds(row) == {kind}, (name, kinds(row))
