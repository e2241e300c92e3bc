"""The offline model (DESIGN §5) and the players that teach it a strategy's protocol.

Public: `OfflineModel`, `Turn`, `Player`.
"""
from __future__ import annotations

from bench.models.offline.model import OfflineModel
from bench.models.offline.players import Player, Turn

__all__ = ["OfflineModel", "Turn", "Player"]
