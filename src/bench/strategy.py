"""What a strategy author imports: the strategy protocol and its helpers (README "Writing a strategy").

A stable name for user code; the protocol itself lives with the harness that calls it
(`bench.harness.strategy`), and nothing inside the package imports this module.
"""
from __future__ import annotations

from bench.harness.strategy import *  # noqa: F401,F403
from bench.harness.strategy import __all__  # noqa: F401
