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
import re
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


# Words that make a name (a config key, a header, an environment variable) one that holds a credential.
# Names are split into words at anything not a letter or digit and at camelCase humps, so
# Ocp-Apim-Subscription-Key, DB_PASS, apiKey and X-Auth-Token all say so, and max_tokens, keep or
# pass_score do not.
SECRET_WORDS = frozenset("key apikey secret secrets password passwords passwd passphrase pwd token auth authorization "
                         "bearer credential credentials cookie cookies jwt signature privatekey accesskey".split())
SECRET_LAST_WORDS = frozenset("pass pw".split())       # DB_PASS, SMTP_PW; not pass_score
# The same as a substring, for names written without separators (OPENAIKEY, MYTOKEN).
SECRET_PART = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.I)


def words(name: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", str(name)))
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def secret_name(name: str, loose: bool = False) -> bool:
    """Whether a name says its value is a credential (`loose`: also when one of those words is only a
    part of a longer word, as in an environment's OPENAIKEY; config keys are read by whole words)."""
    w = words(name)
    if any(x in SECRET_WORDS for x in w) or (w and w[-1] in SECRET_LAST_WORDS):
        return True
    return loose and bool(SECRET_PART.search(str(name)))
