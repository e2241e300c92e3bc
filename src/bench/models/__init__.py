"""Models for the writer, agent and judge roles: `offline` or any litellm model string."""
from __future__ import annotations

from bench.harness.model import Model, ModelConfig, Reply, Usage, is_offline
from bench.models.litellm_model import LitellmModel
from bench.models.offline import OfflineModel


def build(cfg: ModelConfig) -> Model:
    """The model for one role's config; litellm is imported only for a non-offline model."""
    if is_offline(cfg.model):

        return OfflineModel(cfg)

    return LitellmModel(cfg)


__all__ = ["Model", "ModelConfig", "Reply", "Usage", "build", "is_offline"]
