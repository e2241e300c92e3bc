"""What scoring works out once per process and reuses across cells, in one object its owner passes in.

A worker runs every cell of a scenario in a row, so the findings of the messages they share (every
event's own rendering), the price table and the oracle's answers to the probes are worth keeping
between cells. They live in a `Memo` that whoever runs the cells owns — the runner keeps one per worker
process (`bench.runner.cells.MEMO`) — never in module globals: a caller that passes none gets a fresh
one, and a test or a benchmark that wants a cold start makes its own.
"""
from __future__ import annotations

from typing import Any

from bench.scoring.cache_sim import Profile
from bench.scoring.checks import Judge
from bench.scoring.pricing import rates

KEEP_JUDGES = 8     # scenarios whose Judge a process keeps (a worker runs one scenario's cells in a row)


class Memo:
    def __init__(self) -> None:
        self.rates: dict[tuple[str, str], Any] = {}
        self.judges: dict[tuple, Judge] = {}
        self.oracle: dict[tuple, dict[str, bool | None]] = {}   # per scenario and models: probes the oracle passes
        # per scenario and marker setting: (its Judge, the metrics the oracle cannot score, its largest request)
        self.readings: dict[tuple, tuple[Judge, dict[str, Any], int]] = {}

    def rates_for(self, model: str, profile: Profile) -> Any:
        """`pricing.rates`, once per price model and cache profile (it searches the whole cost map)."""
        key = (model, repr(profile))
        if key not in self.rates:
            self.rates[key] = rates(model, profile)
        return self.rates[key]

    def judge(self, scenario: Any, tok: Any, markers: bool) -> Judge:
        """One Judge per scenario and marker setting, so cells of a scenario share the findings of the
        messages they have in common. A worker gets each cell's scenario as its own copy (unpickled), so
        a Judge is reused for an equal scenario, not only for the same object."""
        key = (scenario.id, scenario.path, tok.encoding_name, markers)
        j = self.judges.get(key)
        if j is None or (j.s is not scenario and j.s != scenario):
            if len(self.judges) > KEEP_JUDGES:
                self.judges.clear()
            j = self.judges[key] = Judge(scenario, tok, markers)
        return j
