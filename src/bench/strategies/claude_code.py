"""Claude Code's auto-compaction, as its documentation and public readings of its source describe it.

It waits until the context nearly fills the window: the trigger leaves room for the summary's own
output (`reserve`, the summary call's max_tokens) and a safety `buffer` below that. Then the whole
context, an earlier summary included, goes to the writer with a structured instruction (nine
sections, prompts/claude_code.md), and the answer replaces everything. Afterwards the context is
that summary, the files read most recently (up to `files`, each within `file_tokens`, all within
`files_total`; their recorded read result, since a replay has no disk) and the open todo list
(the latest call of a todo tool). Nothing stays verbatim: the user's latest words live on only
through the summary. Budgets are Claude Code's at a 200k window and scale down with smaller ones.

A writer error, an empty or garbled answer is a failed compaction; the request goes on if it fits,
else the oldest turns are dropped (recorded). After `max_failures` failures in a row it stops
compacting, as Claude Code's circuit breaker does, and only the drop fallback is left.
"""
from __future__ import annotations

import re
from collections import OrderedDict
from pathlib import Path

from bench.harness.messages import Message
from bench.harness.strategy import Compaction, Session, Strategy

from bench.strategies import sectioned
from bench.strategies.edits import fit
from bench.strategies.files import paths, shows_content

PROMPTS = Path(__file__).parent / "prompts"
PROMPT = (PROMPTS / "claude_code.md").read_text(encoding="utf-8").strip()
FRAME = (PROMPTS / "claude_code_frame.md").read_text(encoding="utf-8").strip()
SECTIONS = sectioned.headings(PROMPT)
OWN = ("summary", "file", "todo", "instructions")          # tags of what this strategy puts in the context
TODO_TOOL = re.compile(r"todo", re.I)
DONE = {"completed", "complete", "done", "cancelled", "canceled"}


class ClaudeCode(Strategy):
    calls_writer = True
    offline_players = (sectioned.offline_play,)

    def __init__(self, reserve: int = 20000, buffer: int = 13000, full_window: int = 200000, files: int = 5,
                 file_tokens: int = 5000, files_total: int = 50000, focus: str | None = None,
                 max_failures: int = 3, floor: int = 32, instructions: list[str] | None = None,
                 idle_ttl: float | None = None, idle_lead: float = 0.9, idle_min: float = 0.5,
                 warm_min: int | None = None):
        for name, value in (("reserve", reserve), ("buffer", buffer), ("full_window", full_window),
                            ("files", files), ("file_tokens", file_tokens), ("files_total", files_total),
                            ("max_failures", max_failures), ("floor", floor)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")
        if not full_window or not reserve:
            raise ValueError("reserve and full_window must be above 0")
        if focus is not None and not isinstance(focus, str):
            raise ValueError(f"focus must be text or null, got {focus!r}")
        self.reserve, self.buffer, self.full_window = reserve, buffer, full_window
        self.files, self.file_tokens, self.files_total = files, file_tokens, files_total
        self.focus, self.max_failures, self.floor = (focus or "").strip() or None, max_failures, floor
        names = ["CLAUDE.md", "AGENTS.md"] if instructions is None else instructions
        if not isinstance(names, list) or not all(isinstance(n, str) and n.strip() for n in names):
            raise ValueError(f"instructions must be a list of file names, got {instructions!r}")
        self.instruction_names = {n.strip().lower() for n in names}
        for name, value in (("idle_ttl", idle_ttl), ("idle_lead", idle_lead), ("idle_min", idle_min)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
                raise ValueError(f"{name} must be a number >= 0 or null, got {value!r}")
        if not 0 < idle_lead <= 1:
            raise ValueError(f"idle_lead must be in (0, 1], got {idle_lead!r}")
        # idle compaction: shortly before the cache (the run's cache profile TTL) would expire
        self.idle_after = idle_ttl * idle_lead if idle_ttl else None
        self.idle_min = idle_min
        if warm_min is not None and (isinstance(warm_min, bool) or not isinstance(warm_min, int) or warm_min < 0):
            raise ValueError(f"warm_min must be a whole number >= 0 or null, got {warm_min!r}")
        self.warm_min = warm_min if self.idle_after else None   # the cache's minimum: warm only what it would keep

    def begin(self, session: Session) -> None:
        super().begin(session)
        self.rounds = self.failures = 0
        self.reads: OrderedDict[str, str] = OrderedDict()     # path(s) -> latest read result, oldest first
        self.pending: dict[str, str] = {}                      # call id -> path(s) of a read in flight
        self.todos: list[dict] = []
        self.instructions: OrderedDict[str, str] = OrderedDict()   # instruction file path -> its latest read

    def scaled(self, tokens: int) -> int:
        return max(self.floor, int(tokens * min(1.0, self.session.window / self.full_window)))

    def trigger(self) -> int:
        # the buffer is never smaller than the instruction itself, so the writer sees the whole context
        buffer = max(self.scaled(self.buffer), self.session.tok.count(self.instruction_text()) + 16)
        own = self.session.window - self.scaled(self.reserve) - buffer
        return max(1, min(own, self.session.limit))

    def add(self, msg: Message) -> None:
        super().add(msg)
        for c in msg.calls:
            if shows_content(c):
                self.pending[c.id] = ", ".join(paths(c.args))
            items = _todo_items(c.args) if TODO_TOOL.search(c.tool) else None
            if items is not None:
                self.todos = items
        if msg.role == "tool" and msg.call_id in self.pending:
            path = self.pending.pop(msg.call_id)
            if Path(path).name.lower() in self.instruction_names:
                self.instructions[path] = msg.text     # re-read after every compaction, outside the file budget
                return
            self.reads.pop(path, None)
            self.reads[path] = msg.text

    def should_compact(self) -> bool:
        size = self.size()
        return size > self.session.limit or (self.failures < self.max_failures and size > self.trigger())

    async def idle(self) -> Compaction | None:
        """Compact while the session waits and the cache still holds its prefix, so the request after the
        gap sends the summary, not the whole context uncached; only when the context is worth it."""
        if self.failures >= self.max_failures or all(m.tag in OWN for m in self.messages):
            return None
        if self.size() <= self.idle_min * self.trigger():
            return None
        return await self.compact()

    async def compact(self) -> Compaction | None:
        before = self.size()
        if self.failures >= self.max_failures:
            return fit(self, Compaction(before, before, ok=False,
                                        error=f"auto-compaction off after {self.failures} failures in a row"))
        if all(m.tag in OWN for m in self.messages):
            return fit(self, Compaction(before, before, ok=False, error="nothing new to summarise"))
        budget = self.scaled(self.reserve)
        instruction = self.session.message(id=f"compact-request-{self.rounds + 1}", role="user",
                                           text=self.instruction_text(), tag="instruction")
        try:
            answer = await sectioned.ask(self, self.messages, instruction, budget, SECTIONS, "summary",
                                         pinned=int(self.messages[0].tag == "summary"))
        except sectioned.Failed as exc:
            self.failures += 1
            return fit(self, Compaction(before, before, ok=False, error=str(exc)))
        self.failures = 0
        self.rounds += 1
        summary = sectioned.render(answer.sections, SECTIONS)
        message = sectioned.framed(self.session, id=f"summary-{self.rounds}", tag="summary", frame=FRAME, body=summary)
        summarised = [m.id for m in self.messages if m.id not in set(answer.left_out)]
        attached = self.attachments()
        self.messages = [message, *attached]
        comp = Compaction(before, self.size(), text=summary, problems=answer.problems,
                          fields={"budget": budget, "summary_tokens": message.tokens, "summarised": summarised,
                                  "left_out": answer.left_out, "files": list(self.reads),
                                  "todos": sum(m.tag == "todo" for m in attached), "focus": self.focus,
                                  "instructions": list(self.instructions)})
        return fit(self, comp, pinned=1)

    def instruction_text(self) -> str:
        return PROMPT + "\n\n" + sectioned.block(SECTIONS, self.scaled(self.reserve), focus=self.focus)

    def instruction_files(self) -> list[Message]:
        """CLAUDE.md-like files the session read, re-injected after each compaction as their last read showed
        them (Claude Code re-reads them from disk; a replay has only the record)."""
        return [sectioned.framed(self.session, id=f"instructions-{self.rounds}-{i}", tag="instructions",
                                 frame=f"[Harness: instructions]\nRe-read after compaction: {path}.", body=text,
                                 part="file")
                for i, (path, text) in enumerate(self.instructions.items(), 1)]

    def attachments(self) -> list[Message]:
        """The most recently read files (newest first, within the budgets) and the open todo list.
        The files re-attached are all the strategy remembers as read, as the read cache is refilled."""
        each, total = self.scaled(self.file_tokens), self.scaled(self.files_total)
        tok, out, kept, used = self.session.tok, self.instruction_files(), [], 0
        for path, content in reversed(self.reads.items()):
            if len(kept) >= self.files:
                break
            frame = f"[Harness: file]\nRe-read after compaction: {path}, as its last read showed it."
            body = content if tok.count(content) <= each else \
                tok.truncate(content, each).rstrip() + f"\n[cut to {each} tokens; read {path} again for the rest]"
            msg = sectioned.framed(self.session, id=f"file-{self.rounds}-{len(kept) + 1}", tag="file", frame=frame,
                                   body=body)
            if used + msg.tokens > total:
                continue
            used += msg.tokens
            kept.append((path, content))
            out.append(msg)
        self.reads = OrderedDict(reversed(kept))
        open_items = [t for t in self.todos if str(t.get("status", "")).lower() not in DONE]
        if open_items:
            body = "\n".join(f"- [{t.get('status', 'pending')}] {t.get('content') or t.get('text') or t.get('task')}"
                             for t in open_items)
            out.append(sectioned.framed(self.session, id=f"todo-{self.rounds}", tag="todo",
                                        frame="[Harness: todo]\nThe open todo list, as last written:", body=body))
        return out


def _todo_items(args: object) -> list[dict] | None:
    """The items of a todo-writing call (a list of {content, status} objects), None if it holds none."""
    if not isinstance(args, dict):
        return None
    for value in args.values():
        if isinstance(value, list) and all(isinstance(t, dict) for t in value):
            return [t for t in value if t.get("content") or t.get("text") or t.get("task")]
    return None
