"""A simulator of provider prompt caching (DESIGN §6), fed the logged requests in order.

Providers cache token prefixes; a request can only reuse what an earlier request
sent with exactly the same beginning. We cannot see tokens inside a message, so a
prefix is identified at message boundaries by a chain hash (the hash of the
previous boundary's chain and the message's own content hash) with the cumulative
token count there. A request costs what differs from the previous one (its new
messages and those after an edit), not its length: a session of the oracle `full`,
whose requests hold thousands of messages, stays linear (see `CacheSim`).

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
from dataclasses import dataclass, field, fields, replace
from typing import Any, Iterable, NamedTuple, Sequence

from bench import HOME
from bench.errors import BadInput
from bench.harness.messages import EVENT_TAGS
from bench.tokens import PER_MESSAGE

PROFILE_DIR = HOME / "conf" / "cache"
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


def shared(a: Sequence, b: Sequence) -> int:
    """How many leading items two lists have in common. Compared in C a slice at a time (a bisection
    when they differ), so a long request that extends or edits the previous one costs little Python work."""
    if type(a) is not type(b):        # a tuple never equals a list
        a, b = list(a), list(b)
    n = min(len(a), len(b))
    if (a if len(a) == n else a[:n]) == (b if len(b) == n else b[:n]):
        return n
    lo, hi = 0, n                 # a[:lo] == b[:lo]; the first difference is before hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def is_block(tag: str) -> bool:
    """A message a strategy wrote as a summary or checkpoint block (the middle Anthropic breakpoint)."""
    return tag not in EVENT_TAGS and tag not in NOT_A_BLOCK


def _placed(first: str, last_block: int, n: int, limit: int) -> list[int]:
    points = [0] if first == "system" else []
    if last_block >= 0:
        points.append(last_block)
    points.append(n - 1)
    return sorted(set(points))[-limit:]


def breakpoints(tags: Sequence[str], limit: int = 4) -> list[int]:
    """Where a harness puts Anthropic cache_control: end of the system prompt, end of the
    strategy's last summary/checkpoint block, and the last message."""
    if not tags:
        return []
    return _placed(tags[0], next((i for i in range(len(tags) - 1, -1, -1) if is_block(tags[i])), -1), len(tags), limit)


class Prompt:
    """A cell's latest request as the simulators read it: its messages' hashes, token counts, chain
    hashes and cumulative token counts, and where its breakpoints go. Each request updates it at the
    cost of what differs from the previous one (new messages and those after an edit). Several
    simulators can share one (the report's grid computes the chain once): follow it once per request
    and send every one of them every request, since each reads `kept` and `left`."""

    def __init__(self) -> None:
        self.items: list = []
        self.hashes: list[str] = []
        self.tokens: list[int] = []
        self.chain: list[bytes] = []     # the chain hash at each message boundary
        self.cum: list[int] = []         # the tokens up to the end of each message
        self.kept = 0                    # leading messages shared with the previous request
        self.left: list[bytes] = []      # the previous request's chain hashes after those
        self.first = ""
        self.blocks: list[int] = []      # positions of block messages, ascending

    def follow(self, items: Sequence) -> None:
        """This request's messages: objects with hash, tokens and tag (`Message`s, which compare by
        identity, or `Sent` tuples)."""
        k = shared(items, self.items)
        self._update(k, k, [m.hash for m in items[k:]], [m.tokens for m in items[k:]])
        blocks = self.blocks
        while blocks and blocks[-1] >= k:
            blocks.pop()
        blocks.extend(i for i in range(k, len(items)) if is_block(items[i].tag))
        self.items = list(items)
        self.first = items[0].tag if items else ""

    def follow_lists(self, hashes: Sequence[str], tokens: Sequence[int]) -> None:
        """This request's message hashes and token counts (no tags: no breakpoints)."""
        k, j = shared(hashes, self.hashes), shared(tokens, self.tokens)
        self._update(k, j, hashes[k:], tokens[j:])

    def _update(self, k: int, j: int, hashes: Sequence[str], tokens: Sequence[int]) -> None:
        chain, cum = self.chain, self.cum
        self.kept, self.left = k, chain[k:]
        del chain[k:], self.hashes[k:], cum[j:], self.tokens[j:]
        for h in hashes:
            d = hashlib.blake2b(chain[-1] if chain else b"", digest_size=12)
            d.update(h.encode())
            chain.append(d.digest())
        size = cum[-1] if cum else 0
        for n in tokens:
            size += n + PER_MESSAGE
            cum.append(size)
        self.hashes.extend(hashes)
        self.tokens.extend(tokens)

    def breakpoints(self, limit: int = 4) -> list[int]:
        """`breakpoints` of this request's tags."""
        return _placed(self.first, self.blocks[-1] if self.blocks else -1, len(self.items), limit) if self.items else []


class Sent(NamedTuple):
    """A logged message as the simulator reads it (requests.jsonl's h, n, tag)."""
    hash: str
    tokens: int
    tag: str


class CacheSim:
    """One conversation's cache (one cell); feed it every billed request in order.

    A request costs what differs from the previous one (`Prompt` keeps the rest), and in ``prefix``
    mode, where every request caches its whole prompt, the previous request's entries are not written
    one by one: all of them were used at `used`, and each gets that time in `entries` only when a later
    request leaves it (`Prompt.left`). That holds in any event order (no entry is read before it is
    written back), so event times need not be increasing."""

    def __init__(self, profile: Profile):
        self.p = profile
        self.entries: dict[bytes, float] = {}   # chain -> when last used (but the current chain's, in prefix mode)
        self.used = 0.0                         # prefix mode: when every entry of the current chain was last used
        self.own = Prompt()                     # the requests given as lists to `request`

    def _live(self, key: bytes, t: float) -> bool:
        e = self.entries.get(key)
        return e is not None and t - e <= self.p.ttl_s

    def request(self, t: float, hashes: Sequence[str], tokens: Sequence[int], total: int,
                breaks: Iterable[int] = ()) -> Hit:
        """Cached and written tokens of one request of `total` input tokens whose messages
        have these hashes and token counts; `breaks` are Anthropic breakpoint positions."""
        if self.p.mode == "off" or not hashes:
            return Hit()
        self.own.follow_lists(hashes, tokens)
        return self.send(t, self.own, total, breaks)

    def send(self, t: float, prompt: Prompt, total: int, breaks: Iterable[int] | None = None) -> Hit:
        """`request` for the request `prompt` was just brought to (breakpoints: the prompt's, unless given)."""
        mode = self.p.mode
        if mode == "prefix":
            entries, used = self.entries, self.used
            for key in prompt.left:                # the entries this request leaves keep their time
                entries[key] = used
            return self._prefix(t, prompt, total) if prompt.chain else Hit()
        if mode == "off" or not prompt.chain:
            return Hit()
        breaks = prompt.breakpoints(self.p.max_breakpoints) if breaks is None else breaks
        return self._breakpoints(t, prompt, total, sorted(set(breaks))[-self.p.max_breakpoints:])

    def _prefix(self, t: float, prompt: Prompt, total: int) -> Hit:
        ttl, chain, k = self.p.ttl_s, prompt.chain, prompt.kept
        match = 0
        # A cached prefix's own prefixes are cached and at least as fresh, so the hit is the longest run
        # of live entries from the start. The k shared with the previous request were all used then.
        if not k or t - self.used <= ttl:
            match, get = k, self.entries.get
            for i in range(k, len(chain)):
                e = get(chain[i])
                if e is None or t - e > ttl:
                    break
                match += 1
        self.used = t          # the whole prompt is cached (or refreshed) now
        read = 0
        if match:
            read = prompt.cum[match - 1] // self.p.step * self.p.step
            read = min(read, total) if read >= self.p.min_tokens else 0
        return Hit(read=read)

    def _breakpoints(self, t: float, prompt: Prompt, total: int, breaks: list[int]) -> Hit:
        chain, cum, entries = prompt.chain, prompt.cum, self.entries
        get, ttl, back = entries.get, self.p.ttl_s, self.p.lookback
        breaks = [b for b in breaks if 0 <= b < len(chain)]
        hit = -1
        for b in breaks:
            for j in range(b, max(-1, b - back - 1), -1):
                if j <= hit:
                    break
                e = get(chain[j])
                if e is not None and t - e <= ttl:
                    hit = j
                    break
        read = cum[hit] if hit >= 0 else 0
        if hit >= 0 and self.p.refresh:
            entries[chain[hit]] = t
        eligible = [b for b in breaks if cum[b] >= self.p.min_tokens]
        write = 0
        for b in eligible:
            if b > hit:
                entries[chain[b]] = t
            elif self.p.refresh and self._live(chain[b], t):
                entries[chain[b]] = t
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
    state: dict[str, list] = {}    # cell -> [its previous record's messages, Prompt, simulators, sums]
    for rec in records:
        cell = rec.get("cell", "")
        if cell not in state:
            state[cell] = [[], Prompt(), [CacheSim(p) for p in profiles], [0] * (1 + len(profiles))]
        st = state[cell]
        last, cur = st[0], []
        for s in rec["seq"]:
            if isinstance(s, list):
                cur.extend(last[s[0]:s[1]])
            else:
                cur.append(Sent(s["h"], s["n"], s["tag"]))
        st[0] = cur
        _, prompt, sims, sums = st
        if not billed(rec):
            continue
        prompt.follow(cur)
        t = float(rec.get("t") or 0.0)
        sums[0] += rec["tokens"]
        for i, sim in enumerate(sims):
            sums[i + 1] += sim.send(t, prompt, rec["tokens"]).read
    return {cell: {p.name: (sums[i + 1] / sums[0] if sums[0] else 0.0) for i, p in enumerate(profiles)}
            for cell, (_, _, _, sums) in state.items()}


__all__ = ["Profile", "CacheSim", "Hit", "Prompt", "Sent", "breakpoints", "shared", "billed", "hit_rates", "load_profile",
           "profile_names"]
