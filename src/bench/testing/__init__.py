"""Test helpers that ship with the package, so a user's own strategy tests can use them too."""
from __future__ import annotations

from bench.testing.server import FAULTS, LoopbackServer

__all__ = ["LoopbackServer", "FAULTS"]
