"""A secret scan of an imported transcript: keys, tokens and private keys are replaced before anything is written.

Real sessions hold what people paste and what tools print: an API key in an `.env` a tool read, a token in a
curl command, a private key block. An imported scenario is a file people share, so every string of it (the
system prompt, each event's text, tool-call arguments, what a harness installed) is scanned and each hit
replaced by `[REDACTED:<kind>]`; the scenario's `provenance` records how many hits of which kinds. The patterns
are a provider's key shape or a `NAME=value` whose name says secret: a scan, not a proof.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any

PATTERNS = (
    ("private-key", re.compile(r"-----BEGIN (?:[A-Z]+ )*PRIVATE KEY-----.*?(?:-----END (?:[A-Z]+ )*PRIVATE KEY-----|\Z)", re.S)),
    ("aws-key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})\b")),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b")),
    ("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b")),
    ("google-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("api-key", re.compile(r"(?<![\w-])(?:sk-(?:ant-|proj-)?|sk_live_|rk_live_|xai-|gsk_|hf_)[A-Za-z0-9_-]{20,}")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
    ("bearer", re.compile(r"(?<=\b[Bb]earer )[A-Za-z0-9+/=_.-]{16,}")),
    # `NAME=value` whose name says secret: group 1 (the name) stays, the value goes
    ("assigned-secret", re.compile(r"(?i)(\b(?:api[_-]?key|secret|token|password|passwd)[\"']?\s{0,2}[:=]\s{0,2}[\"']?)"
                                   r"(?![\[*$<{])[^\s\"'`,;]{8,}")),
)


class Scan:
    """Counts what it redacts, by kind, across every string it is given."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()

    def text(self, value: str) -> str:
        for kind, pattern in PATTERNS:
            mark = f"[REDACTED:{kind}]"
            value, n = pattern.subn((lambda m, mark=mark: m.group(1) + mark) if pattern.groups else mark, value)
            if n:
                self.hits[kind] += n
        return value

    def value(self, value: Any) -> Any:
        """Every string inside a JSON value (tool-call arguments), keys too."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value

    def record(self) -> dict[str, Any]:
        return {"secrets_redacted": sum(self.hits.values()), "secret_kinds": sorted(self.hits)}
