"""The deterministic, network-free model (being built under issue 3)."""
from __future__ import annotations

from typing import Sequence

from ..errors import ModelError
from ..messages import Message
from .base import Model, ModelConfig, Reply


class OfflineModel(Model):
    name = "offline"

    def __init__(self, cfg: ModelConfig | None = None):
        self.cfg = cfg or ModelConfig()

    async def chat(self, messages: Sequence[Message], *, tools: list[dict] | None = None,
                   max_tokens: int | None = None, purpose: str = "") -> Reply:
        raise ModelError("offline model: not available yet")
