"""The offline model (DESIGN §5) and the player hook that teaches it a strategy's protocol.

Public: `OfflineModel`, `Turn`, `Player`, `register_player`, `unregister_player`.
"""
from __future__ import annotations

from bench.models.offline.model import OfflineModel
from bench.models.offline.players import Player, Turn, register_player, unregister_player

__all__ = ["OfflineModel", "Turn", "Player", "register_player", "unregister_player"]
