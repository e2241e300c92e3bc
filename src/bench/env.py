"""Process-wide settings that must be in place before tiktoken or litellm load.

tiktoken downloads its encodings on first use, which fails without network;
litellm ships the same files in tiktoken's cache format, so we point
TIKTOKEN_CACHE_DIR there (found with importlib.util.find_spec, which does not
execute litellm's 5-second import). LITELLM_LOCAL_MODEL_COST_MAP stops litellm
from fetching its price map at import time.
"""
from __future__ import annotations

import importlib.util
import os
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def litellm_dir() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).parent


def prepare() -> None:
    """Idempotent; call before importing tiktoken or litellm."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        root = litellm_dir()
        if root is not None:
            os.environ["TIKTOKEN_CACHE_DIR"] = str(root / "litellm_core_utils" / "tokenizers")


def cost_map_path() -> Path | None:
    """litellm's bundled price map, readable without importing litellm."""
    root = litellm_dir()
    if root is None:
        return None
    path = root / "model_prices_and_context_window_backup.json"
    return path if path.exists() else None
