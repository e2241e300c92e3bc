"""Token counting: each distinct text is encoded once, then looked up by value.

Requests are never re-tokenized: a request's size is the sum of its messages'
cached counts plus a fixed per-message overhead (chat framing), which is what
lets the replay stay linear in the number of events.
"""
from __future__ import annotations

from functools import lru_cache
from operator import attrgetter
from typing import Any, Iterable

from bench import env

PER_MESSAGE = 4      # role and framing tokens per chat message
PER_REQUEST = 3      # reply priming
DEFAULT_ENCODING = "o200k_base"
_TOKENS = attrgetter("tokens")
# Model-family prefixes whose encoding differs from the default.
ENCODINGS = {"gpt-3.5": "cl100k_base", "text-embedding": "cl100k_base",
             "gpt-4": "cl100k_base", "gpt-4o": "o200k_base", "gpt-4.1": "o200k_base", "o1": "o200k_base",
             "o3": "o200k_base", "o4": "o200k_base", "gpt-5": "o200k_base"}


def encoding_for(model: str | None) -> str:
    """Best-known encoding for a litellm model string; o200k_base otherwise."""
    if not model or model == "offline" or model.startswith("offline:"):
        return DEFAULT_ENCODING
    name = model.rsplit("/", 1)[-1]
    best = ""
    for prefix in ENCODINGS:
        if name.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return ENCODINGS[best] if best else DEFAULT_ENCODING


class Tokenizer:
    """Counts tokens with tiktoken, memoised per text."""

    def __init__(self, encoding: str = DEFAULT_ENCODING):
        self.encoding_name = encoding
        self._enc = _encoding(encoding)
        self._cache: dict[str, int] = {}

    def count(self, text: str) -> int:
        n = self._cache.get(text)
        if n is None:
            n = len(self._enc.encode(text, disallowed_special=())) if text else 0
            self._cache[text] = n
        return n

    def truncate(self, text: str, limit: int) -> str:
        """The longest prefix of `text` within `limit` tokens (cut on a token boundary)."""
        ids = self._enc.encode(text, disallowed_special=())
        if len(ids) <= limit:
            return text
        return self._enc.decode(ids[:max(limit, 0)])

    def tail(self, text: str, limit: int) -> str:
        """The longest suffix of `text` within `limit` tokens (cut on a token boundary)."""
        ids = self._enc.encode(text, disallowed_special=())
        if len(ids) <= limit:
            return text
        return self._enc.decode(ids[len(ids) - limit:]) if limit > 0 else ""

    @staticmethod
    def request_size(message_tokens: list[int] | tuple[int, ...]) -> int:
        return sum(message_tokens) + PER_MESSAGE * len(message_tokens) + PER_REQUEST

    @staticmethod
    def size_of(messages: Iterable[Any]) -> int:
        """`request_size` of messages (anything with `.tokens`), summed in C: strategies size their
        whole context on every request."""
        ms = messages if isinstance(messages, (list, tuple)) else list(messages)
        return sum(map(_TOKENS, ms)) + PER_MESSAGE * len(ms) + PER_REQUEST


@lru_cache(maxsize=None)
def _encoding(name: str):
    env.prepare()
    import tiktoken

    return tiktoken.get_encoding(name)


@lru_cache(maxsize=None)
def tokenizer(encoding: str = DEFAULT_ENCODING) -> Tokenizer:
    """One shared Tokenizer per encoding, so counts are cached across cells."""
    return Tokenizer(encoding)


def trigger_limit(window: int, reserve_output: int, margin: int, fraction: float = 0.9) -> int:
    """DESIGN §3: compact when a request would exceed min(0.9 window, window - reserve - margin)."""
    return max(1, min(int(fraction * window), window - reserve_output - margin))


def default_reserve(window: int) -> tuple[int, int]:
    """Output reserve and safety margin that scale down with small windows."""
    return min(4096, window // 10), min(1024, window // 50)
