"""The checkpoint turn: the same conversation, a harness instruction, tools, one repair.

The writer works on two files in a workspace the harness owns. Each round the
harness runs the tool calls of one reply, appends the assistant message and
the results, and asks again; after `rounds` rounds in the whole checkpoint
(first ask and repair together) further calls are refused and the writer is
asked once more for its answer. Every request of the turn leaves room for its
`max_tokens` in the window: a round whose results would not is not run (the
writer is asked for its answer), and a request that cannot fit at all raises
NoRoom, a failed checkpoint. A writer error
(bench.errors.ModelError) is not caught here: the strategy records the failed
checkpoint.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable

from bench.harness.answers import cut
from bench.harness.messages import Message
from bench.scenarios.model import Call
from bench.harness.strategy import Session

from bench.strategies.vibey.memo import tick
from bench.strategies.vibey.mind import EditError, apply_edit, rewrite_section, whole_section
from bench.strategies.vibey.texts import fill, tools

Check = Callable[["Workspace", str], tuple["str | None", list[str]]]


@dataclass
class Workspace:
    """The two files the writer may change, and the record it may read."""
    mind: str
    memo: str
    record: dict[int, Message]
    rewritten: str | None = None
    log: list[str] = field(default_factory=list)   # one line per call, for the compaction record

    def save(self) -> tuple[str, str, str | None, int]:
        return self.mind, self.memo, self.rewritten, len(self.log)

    def restore(self, saved: tuple[str, str, str | None, int], tools_: list[str]) -> None:
        """Undo a round that is not run after all; its calls are logged as not run."""
        self.mind, self.memo, self.rewritten, n = saved
        del self.log[n:]
        self.log += [f"{t}: not run (no room for the results)" for t in tools_]

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
            old = str(a["old"])
            whole = whole_section(self.mind, old)
            if whole is not None and self.rewritten is not None:
                raise EditError(f"this edit replaces the whole of section {whole!r}, and one section may be "
                                f"rewritten per checkpoint ({self.rewritten!r} already was); edit only the lines "
                                f"that changed")
            self.mind = apply_edit(self.mind, old, str(a["new"]))
            if whole is None:
                return "mind.md edited"
            self.rewritten = whole
            return (f"mind.md edited; this edit replaced the whole of section {whole!r}, which counts as this "
                    f"checkpoint's one section rewrite")
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


class NoRoom(Exception):
    """The checkpoint turn's next request would leave no room for the answer in the window."""


async def run(session: Session, conversation: list[Message], instruction: Message, ws: Workspace,
              check: Check, *, rounds: int, repairs: int, n: int, window: int) -> Outcome:
    """`rounds` rounds of tool calls in all, the repair included; every request of the turn plus
    its `max_tokens` (the agent's output reserve) stays within `window`, or NoRoom is raised."""
    msgs = [session.system, *conversation, instruction]   # the agent's own request, so the prefix is shared
    out = Outcome()
    ask = _Asker(session, msgs, ws, rounds, n, out, window)
    answer, notes = await ask("checkpoint")
    scene, problems = check(ws, answer)
    problems = ask.cut_note() + problems
    problems = notes + problems
    out.found += problems
    while problems and out.repairs < repairs:
        out.repairs += 1
        msgs.append(session.message(id=f"ckpt{n}-answer{out.repairs}", role="assistant", text=answer,
                                    tag="checkpoint"))
        text = fill("repair.md", user=session.user, rounds=rounds, left=rounds - ask.used,
                    problems="\n".join(f"- {p}" for p in problems))
        msgs.append(session.message(id=f"ckpt{n}-repair{out.repairs}", role="user", text=text, tag="harness"))
        answer, notes = await ask("checkpoint-repair")
        scene, problems = check(ws, answer)
        problems = ask.cut_note() + problems
        problems = notes + problems
        out.found += [p for p in problems if p not in out.found]
    out.answer, out.scene, out.problems = answer, scene, problems
    return out


class _Asker:
    """Asks until the writer answers without tool calls. One counter of rounds serves the whole
    checkpoint (first ask and repair); a round whose results would leave no room for the answer
    is not run, and the writer is asked for its final answer instead."""

    def __init__(self, session: Session, msgs: list[Message], ws: Workspace, rounds: int, n: int, out: Outcome,
                 window: int):
        self.session, self.msgs, self.ws, self.rounds, self.n, self.out = session, msgs, ws, rounds, n, out
        self.window, self.k, self.used = window, 0, 0
        self.finish: str | None = None      # the finish reason of the last answer
        self.schema = session.tok.count(json.dumps(list(tools()), sort_keys=True))

    def size(self, msgs: list[Message]) -> int:
        """Tokens of a request of the turn, tool definitions included (as the harness counts it)."""
        return self.session.tok.size_of(msgs) + self.schema

    def room(self, msgs: list[Message]) -> bool:
        return self.size(msgs) + self.session.reserve_output <= self.window

    async def chat(self, purpose: str):
        if not self.room(self.msgs):
            raise NoRoom(f"the checkpoint turn's request ({self.size(self.msgs)} tokens) and its answer "
                         f"({self.session.reserve_output}) do not fit the window of {self.window}")
        reply = await self.session.writer.chat(self.msgs, tools=list(tools()),
                                               max_tokens=self.session.reserve_output, purpose=purpose)
        self.finish = reply.finish
        return reply

    def cut_note(self) -> list[str]:
        """A final answer cut at max_tokens is no checkpoint, whatever it holds (bench.harness.answers)."""
        return ["answer: the final answer was cut at max_tokens (finish: length)"] if cut(self.finish) else []

    def result(self, c: Call, text: str) -> Message:
        return self.session.message(id=f"ckpt{self.n}-r{self.k}-{c.id}", role="tool", text=text, tag="checkpoint",
                                    call_id=c.id, tool=c.tool)

    async def __call__(self, purpose: str) -> tuple[str, list[str]]:
        notes: list[str] = []
        while True:
            reply = await self.chat(purpose)
            if not reply.calls:
                return reply.text, notes
            self.k += 1
            asked = self.session.message(id=f"ckpt{self.n}-a{self.k}", role="assistant", text=reply.text,
                                         tag="checkpoint", calls=reply.calls)
            if self.used < self.rounds:
                saved = self.ws.save()
                results = [self.result(c, self.ws.run(c)) for c in reply.calls]
                if self.room([*self.msgs, asked, *results]):
                    self.msgs += [asked, *results]
                    self.used += 1
                    self.out.rounds += 1
                    continue
                self.ws.restore(saved, [c.tool for c in reply.calls])
                refusal = ("not run: the results of this round would leave no room in the context for your "
                           "answer; answer now with the checkpoint block")
                self.out.found.append(f"turn: round {self.used + 1} of tool calls was not run, its results would "
                                      f"not leave room for the answer in the window of {self.window}")
            else:
                refusal = (f"not run: the limit of {self.rounds} rounds of tool calls of this checkpoint is "
                           f"reached; answer now with the checkpoint block")
                notes.append(f"turn: the writer asked for more than {self.rounds} rounds of tool calls; the extra "
                             f"calls were not run")
            self.msgs += [asked, *[self.result(c, refusal) for c in reply.calls]]
            reply = await self.chat(purpose)
            return reply.text, notes
