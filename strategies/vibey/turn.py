"""The checkpoint turn: the same conversation, a harness instruction, tools, one repair.

The writer works on two files in a workspace the harness owns. Each round the
harness runs the tool calls of one reply, appends the assistant message and
the results, and asks again; after `rounds` rounds further calls are refused
and the writer is asked once more for its answer. A writer error
(bench.errors.ModelError) is not caught here: the strategy records the failed
checkpoint.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from bench.messages import Message
from bench.models.base import Model
from bench.scenario import Call
from bench.strategy import Session

from .memo import tick
from .mind import EditError, apply_edit, rewrite_section
from .texts import fill, tools

Check = Callable[["Workspace", str], tuple["str | None", list[str]]]


@dataclass
class Workspace:
    """The two files the writer may change, and the record it may read."""
    mind: str
    memo: str
    record: dict[int, Message]
    rewritten: str | None = None
    log: list[str] = field(default_factory=list)   # one line per call, for the compaction record

    def run(self, call: Call) -> str:
        args = call.args if isinstance(call.args, dict) else {}
        try:
            result = self._run(call.tool, args)
        except EditError as exc:
            result = f"error: {exc}"
        except (KeyError, TypeError, ValueError) as exc:
            result = f"error: bad arguments for {call.tool}: {exc}"
        self.log.append(f"{call.tool}: {result.splitlines()[0][:120] if result else ''}")
        return result

    def _run(self, name: str, a: dict) -> str:
        if name == "read_file":
            return self.read(str(a["path"]))
        if name == "edit_mind":
            self.mind = apply_edit(self.mind, str(a["old"]), str(a["new"]))
            return "mind.md edited"
        if name == "rewrite_mind_section":
            if self.rewritten is not None:
                raise EditError(f"one section may be rewritten per checkpoint ({self.rewritten!r} already was); "
                                f"use edit_mind")
            self.mind = rewrite_section(self.mind, str(a["section"]), str(a["text"]))
            self.rewritten = str(a["section"])
            return f"section {a['section']!r} rewritten"
        if name == "tick_memo":
            numbers = [int(n) for n in a["numbers"]]
            self.memo, result = tick(self.memo, numbers, bool(a.get("ticked", True)))
            return result
        if name == "edit_memo":
            old, new = str(a["old"]), str(a["new"])
            if not old or self.memo.count(old) != 1:
                raise EditError("`old` must occur exactly once in memo.md")
            self.memo = self.memo.replace(old, new, 1)
            return "memo.md edited; only checkbox changes will be accepted"
        raise EditError(f"unknown tool {name!r}")

    def read(self, path: str) -> str:
        path = path.strip().lstrip("./")
        if path == "mind.md":
            return self.mind
        if path == "memo.md":
            return self.memo
        if path.startswith("record/") and path[7:].isdigit() and int(path[7:]) in self.record:
            return self.record[int(path[7:])].text
        raise EditError(f"no file {path!r}; readable: mind.md, memo.md, record/N (N a message number)")


@dataclass
class Outcome:
    answer: str = ""
    scene: str | None = None
    problems: list[str] = field(default_factory=list)   # what still stands after the repair
    found: list[str] = field(default_factory=list)      # every problem seen, repaired or not
    repairs: int = 0
    rounds: int = 0


async def run(session: Session, conversation: list[Message], instruction: Message, ws: Workspace,
              check: Check, *, rounds: int, repairs: int, n: int) -> Outcome:
    msgs = [session.system, *conversation, instruction]   # the agent's own request, so the prefix is shared
    out = Outcome()
    ask = _Asker(session, msgs, ws, rounds, n, out)
    answer, notes = await ask("checkpoint")
    scene, problems = check(ws, answer)
    problems = notes + problems
    out.found += problems
    while problems and out.repairs < repairs:
        out.repairs += 1
        msgs.append(session.message(id=f"ckpt{n}-answer{out.repairs}", role="assistant", text=answer,
                                    tag="checkpoint"))
        text = fill("repair.md", user=session.user, rounds=rounds, problems="\n".join(f"- {p}" for p in problems))
        msgs.append(session.message(id=f"ckpt{n}-repair{out.repairs}", role="user", text=text, tag="harness"))
        answer, notes = await ask("checkpoint-repair")
        scene, problems = check(ws, answer)
        problems = notes + problems
        out.found += [p for p in problems if p not in out.found]
    out.answer, out.scene, out.problems = answer, scene, problems
    return out


class _Asker:
    """Asks until the writer answers without tool calls, running at most `rounds` rounds of calls."""

    def __init__(self, session: Session, msgs: list[Message], ws: Workspace, rounds: int, n: int, out: Outcome):
        self.session, self.msgs, self.ws, self.rounds, self.n, self.out = session, msgs, ws, rounds, n, out
        self.k = 0

    async def __call__(self, purpose: str) -> tuple[str, list[str]]:
        notes: list[str] = []
        used = 0
        while True:
            reply = await self.session.writer.chat(self.msgs, tools=list(tools()),
                                                   max_tokens=self.session.reserve_output, purpose=purpose)
            if not reply.calls:
                return reply.text, notes
            self.k += 1
            self.msgs.append(self.session.message(id=f"ckpt{self.n}-a{self.k}", role="assistant", text=reply.text,
                                                  tag="checkpoint", calls=reply.calls))
            over = used >= self.rounds
            for c in reply.calls:
                result = (f"not run: the limit of {self.rounds} rounds of tool calls is reached; answer now with "
                          f"the checkpoint block") if over else self.ws.run(c)
                self.msgs.append(self.session.message(id=f"ckpt{self.n}-r{self.k}-{c.id}", role="tool",
                                                      text=result, tag="checkpoint", call_id=c.id, tool=c.tool))
            if over:
                notes.append(f"turn: the writer asked for more than {self.rounds} rounds of tool calls; the extra "
                             f"calls were not run")
                reply = await self.session.writer.chat(self.msgs, tools=list(tools()),
                                                       max_tokens=self.session.reserve_output, purpose=purpose)
                return reply.text, notes
            used += 1
            self.out.rounds += 1
