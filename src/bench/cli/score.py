"""`compaction-bench score RUN_DIR`: re-score a finished run from its logs (placeholder until rescoring lands)."""
from __future__ import annotations

from bench.errors import BadInput


def main(argv: list[str]) -> int:
    raise BadInput("score: not implemented yet")
