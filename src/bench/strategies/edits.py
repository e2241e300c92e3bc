"""What naive, context_editing and masking share: window-relative sizes, tool-result
placeholders, and the drop-oldest fallback.

Sizes are configured relative to the window by default because the bundled
scenarios run at windows from a few hundred tokens to 200k: a fixed token count
that suits one is meaningless at the other.
"""
from __future__ import annotations

from typing import Callable, Iterable

from bench.harness.messages import Message, make, remake
from bench.scenarios.model import Call
from bench.harness.strategy import Compaction, Strategy, drop_oldest

# The drop fallback goes down to this share of the harness limit, not just under it,
# so the next request does not drop again at once (one cache break, not one per request).
DROP_TARGET = 0.8


def window_share(value: float | int | None, window: int, name: str) -> int | None:
    """A size given as a fraction of the window (0 < value <= 1) or in tokens (value > 1)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"{name} must be a fraction of the window (0-1] or a token count, got {value!r}")
    return int(value * window) if value <= 1 else int(value)


def check_share(value: float | int | None, name: str) -> None:
    """Fail at construction (a one-line config error) rather than at the first replay."""
    window_share(value, 1, name)


def tool_results(messages: Iterable[Message]) -> list[Message]:
    """Tool outputs still shown as the tool produced them (not yet replaced)."""
    return [m for m in messages if m.role == "tool" and m.tag == "tool"]


def replace_results(strategy: Strategy, ids: set[str], text: Callable[[Message], str],
                    clear_inputs: bool = False) -> list[str]:
    """Swap the tool results named in `ids` for placeholders (same id, role and call id, so
    the call keeps its answer); optionally blank the arguments of those calls too.
    Returns the ids of the calls whose arguments were cleared."""
    tok = strategy.session.tok
    calls = {m.call_id for m in strategy.messages if m.id in ids}
    cleared_inputs: list[str] = []
    out = []
    for m in strategy.messages:
        if m.id in ids:
            m = make(tok, id=m.id, role=m.role, text=text(m), tag="placeholder", t=m.t, call_id=m.call_id,
                     tool=m.tool)
        elif clear_inputs and any(c.id in calls and c.args for c in m.calls):
            cleared_inputs.extend(c.id for c in m.calls if c.id in calls and c.args)
            m = remake(tok, m, calls=[Call(c.id, c.tool, {} if c.id in calls else c.args) for c in m.calls])
        out.append(m)
    strategy.messages = out
    return cleared_inputs


def fit(strategy: Strategy, comp: Compaction, pinned: int = 0) -> Compaction:
    """If the context still exceeds the harness limit, drop the oldest turns (never the first
    `pinned` messages, never a call without its result) and record that fallback."""
    limit = strategy.session.limit
    size = strategy.size()
    if size <= limit:
        return comp
    head, rest = strategy.messages[:pinned], strategy.messages[pinned:]
    kept, dropped = drop_oldest(rest, size, int(DROP_TARGET * limit))
    strategy.messages = head + kept
    comp.after = strategy.size()
    comp.fallback = "drop_oldest"
    comp.fields["dropped"] = comp.fields.get("dropped", []) + [m.id for m in dropped]
    if comp.after > limit:
        comp.problems.append(f"still {comp.after} tokens after dropping: the newest turn alone exceeds "
                             f"the limit of {limit}")
    return comp
