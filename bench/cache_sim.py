"""A simulator of provider prompt caching (DESIGN §6), fed the logged requests in order.

Providers cache token prefixes; a request can only reuse what an earlier request
sent with exactly the same beginning. We cannot see tokens inside a message, so a
prefix is identified at message boundaries by a chain hash (the hash of the
previous boundary's chain and the message's own content hash) with the cumulative
token count there. Each request costs O(its messages): chains shared with the
previous request are reused, and lookups are dictionary hits.

Two behaviours cover the profiles:
- ``prefix`` (openai, gemini, deepseek): every request caches all of its prefix
  automatically; a hit is the longest live cached prefix, counted in whole
  ``step`` units and only from ``min_tokens`` on.
- ``breakpoints`` (anthropic): only prefixes ending at an explicit breakpoint are
  written (if at least ``min_tokens`` long); a read looks back at most
  ``lookback`` blocks before each breakpoint; tokens from the read up to the
  last breakpoint are billed as a cache write.
Entries expire ``ttl_s`` seconds after their last use (event time); a hit
refreshes them. ``off`` caches nothing.
"""
from __future__ import annotations

import hashlib
from itertools import accumulate
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

from .config import CONF_DIR
from .errors import BadInput
from .messages import EVENT_TAGS
from .tokens import PER_MESSAGE

PROFILE_DIR = CONF_DIR / "cache"
MODES = ("prefix", "breakpoints", "off")
# Strategy tags that are not a summary/checkpoint block worth a breakpoint.
NOT_A_BLOCK = ("placeholder", "probe")


@dataclass(frozen=True)
class Profile:
    name: str = "openai"
    mode: str = "prefix"
    min_tokens: int = 1024        # shortest cacheable prefix
    step: int = 128               # cached tokens come in whole steps (1 = any length)
    ttl_s: float = 300.0          # idle seconds before an entry is evicted
    refresh: bool = True          # a hit restarts the entry's ttl
    max_breakpoints: int = 4
    lookback: int = 20            # blocks checked before each breakpoint
    read_multiplier: float = 1.0  # price of a cached token vs an input token, when the map has no rate
    write_multiplier: float = 0.0  # price of a written token vs an input token (0: writes are not billed apart)
    price_model: str = "gpt-5-mini"
    min_tokens_by_model: dict[str, int] = field(default_factory=dict)   # model-name fragment -> minimum

    def for_model(self, model: str) -> "Profile":
        """This profile with the minimum of `model` (the longest matching name fragment), if listed."""
        hits = [k for k in self.min_tokens_by_model if k in model]
        return replace(self, min_tokens=self.min_tokens_by_model[max(hits, key=len)]) if hits else self

    @classmethod
    def from_dict(cls, data: dict[str, Any], where: str = "cache") -> "Profile":
        known = {f.name: f.type for f in fields(cls)}
        problems = [f"{where}.{k}: unknown key (known: {', '.join(known)})" for k in data if k not in known]
        if problems:
            raise BadInput(problems)
        prof = cls(**{k: v for k, v in data.items() if v is not None})
        if prof.mode not in MODES:
            problems.append(f"{where}.mode: '{prof.mode}' is not one of {', '.join(MODES)}")
        for key in ("min_tokens", "step", "max_breakpoints"):
            if not isinstance(getattr(prof, key), int) or getattr(prof, key) < (0 if key == "min_tokens" else 1):
                problems.append(f"{where}.{key}: must be a positive integer, got {getattr(prof, key)!r}")
        if not isinstance(prof.ttl_s, (int, float)) or prof.ttl_s < 0:
            problems.append(f"{where}.ttl_s: must be a number of seconds >= 0, got {prof.ttl_s!r}")
        if problems:
            raise BadInput(problems)
        return prof


def load_profile(name: str) -> Profile:
    """A bundled profile by name (conf/cache/NAME.yaml), read without Hydra for re-simulation."""
    import yaml

    path = PROFILE_DIR / f"{name}.yaml"
    if not path.exists():
        raise BadInput(f"cache: unknown profile '{name}' (bundled: {', '.join(profile_names())})")
    return Profile.from_dict(yaml.safe_load(path.read_text(encoding="utf-8")) or {}, f"{path.name}")


def profile_names() -> list[str]:
    return sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))


@dataclass(frozen=True)
class Hit:
    read: int = 0     # input tokens served from the cache
    write: int = 0    # input tokens written to the cache (billed apart only where the provider does)


def breakpoints(tags: Sequence[str], limit: int = 4) -> list[int]:
    """Where a harness puts Anthropic cache_control: end of the system prompt, end of the
    strategy's last summary/checkpoint block, and the last message."""
    if not tags:
        return []
    points = [0] if tags[0] == "system" else []
    block = [i for i, t in enumerate(tags) if t not in EVENT_TAGS and t not in NOT_A_BLOCK]
    if block:
        points.append(block[-1])
    points.append(len(tags) - 1)
    return sorted(set(points))[-limit:]


class CacheSim:
    """One conversation's cache (one cell); feed it every billed request in order."""

    def __init__(self, profile: Profile):
        self.p = profile
        self.entries: dict[bytes, list[float]] = {}   # chain -> [tokens, last used]
        self.prev_hashes: list[str] = []
        self.prev_chain: list[bytes] = []

    def _chain(self, hashes: Sequence[str]) -> list[bytes]:
        hashes = list(hashes)
        prev = self.prev_hashes
        k = min(len(prev), len(hashes))
        if hashes[:k] != prev[:k]:       # most requests extend the previous one: one comparison in C
            k = next(i for i, (a, b) in enumerate(zip(hashes, prev)) if a != b)
        chain = self.prev_chain[:k]
        for h in hashes[k:]:
            d = hashlib.blake2b(chain[-1] if chain else b"", digest_size=12)
            d.update(h.encode())
            chain.append(d.digest())
        self.prev_hashes, self.prev_chain = hashes, chain
        return chain

    def _live(self, key: bytes, t: float) -> bool:
        e = self.entries.get(key)
        return e is not None and t - e[1] <= self.p.ttl_s

    def request(self, t: float, hashes: Sequence[str], tokens: Sequence[int], total: int,
                breaks: Iterable[int] = ()) -> Hit:
        """Cached and written tokens of one request of `total` input tokens whose messages
        have these hashes and token counts; `breaks` are Anthropic breakpoint positions."""
        if self.p.mode == "off" or not hashes:
            return Hit()
        chain = self._chain(hashes)
        cum = list(accumulate(k + PER_MESSAGE for k in tokens))
        if self.p.mode == "prefix":
            return self._prefix(t, chain, cum, total)
        return self._breakpoints(t, chain, cum, total, sorted(set(breaks))[-self.p.max_breakpoints:])

    def _prefix(self, t: float, chain: list[bytes], cum: list[int], total: int) -> Hit:
        match, entries, ttl = 0, self.entries, self.p.ttl_s
        for key in chain:   # a cached prefix's own prefixes are cached and at least as fresh
            e = entries.get(key)
            if e is None or t - e[1] > ttl:
                break
            match += 1
        read = 0
        if match:
            read = cum[match - 1] // self.p.step * self.p.step
            read = min(read, total) if read >= self.p.min_tokens else 0
        entries.update(zip(chain, ([size, t] for size in cum)))   # the whole prompt is cached (or refreshed) now
        return Hit(read=read)

    def _breakpoints(self, t: float, chain: list[bytes], cum: list[int], total: int, breaks: list[int]) -> Hit:
        breaks = [b for b in breaks if 0 <= b < len(chain)]
        hit = -1
        for b in breaks:
            for j in range(b, max(-1, b - self.p.lookback - 1), -1):
                if j <= hit:
                    break
                if self._live(chain[j], t):
                    hit = j
                    break
        read = cum[hit] if hit >= 0 else 0
        if hit >= 0 and self.p.refresh:
            self.entries[chain[hit]][1] = t
        eligible = [b for b in breaks if cum[b] >= self.p.min_tokens]
        write = 0
        for b in eligible:
            if b > hit:
                self.entries[chain[b]] = [cum[b], t]
            elif self.p.refresh and self._live(chain[b], t):
                self.entries[chain[b]][1] = t
        if eligible and eligible[-1] > hit:
            write = cum[eligible[-1]] - read
        return Hit(read=min(read, total), write=max(0, min(write, total - read)))


def billed(record: dict[str, Any]) -> bool:
    """Requests that belong to the session's bill: agent turns and writer calls that got an answer.
    Probes are evaluation; a failed call is neither billed nor cached."""
    return record.get("kind") != "probe" and not record.get("error")


def hit_rates(records: Iterable[dict[str, Any]], profiles: Sequence[Profile]) -> dict[str, dict[str, float]]:
    """cell -> profile name -> cache hit rate, re-simulated from a run's requests.jsonl records alone
    (message hashes, token counts and tags are in the log; no scenario is needed)."""
    state: dict[str, tuple[list, list[CacheSim], list[int]]] = {}
    for rec in records:
        cell = rec.get("cell", "")
        prev, sims, sums = state.setdefault(cell, ([], [CacheSim(p) for p in profiles], [0] * (1 + len(profiles))))
        cur = []
        for s in rec["seq"]:
            cur.extend(prev[s[0]:s[1]] if isinstance(s, list) else [(s["h"], s["n"], s["tag"])])
        prev[:] = cur
        if not billed(rec):
            continue
        hashes, tokens, tags = [c[0] for c in cur], [c[1] for c in cur], [c[2] for c in cur]
        sums[0] += rec["tokens"]
        for i, sim in enumerate(sims):
            bps = breakpoints(tags, sim.p.max_breakpoints)
            sums[i + 1] += sim.request(float(rec.get("t") or 0.0), hashes, tokens, rec["tokens"], bps).read
    return {cell: {p.name: (sums[i + 1] / sums[0] if sums[0] else 0.0) for i, p in enumerate(profiles)}
            for cell, (_, _, sums) in state.items()}


__all__ = ["Profile", "CacheSim", "Hit", "breakpoints", "billed", "hit_rates", "load_profile", "profile_names"]
