"""What claude_code, anchored and handoff share: a writer answer under named headings.

`answer` asks for it and reads it back; importing the package teaches the offline model to write
one (`offline.play`), so `writer.model=offline` answers these strategies from the request alone.
"""
from __future__ import annotations

from bench.strategies.sectioned.answer import Answer, Failed, ask, block, empty, framed, headings, parse, render

try:
    from bench.models.offline import register_player
except ImportError:   # a bench without the player hook: only LLM writers can answer
    register_player = None

if register_player is not None:
    from bench.strategies.sectioned.offline import play

    register_player(play)

__all__ = ["Answer", "Failed", "ask", "block", "empty", "framed", "headings", "parse", "render"]
