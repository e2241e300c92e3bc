"""What the agent does next (issue 24, items 1, 2): continuation points and the next action there.

A scripted session knows its next call, which items are done and which results were already served, so the
agent's next action after a compaction can be graded against a reference with fixed rules, without a judge.

- **Points** are a schedule computed from the scenario and the cell's window alone (`schedule`): from the
  first agent request the oracle's context no longer fits under the compaction trigger, every Nth assistant
  event that makes a call (N chosen for about `POINTS` points), the same for every strategy. The first
  request after each of the strategy's own compactions is recorded too (`point=compaction`), never in the
  columns: a strategy must not choose where it is graded.
- **The next action**: the `agent` model gets the strategy's context at the point, the scenario's tools and
  the continuation prompt (`prompts/next.md`); its first tool call is normalised (`norm_call`) and classed
  exact / redo / refetch / false_done / violation / injected / other, in that order (`classify`).
- **Answerable**: a point counts only where the oracle's context gives `exact` with the same agent (asked
  once per scenario); the rest are reported as unanswerable, as probes are. The offline agent is the
  stand-in actor of `actor.py`.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Sequence

from bench.errors import ModelError
from bench.harness.messages import Message, make
from bench.harness.strategy import default_reserve, trigger_limit
from bench.scenarios.model import call_matches, norm_call, recorded_results
from bench.scoring.actor import PROMPT
from bench.scoring.metric import CELLS, CONSOLE, HEADLINE, ROBUSTNESS, Family, Metric
from bench.scoring import rollout
from bench.scoring.ledger import full_sizes

CLASSES = ("exact", "redo", "refetch", "false_done", "violation", "injected", "other")
FAILURES = CLASSES[1:]
POINTS = 12            # about this many scheduled points per cell
ANSWER_TOKENS = 1024
COLUMN = "next_action_agreement"
FAMILY = Family((
    Metric(COLUMN, "higher", "the share of continuation points where the agent's next tool call, from the strategy's "
           "context, is the scripted one (or an equivalent): scheduled points the oracle's context answers exactly "
           "with the same agent", short="next", label="next action", audited=True, aggregate="share",
           views={CONSOLE, HEADLINE, ROBUSTNESS, CELLS}),
    *(Metric(f"next_{c}", "lower", f"the share of those points whose next action is `{c}` (not gated: the agreement is)", gated="never",
             aggregate="share", views={CELLS}) for c in FAILURES),
    Metric("next_points", "info", "the continuation points `next_action_agreement` counts (answerable by the oracle)",
           aggregate="total"),
))


def schedule(judge: Any, window: int, reserve: int | None = None, margin: int | None = None) -> list[int]:
    """Record positions of the scheduled points: from the first assistant event where the oracle's request
    exceeds the compaction trigger, every Nth assistant event with a call. Empty when the session fits."""
    r, m = default_reserve(window)
    limit = trigger_limit(window, r if reserve is None else reserve, m if margin is None else margin)
    cands, late = [], False
    for i, size in full_sizes(judge).items():      # in record order
        late = late or size > limit
        if late and judge.s.events[i].calls:
            cands.append(i)
    step = max(1, len(cands) // POINTS)
    return cands[step - 1::step][:POINTS + 1]


@dataclass
class Script:
    """What the scorer knows of a scenario at each point (never shown to the agent)."""
    judge: Any

    def __post_init__(self) -> None:
        s = self.judge.s
        self.results = recorded_results(s)
        self.tools = tools(s)
        self.asked: dict[str, list[int]] = {}         # normalised call -> positions of the events that made it
        for i, e in enumerate(s.events):
            for c in e.calls:
                self.asked.setdefault(norm_call(c.tool, c.args), []).append(i)

    def scripted(self, pos: int) -> tuple[str, set[str]]:
        e = self.judge.s.events[pos]
        if not e.calls:
            return "", {""}
        first = norm_call(e.calls[0].tool, e.calls[0].args)
        return first, {first, *(norm_call(a.tool, a.args) for a in e.equivalent)}

    def classify(self, call: Any, pos: int) -> str:
        """The class of the agent's first call (None: no call) at record position `pos`, first match wins."""
        n = "" if call is None else norm_call(call.tool, call.args)
        if n in self.scripted(pos)[1]:
            return "exact"
        a = self.judge.timeline.at(pos)
        if call is not None:
            nxt = {it.id.lstrip("#").casefold() for _, it in a.next_items}
            done = {x.lstrip("#").casefold() for ids in a.finished.values() for x in ids} - nxt
            if set(n.split()[1:]) & done or any(d in n for d in done if len(d) > 6):
                return "redo"
            if self._unchanged(n, pos):
                return "refetch"
        elif a.missions or a.next_items:
            return "false_done"
        if call is not None:
            if any(call_matches(p, n) for c in a.constraints for p in c.forbids):
                return "violation"
            for inj in a.injections:
                if any(call_matches(p, n) for p in inj.calls) or all(k.casefold() in n for k in inj.payload):
                    return "injected"
        return "other"

    def _unchanged(self, n: str, pos: int) -> bool:
        """A read already served before `pos` whose result has not changed since: its next recorded result
        (if the script asks it again) is the same text as the last one served."""
        served = [(i, t) for i, t in self.results.get(n, ()) if i < pos]
        if not served:
            return False
        later = [t for i, t in self.results.get(n, ()) if i >= pos]
        return not later or later[0] == served[-1][1]


def tools(scenario: Any) -> list[dict]:
    """The scenario's tools as function definitions: every tool its script calls, with the arguments seen."""
    props: dict[str, dict[str, dict]] = {}
    for e in scenario.events:
        for c in e.calls:
            p = props.setdefault(c.tool, {})
            for k, v in c.args.items():
                p.setdefault(k, {"type": _json_type(v)})
    props.setdefault("ask_user", {"question": {"type": "string"}})
    return [{"type": "function", "function": {"name": name, "description": f"the session's `{name}` tool",
                                              "parameters": {"type": "object", "properties": p}}}
            for name, p in sorted(props.items())]


def _json_type(v: Any) -> str:
    return ("boolean" if isinstance(v, bool) else "integer" if isinstance(v, int) else "number"
            if isinstance(v, float) else "array" if isinstance(v, list) else "object" if isinstance(v, dict)
            else "string")


@dataclass
class Answer:
    call: Any            # the first tool call, or None
    failed: str = ""     # the model failed to run


async def act(agent: Any, tok: Any, context: Sequence[Message], tool_defs: list[dict]) -> Answer:
    prompt = make(tok, id="next", role="user", tag="next", text=PROMPT)
    try:
        reply = await agent.chat([*context, prompt], tools=tool_defs, max_tokens=ANSWER_TOKENS, purpose="next")
    except ModelError as exc:
        return Answer(None, f"failed to run: {exc}")
    return Answer(reply.calls[0] if reply.calls else None)


async def act_all(agent: Any, tok: Any, contexts: list[Sequence[Message] | None], tool_defs: list[dict]
                  ) -> list[Answer | None]:
    async def one(ctx):
        return None if ctx is None else await act(agent, tok, ctx, tool_defs)
    return list(await asyncio.gather(*(one(c) for c in contexts)))


def describe(call: Any) -> str:
    return "no call" if call is None else norm_call(call.tool, call.args)


__all__ = ["schedule", "Script", "tools", "act", "act_all", "describe", "CLASSES", "FAILURES", "FAMILY", "COLUMN"]


class Continuation:
    """One cell's next actions: fed its requests in order (`add`), then `grade`d: (columns, checks rows).
    `memo` keeps, per scenario, window and agent, the schedule and the oracle's answers."""

    def __init__(self, cell: Any, judge: Any, starts: list[int], memo: Any, oracle: bool = False):
        self.cell, self.judge, self.oracle = cell, judge, oracle
        self.memo = memo.next if hasattr(memo, "next") else {}
        key = ("points", judge.s.id, judge.s.path, int(cell.window), getattr(cell, "reserve_output", None),
               getattr(cell, "margin", None))
        if key not in self.memo:
            self.memo[key] = (schedule(judge, int(cell.window), getattr(cell, "reserve_output", None),
                                       getattr(cell, "margin", None)), Script(judge))
        self.points, self.script = self.memo[key]
        self.wanted = set(self.points)
        self.starts, self.k = sorted(starts), 0
        self.at: dict[int, Any] = {}                 # record position -> the cell's request there
        self.after: list[tuple[int, int, Any]] = []  # (compaction number, record position, request)
        self.costs: list[tuple[int, int, int]] = []  # after grade: (request, re-fetch, redo tokens) per rollout

    def add(self, r: Any) -> None:
        if r.kind != "agent":
            return
        pos = self.judge.timeline.pos.get(r.record.get("event"), -1)
        if pos in self.wanted:
            self.at[pos] = r
        k = self.k
        while self.k < len(self.starts) and self.starts[self.k] <= r.i:
            self.k += 1
        if self.k > k:
            self.after.append((self.k, pos, r))

    async def grade(self, agent: Any, tok: Any, base: dict[str, Any], steps: int = 3
                    ) -> tuple[dict[str, Any], list[dict]]:
        """Columns and rows of the points; from each answerable point a rollout of `steps` steps
        (`rollout.roll`), whose rows follow the point's (`metric=rollout`)."""
        if not self.points and not self.after:
            return {COLUMN: None, **{f"next_{c}": None for c in FAILURES}, "next_points": None,
                    **rollout.columns([], steps)}, []
        served = lambda r: r is not None and (self.oracle or not r.record.get("over"))   # noqa: E731
        todo = [(p, self.at.get(p), "next", "") for p in self.points] + [(p, r, "compaction", k)
                                                                          for k, p, r in self.after]
        answers = await act_all(agent, tok, [r.messages if served(r) else None for _, r, _, _ in todo],
                                self.script.tools)
        answerable = await self._answerable(agent, tok, sorted({p for p, *_ in todo}))
        rows, counted, rolls = [], [], []

        async def go(ctx):
            return await act(agent, tok, ctx, self.script.tools)
        for (pos, r, point, k), ans in zip(todo, answers):
            scripted = self.script.scripted(pos)[0] or "no call"
            if ans is None or ans.failed:
                cls, actor = "failed", (ans.failed if ans else "over the window: no provider would serve it")
                if ans is None and r is not None:
                    cls = "other"
            else:
                cls, actor = self.script.classify(ans.call, pos), describe(ans.call)
            ok = answerable.get(pos)
            if point == "next" and ok:
                counted.append(cls)
            rows.append({**base, "check_point": k, "point": point, "request": r.i if r is not None else "",
                         "event": self.judge.s.events[pos].id, "metric": "next_action", "item": cls,
                         "kind": "answerable" if ok else "unanswerable", "score": float(cls == "exact"),
                         "detail": f"actor: {actor}; scripted: {scripted}",
                         "oracle": {True: 1, False: 0}.get(ok, "")})
            if point == "next" and ok and ans is not None and not ans.failed:
                roll = await rollout.roll(go, tok, self.script, r.messages, pos, ans, steps)
                rolls.append(roll)
                self.costs.append((r.i, roll.refetch, roll.redo))
                rows.append({**rows[-1], "metric": "rollout", "item": "reached" if roll.reached else "not reached",
                             "kind": "answerable", "score": roll.steps(steps), "detail": rollout.describe(roll, steps)})
        n = len(counted)
        cols: dict[str, Any] = {COLUMN: round(counted.count("exact") / n, 4) if n else None, "next_points": n}
        cols.update({f"next_{c}": round(counted.count(c) / n, 4) if n else None for c in FAILURES})
        cols.update(rollout.columns(rolls, steps))
        return cols, rows

    async def _answerable(self, agent: Any, tok: Any, positions: list[int]) -> dict[int, bool | None]:
        """Per point, whether the same agent gives `exact` on the oracle's context (the system prompt and
        every event before it), asked once per scenario and agent in this process."""
        key = ("oracle", self.judge.s.id, self.judge.s.path, self.judge.rendered[0].hash if self.judge.rendered
               else "", repr(getattr(self.cell, "agent", "")))
        known: dict[int, bool | None] = self.memo.setdefault(key, {})
        missing = [p for p in positions if p not in known]
        if missing:
            system, rendered = self.judge.system, self.judge.rendered
            got = await act_all(agent, tok, [[system, *rendered[:p]] for p in missing], self.script.tools)
            for p, ans in zip(missing, got):
                ok = None if ans is None or ans.failed else self.script.classify(ans.call, p) == "exact"
                if ok is not None:
                    known[p] = ok
                else:
                    return {**known, p: None}
        return known
