"""The incremental simulator (bench.scoring.cache_sim) against a plain reference that re-walks every request in
full, on random request sequences: extensions, edits in the middle, truncations behind a summary,
writer calls interleaved, empty requests, idle gaps around the ttl, times that go back. Every Hit,
every breakpoint placement and every re-simulated hit rate must be the same."""
from __future__ import annotations

import hashlib
import io
import json
import random
from dataclasses import replace
from itertools import accumulate

import pytest

from bench.scoring.cache_sim import CacheSim, Profile, Prompt, Sent, breakpoints, hit_rates, load_profile, profile_names, shared
from bench.harness.logs import RequestLog
from bench.harness.messages import EVENT_TAGS, Message
from bench.tokens import PER_MESSAGE

NOT_A_BLOCK = ("placeholder", "probe")


class Reference:
    """Every request from scratch: the chain of the whole prompt, every entry of it looked up and written."""

    def __init__(self, p: Profile):
        self.p, self.entries = p, {}

    def request(self, t, hashes, tokens, total, breaks=()):
        p = self.p
        if p.mode == "off" or not hashes:
            return (0, 0)
        chain, key = [], b""
        for h in hashes:
            key = hashlib.blake2b(key + h.encode(), digest_size=12).digest()
            chain.append(key)
        cum = list(accumulate(n + PER_MESSAGE for n in tokens))
        live = lambda k: k in self.entries and t - self.entries[k] <= p.ttl_s  # noqa: E731
        if p.mode == "prefix":
            match = 0
            while match < len(chain) and live(chain[match]):
                match += 1
            read = cum[match - 1] // p.step * p.step if match else 0
            for k in chain:
                self.entries[k] = t
            return (min(read, total) if read >= p.min_tokens else 0, 0)
        bps = [b for b in sorted(set(breaks))[-p.max_breakpoints:] if 0 <= b < len(chain)]
        hit = max((j for b in bps for j in range(max(0, b - p.lookback), b + 1) if live(chain[j])), default=-1)
        read = cum[hit] if hit >= 0 else 0
        if hit >= 0 and p.refresh:
            self.entries[chain[hit]] = t
        eligible = [b for b in bps if cum[b] >= p.min_tokens]
        for b in eligible:
            if b > hit or (p.refresh and live(chain[b])):
                self.entries[chain[b]] = t
        write = cum[eligible[-1]] - read if eligible and eligible[-1] > hit else 0
        return (min(read, total), max(0, min(write, total - read)))


def reference_breakpoints(tags, limit=4):
    if not tags:
        return []
    points = [0] if tags[0] == "system" else []
    block = [i for i, t in enumerate(tags) if t not in EVENT_TAGS and t not in NOT_A_BLOCK]
    points += block[-1:] + [len(tags) - 1]
    return sorted(set(points))[-limit:]


def profiles() -> list[Profile]:
    base = [load_profile(n) for n in profile_names()]
    a, o = load_profile("anthropic"), load_profile("openai")
    return base + [replace(a, refresh=False), replace(a, max_breakpoints=2, lookback=3, ttl_s=40),
                   replace(a, min_tokens=0, max_breakpoints=1), replace(o, ttl_s=40, step=1, min_tokens=0),
                   replace(o, refresh=False, ttl_s=0), replace(a, ttl_s=0)]


TAGS = ["user", "assistant", "tool", "background", "summary", "mind", "memo", "placeholder", "probe"]


class Session:
    """Random requests of one cell, as message lists, with the event time of each."""

    def __init__(self, rng: random.Random):
        self.rng, self.n, self.t = rng, 0, 0.0
        self.system = self.msg("system", 300)
        self.convo: list[Message] = [self.system]

    def msg(self, tag: str, size: int | None = None, text: str | None = None) -> Message:
        self.n += 1
        text = text if text is not None else f"m{self.n}"
        size = size if size is not None else self.rng.choice([5, 40, 200, 700, 1500])
        return Message(id=f"e{self.n}", role="user", text=text, tag=tag, tokens=size,
                       hash=hashlib.blake2b(text.encode(), digest_size=10).hexdigest())

    def step(self) -> tuple[str, float, list[Message]]:
        rng = self.rng
        gap = rng.choice([0, 1, 5, 30, 39, 40, 41, 120, 299, 300, 301, 500, 4000])
        self.t = max(0.0, self.t + (gap if rng.random() > 0.05 else -rng.choice([1, 50, 400])))  # sometimes back
        op = rng.random()
        if op < 0.45:                                   # the session goes on
            self.convo += [self.msg(rng.choice(TAGS)) for _ in range(rng.randint(1, 4))]
        elif op < 0.6 and len(self.convo) > 2:          # a message in the middle is replaced (masking, an edit)
            i = rng.randrange(1, len(self.convo))
            self.convo[i] = self.msg(rng.choice(["placeholder", "tool", "summary"]))
        elif op < 0.7 and len(self.convo) > 3:          # compaction: a summary block and the newest turns
            keep = rng.randint(0, 3)
            self.convo = [self.system, self.msg(rng.choice(["summary", "mind"])), *self.convo[len(self.convo) - keep:]]
        elif op < 0.75:                                 # a message comes back with the same text, another size
            i = rng.randrange(len(self.convo))
            m = self.convo[i]
            self.convo[i] = Message(m.id, m.role, m.text, m.tag, m.tokens + rng.choice([-3, 7]), m.hash)
        elif op < 0.85:                                 # a writer call: the conversation and an instruction
            return "compaction", self.t, [*self.convo, self.msg("instruction", 80, "summarise")]
        elif op < 0.9:                                  # a writer call with its own system prompt
            return "compaction", self.t, [self.msg("system", 60, "writer"), self.msg("user", 2000)]
        elif op < 0.93:
            return "agent", self.t, []
        else:                                           # the same request again
            pass
        return "agent", self.t, list(self.convo)


@pytest.mark.parametrize("seed", range(60))
def test_incremental_simulator_matches_the_reference(seed):
    rng = random.Random(seed)
    session = Session(rng)
    profs = profiles()
    new, ref = [CacheSim(p) for p in profs], [Reference(p) for p in profs]
    together = [CacheSim(p) for p in profs]      # sharing one Prompt, as the report's grid does
    prompt = Prompt()
    for _ in range(80):
        _, t, msgs = session.step()
        hashes, tokens, tags = [m.hash for m in msgs], [m.tokens for m in msgs], [m.tag for m in msgs]
        prompt.follow(msgs)
        assert (prompt.hashes, prompt.tokens) == (hashes, tokens)
        total = sum(tokens) + PER_MESSAGE * len(tokens) + rng.choice([3, 500])
        for sim, one, old in zip(new, together, ref):
            limit = sim.p.max_breakpoints
            assert prompt.breakpoints(limit) == breakpoints(tags, limit) == reference_breakpoints(tags, limit)
            hit = sim.request(t, hashes, tokens, total, breakpoints(tags, limit))
            assert (hit.read, hit.write) == old.request(t, hashes, tokens, total, reference_breakpoints(tags, limit)), \
                sim.p
            assert one.send(t, prompt, total) == hit


def test_shared_prefix():
    assert shared((1, 2), [1, 3]) == 1 and shared([], []) == 0 and shared([1, 2], []) == 0 and shared([1, 2, 3], [1, 2]) == 2
    for n in range(1, 40):
        a = list(range(n))
        for i in range(n):
            assert shared(a, a[:i] + [-1] + a[i + 1:]) == i
    m = [object() for _ in range(5)]
    assert shared(m, [*m[:3], object(), m[4]]) == 3                # messages compare by identity


def reference_rates(records, profs):
    """Each billed request rebuilt whole from the log's deltas and walked by the reference."""
    prev: dict[str, list] = {}
    state: dict[str, tuple[list, list]] = {}
    for rec in records:
        cell = rec["cell"]
        last, cur = prev.get(cell, []), []
        for s in rec["seq"]:
            cur += last[s[0]:s[1]] if isinstance(s, list) else [(s["h"], s["n"], s["tag"])]
        prev[cell] = cur
        if rec["kind"] == "probe" or rec.get("error"):
            continue
        refs, sums = state.setdefault(cell, ([Reference(p) for p in profs], [0] * (1 + len(profs))))
        sums[0] += rec["tokens"]
        tags = [m[2] for m in cur]
        for i, r in enumerate(refs):
            sums[i + 1] += r.request(rec["t"], [m[0] for m in cur], [m[1] for m in cur], rec["tokens"],
                                     reference_breakpoints(tags, r.p.max_breakpoints))[0]
    return {c: {p.name: s[i + 1] / s[0] for i, p in enumerate(profs)} for c, (_, s) in state.items()}


@pytest.mark.parametrize("seed", range(8))
def test_hit_rates_from_the_log_match_the_reference(seed):
    """The report's re-simulation from requests.jsonl's deltas, with failed calls and probes between."""
    rng = random.Random(100 + seed)
    profs = [load_profile(n) for n in profile_names()]
    fh = io.StringIO()
    for cell in ("a/x/offline/16000/0", "b/y/offline/16000/0"):
        log, session = RequestLog(fh, cell, {}), Session(rng)
        for _ in range(60):
            kind, t, msgs = session.step()
            tokens = sum(m.tokens for m in msgs) + PER_MESSAGE * len(msgs) + 3
            failed, probe = rng.random() < 0.05, rng.random() < 0.05
            log.write(msgs, kind="probe" if probe else kind, tokens=tokens, t=t,
                      **({"error": "timeout"} if failed else {}))
    records = [json.loads(line) for line in fh.getvalue().splitlines()]
    rates = hit_rates(records, profs)
    assert rates == reference_rates(records, profs)
    assert any(v > 0 for r in rates.values() for v in r.values())


def test_sent_reads_like_a_message():
    p = Prompt()
    p.follow([Sent("h0", 10, "system"), Sent("h1", 5, "summary"), Sent("h2", 5, "user")])
    assert p.breakpoints() == [0, 1, 2] and p.tokens == [10, 5, 5]
    p.follow([Sent("h0", 10, "system"), Sent("h3", 5, "user")])
    assert p.breakpoints() == [0, 1] and p.hashes == ["h0", "h3"]
