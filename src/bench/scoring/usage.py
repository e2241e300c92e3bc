"""Tokens, simulated cache hits and dollar cost of one cell's billed requests.

Agent requests are priced from the log (the scripted reply is the output), and so is the harness's
cache-warming request after an idle compaction (kind `warm`: what it installed, one output token);
compaction calls use the cost a real model reported, else the same rates with
the simulated cache. Failed writer calls are skipped: nothing is billed or cached.
Agent requests over the window are priced as if served (so overflowing never looks cheap),
and their share is reported apart: overflow_input_tokens, overflow_cost_usd.
Probe requests are evaluation, not part of the session, and never reach here.
"""
from __future__ import annotations

from typing import Any

from bench.scoring.cache_sim import CacheSim, Profile, Prompt, billed
from bench.harness.logs import LoggedRequest
from bench.scoring.metric import CELLS, COMPARE, CONSOLE, TOKENS, Family, Metric
from bench.scoring.pricing import Rates, cost

# Token counts of the cell (input, output and the compaction calls' come from the replay's own count),
# and what the meter below adds: cache reads, cost, hit rate, the over-window share.
FAMILY = Family((
    Metric("input_tokens", "info", "input tokens of the agent requests, as the harness counts them",
           aggregate="total", views={CONSOLE, TOKENS, COMPARE}),
    Metric("cached_input_tokens", "info", "of those, the simulated prompt cache's reads", aggregate="total",
           views={TOKENS}),
    Metric("output_tokens", "info", "output tokens of the agent requests (the scenario's scripted replies)",
           aggregate="total", views={TOKENS}),
    Metric("compaction_input_tokens", "info", "input tokens of the strategy's writer calls, as the model reports "
           "them", aggregate="total", views={TOKENS}),
    Metric("compaction_output_tokens", "info", "output tokens of the strategy's writer calls, as the model reports "
           "them", aggregate="total", views={TOKENS}),
    Metric("compaction_cached_tokens", "info", "of the writer calls' input, the simulated prompt cache's reads: the "
           "estimate to read beside `provider_cached_tokens`", aggregate="total", views={TOKENS}),
    Metric("provider_cached_tokens", "info", "cached input tokens the provider reported for the writer calls "
           "(`prompt_tokens_details.cached_tokens` or `cache_read_input_tokens`); empty where no call reported them "
           "(the offline writer, a server that does not say)", aggregate="total", views={TOKENS}),
    Metric("cost_usd", "lower", "dollars at litellm's bundled prices for `price.model=`, with the simulated "
           "cache's reads and writes; gated only when a gate names it, with a relative threshold", short="cost",
           gated="named", aggregate="total", relative=True, views={CONSOLE, TOKENS, CELLS}),
    Metric("cache_hit_rate", "higher", "cached input over input tokens of every billed request, from simulated "
           "prompt caching (`cache=openai|anthropic|gemini|deepseek|none`); gated only when a gate "
           "names it", short="cache", gated="named", aggregate="share", views={CONSOLE, TOKENS, CELLS}),
    Metric("overflow_input_tokens", "info", "input tokens of the agent requests over the window", aggregate="total"),
    Metric("overflow_cost_usd", "info", "the part of `cost_usd` no provider would serve (requests over the window)",
           aggregate="total", views={CELLS}),
))


class Meter:
    def __init__(self, profile: Profile, rates: Rates):
        self.sim, self.rates, self.profile = CacheSim(profile), rates, profile
        self.uncached = 0
        self.prompt = Prompt()                  # the last billed request, kept up to date by what changed
        self.input = self.cached = 0            # all billed requests, for the hit rate
        self.agent_cached = self.warm_cached = 0
        self.reported: int | None = None        # the provider's own count of cached writer input, when it says
        self.cost = 0.0
        self.over_tokens, self.over_cost = 0, 0.0   # agent requests over the window: no provider would serve them

    def add(self, r: LoggedRequest) -> None:
        rec = r.record
        self.uncached = 0                       # the request's input the simulated cache did not hold (the ledger)
        if not billed(rec):
            return
        self.prompt.follow(r.messages)
        hit = self.sim.send(float(rec.get("t") or 0.0), self.prompt, r.tokens)
        self.uncached = r.tokens - hit.read
        self.input += r.tokens
        self.cached += hit.read
        if r.kind in ("agent", "warm"):
            spent = cost(self.rates, r.tokens, hit.read, hit.write, int(rec.get("output_tokens") or 0))
            self.cost += spent
            if r.kind == "warm":        # the harness's own cache-warming request after an idle compaction
                self.warm_cached += hit.read
                return
            self.agent_cached += hit.read
            if rec.get("over"):
                self.over_tokens += r.tokens
                self.over_cost += spent
            return
        usage: dict[str, Any] = rec.get("usage") or {}
        if isinstance(usage.get("cached_input_tokens"), int):
            self.reported = (self.reported or 0) + usage["cached_input_tokens"]
        if usage.get("cost_usd") is not None:
            self.cost += float(usage["cost_usd"])
        else:
            self.cost += cost(self.rates, int(usage.get("input_tokens") or r.tokens), hit.read, hit.write,
                              int(usage.get("output_tokens") or 0))

    def columns(self) -> dict[str, Any]:
        return {"cached_input_tokens": self.agent_cached, "cost_usd": round(self.cost, 6),
                "compaction_cached_tokens": self.cached - self.agent_cached - self.warm_cached, "provider_cached_tokens": self.reported,
                "cache_hit_rate": round(self.cached / self.input, 4) if self.input else None,
                "overflow_input_tokens": self.over_tokens, "overflow_cost_usd": round(self.over_cost, 6)}
