"""The one model interface every role uses (writer, agent, judge).

Messages and tool definitions in; text and/or tool calls plus usage out; async.
The offline model and litellm models both implement it, so a strategy's
parsing, validation, repair and fallback code cannot tell them apart.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Sequence

from bench.harness.messages import Message
from bench.scenarios.model import Call


@dataclass
class Usage:
    input_tokens: int = 0
    cached_input_tokens: int | None = None   # as the provider reports it; None: it did not say (offline: no provider)
    output_tokens: int = 0
    cost_usd: float | None = None   # from the provider's response, when it says


@dataclass
class Reply:
    text: str
    calls: tuple[Call, ...] = ()
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    cached: bool = False            # served from the on-disk response cache
    retries: int = 0
    latency_s: float = 0.0
    finish: str | None = None
    notes: tuple[dict, ...] = ()    # a stress profile's transformations of this answer (offline:NAME)


def is_offline(model: str) -> bool:
    """`offline`, or one of its stress profiles `offline:NAME`: deterministic, no network."""
    return model == "offline" or is_stress(model)


def is_stress(model: str) -> bool:
    """A stress profile `offline:NAME`: a stand-in that errs on purpose, so its failures are by design."""
    return str(model).startswith("offline:")


@dataclass(frozen=True)
class ModelConfig:
    """How one role's model is configured (writer.*, agent.*, judge.*). `min` in a field's metadata is the
    least value a run accepts (bench.runner.settings checks it)."""
    model: str = "offline"
    api_base: str | None = None
    concurrency: int | None = field(default=None, metadata={"min": 1})   # own bound; the account's limiter bounds all
    temperature: float = field(default=0.0, metadata={"min": 0})
    timeout: float = field(default=120.0, metadata={"min": 0})
    retries: int = field(default=3, metadata={"min": 0})
    max_tokens: int | None = field(default=None, metadata={"min": 1})
    seed: int | None = field(default=0, metadata={"min": 0})   # repeat index, or the role's own when set
    # (agent.seed: held across repeats, so agent and writer seeds cross); part of the response-cache key
    backoff: float = field(default=1.0, metadata={"min": 0})   # seconds before the first retry, doubled each time
    max_wait: float = field(default=60.0, metadata={"min": 0})  # cap on one wait between tries (Retry-After too)
    cache_dir: str | None = None    # on-disk response cache (the run's `responses:` block); None: off
    refresh: bool = False           # ask again and overwrite cached answers (responses.refresh=true)
    extra: dict[str, Any] = field(default_factory=dict)   # passed through to litellm


class Model(ABC):
    """A chat model. Implementations raise bench.errors.ModelError after their retries."""

    name: str = "model"

    @property
    def is_llm(self) -> bool:
        return not is_offline(self.name)

    def teach(self, players: Sequence[Any]) -> "Model":
        """The model that also answers the protocols `players` play (bench.models.offline.players): only
        the offline model needs teaching; an LLM reads the request."""
        return self

    @abstractmethod
    async def chat(self, messages: Sequence[Message], *, tools: list[dict] | None = None,
                   max_tokens: int | None = None, purpose: str = "") -> Reply:
        """`purpose` is a label for logs (summary, checkpoint, repair, probe, judge), never a hint."""
