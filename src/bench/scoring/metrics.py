"""Which summary columns are scores, and which way is better: one list for the gate, repeats and report."""
from __future__ import annotations

HIGHER = ["goal_retention", "constraint_fidelity", "fact_retention", "decision_retention", "user_words_retained",
          "probe_pass_rate"]
LOWER = ["provenance_leakage", "stale_constraints", "rejected_revived"]
COUNTS = ["overflow_requests"]            # requests over the window: any rise fails, whatever the threshold
OPTIONAL = {"cost_usd": False, "cache_hit_rate": True}   # gated only when a gate names them; True: higher is better
INFO = ["compactions", "input_tokens"]    # shown, never gated
GATED = [*COUNTS, *HIGHER, *LOWER, *OPTIONAL]


def higher_is_better(metric: str) -> bool:
    return metric in HIGHER or OPTIONAL.get(metric, False)
