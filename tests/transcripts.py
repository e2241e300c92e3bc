"""Where the real public transcripts the importer tests read live (the steering repo's shared data)."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = Path("/work/shared/data/transcripts")
if not DATA.exists():
    DATA = ROOT.parent / "shared" / "data" / "transcripts"
TAU = DATA / "tau-bench-airline-gpt-4o.json"
SWE = DATA / "swe-agent-marshmallow-1867.traj"
OPENHANDS = DATA / "openhands-multi-swe-bench-output.jsonl"
CLAUDE = ROOT / "tests" / "data" / "claude-code-session.jsonl"
needs_data = pytest.mark.skipif(not TAU.exists(), reason="shared transcripts not available")
