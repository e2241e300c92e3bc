"""Rollouts from each continuation point (issue 24, item 3): what a lost detail costs over the next steps.

One next call says where the agent goes; a few steps say what the detour costs. From each answerable point
the agent goes on for `continuation.steps` steps on the strategy's context, each of its calls answered from
the scenario's recorded results by normalised call (the last result served before the point, else the first
after it: the session's own world), an unknown call with a marked stub. The rollout stops at the scripted
call (or an equivalent), or when the agent stops. Measured per point: the step that reaches the scripted
call (steps + 1 when none does), loops (a normalised call the rollout already made), and the tokens of the
results a `refetch` or `redo` step brings back (what re-reading and redoing costs; the tokens-per-task
ledger carries them). The agent sees its own steps and nothing else: the truth only classes them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from bench.harness.messages import Message, make
from bench.scenarios.model import Call, norm_call
from bench.scoring.metric import CELLS, TOKENS, Family, Metric

STUB = "[Harness: stub] The session recorded no result for `{call}`."
FAMILY = Family((
    Metric("next_steps", "lower", "rollout steps from an answerable continuation point to the scripted call (steps + 1 "
           "when the rollout never reaches it), mean over the points (`continuation.steps`; not gated: the agreement is)",
           gated="never", views={CELLS}),
    Metric("next_loops", "lower", "rollout steps that repeat a normalised call the same rollout already made, over the "
           "cell (not gated)", gated="never", aggregate="total", views={CELLS}),
    Metric("refetch_tokens", "lower", "tokens of the recorded results the rollouts' `refetch` steps read again "
           "(a result already served, unchanged), over the cell (not gated)", gated="never", aggregate="total",
           views={TOKENS}),
    Metric("redo_tokens", "lower", "tokens of the results the rollouts' `redo` steps bring back (work on a finished "
           "item), over the cell (not gated)", gated="never", aggregate="total", views={TOKENS}),
))


@dataclass
class Rollout:
    """One point's rollout: the step reaching the scripted call (0: none), each step's class and call."""
    reached: int = 0
    classes: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    loops: int = 0
    refetch: int = 0
    redo: int = 0

    def steps(self, k: int) -> int:
        return self.reached or k + 1


def result_for(script: Any, n: str, pos: int) -> str | None:
    """The recorded result of normalised call `n` as the session stood at `pos`: the last one served before
    it, else the first one after it; None when the record never made the call."""
    got = script.results.get(n)
    if not got:
        return None
    before = [t for i, t in got if i < pos]
    return before[-1] if before else got[0][1]


async def roll(act: Any, tok: Any, script: Any, context: Sequence[Message], pos: int, first: Any, k: int) -> Rollout:
    """Continue from `first` (the point's answer: `.call`, `.failed`) for up to `k` steps. `act(context)` gives
    the next answer for a context (the same agent and tools as the point)."""
    out, ctx, seen, ans = Rollout(), list(context), set(), first
    for step in range(1, k + 1):
        if ans is None or ans.failed:
            break
        cls = script.classify(ans.call, pos)
        n = "" if ans.call is None else norm_call(ans.call.tool, ans.call.args)
        out.classes.append(cls)
        out.calls.append(n or "no call")
        if cls == "exact":
            out.reached = step
            break
        if ans.call is None:
            break
        out.loops += n in seen
        seen.add(n)
        text = result_for(script, n, pos)
        result = make(tok, id=f"roll-r{step}", role="tool", tag="tool", call_id=f"roll-{step}", tool=ans.call.tool,
                      text=STUB.format(call=n) if text is None else text)
        if cls == "refetch":
            out.refetch += result.tokens
        elif cls == "redo":
            out.redo += result.tokens
        if step == k:
            break
        call = Call(f"roll-{step}", ans.call.tool, dict(ans.call.args))
        ctx += [make(tok, id=f"roll-a{step}", role="assistant", tag="assistant", text="", calls=(call,)), result]
        ans = await act(ctx)
    return out


def columns(rollouts: list[Rollout], k: int) -> dict[str, Any]:
    """The family's columns, in its order: mean steps, loops, re-fetch and redo tokens (no rollout: no steps)."""
    n = len(rollouts)
    values = (round(sum(r.steps(k) for r in rollouts) / n, 4) if n else None, sum(r.loops for r in rollouts) if n else None,
              sum(r.refetch for r in rollouts), sum(r.redo for r in rollouts))
    return dict(zip((m.column for m in FAMILY.metrics), values))


def describe(r: Rollout, k: int) -> str:
    reached = f"reached at step {r.reached}" if r.reached else f"not reached in {k}"
    return f"rollout: {' > '.join(f'{c} ({x})' for c, x in zip(r.calls, r.classes))}; {reached}" + \
        (f"; loops {r.loops}" if r.loops else "") + (f"; refetch {r.refetch} tokens" if r.refetch else "") + \
        (f"; redo {r.redo} tokens" if r.redo else "")


__all__ = ["FAMILY", "Rollout", "roll", "result_for", "columns", "describe", "STUB"]
