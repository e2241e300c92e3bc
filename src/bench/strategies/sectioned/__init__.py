"""What claude_code, anchored and handoff share: a writer answer under named headings.

`answer` asks for it and reads it back; `offline_play` is how the offline writer writes one (each
strategy lists it in `offline_players`), so `writer.model=offline` answers them from the request alone.
"""
from __future__ import annotations

from bench.strategies.sectioned.answer import Answer, Failed, ask, block, empty, framed, headings, parse, render
from bench.strategies.sectioned.offline import play as offline_play

__all__ = ["offline_play", "Answer", "Failed", "ask", "block", "empty", "framed", "headings", "parse", "render"]
