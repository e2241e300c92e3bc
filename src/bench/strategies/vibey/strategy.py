"""The Vibey checkpoint strategy (seed 000, DESIGN §4 "vibey").

At the trigger the writer gets the same conversation plus a harness
instruction, edits the mind and ticks the memo in a workspace, and answers
with the scene. A valid checkpoint replaces what it moved out with one
recollection message; an invalid one (after one repair) or a writer error
changes nothing. When a request no longer fits and no checkpoint can be made,
the oldest half moves out without a model call (the "mechanical" step), which
is all that is used after repeated failures.
"""
from __future__ import annotations

import json

from bench.errors import ModelError
from bench.harness.answers import carries
from bench.harness.messages import Message, Part, make, retext
from bench.harness.strategy import Compaction, Session, Strategy, drop_oldest, trigger_limit

from bench.strategies.vibey import memo, mind, scene, split, turn
from bench.strategies.vibey.budgets import Budgets, budgets
from bench.strategies.vibey.carry import FileLog, choose, loaded
from bench.strategies.vibey.offline import play as offline_play
from bench.strategies.vibey.recall import State, recollection
from bench.strategies.vibey.texts import block, fill, tools


class Vibey(Strategy):
    calls_writer = True
    offline_players = (offline_play,)

    def __init__(self, fraction: float = 0.9, full_window: int = 192_000, mind_caps: dict[str, int] | None = None,
                 memo_each: int = 300, memo_total: int = 3000, recent: int = 20_000, skill_each: int = 5000,
                 skills_total: int = 25_000, skills_share: float = 0.1, skills_max: int = 20,
                 files_modified: int = 10, files_read: int = 5, scene_min: int = 30, scene_max: int = 2000,
                 floor: int = 32, rounds: int = 5, repairs: int = 1, older_tries: int = 2, max_failures: int = 2,
                 enough: float = 0.9, turn_window: int | None = None):
        if not 0 < fraction <= 1 or not 0 < enough <= 1:
            raise ValueError(f"fraction and enough must be in (0, 1], got {fraction} and {enough}")
        if min(rounds, full_window, memo_each, memo_total, scene_min) < 1 or min(repairs, older_tries) < 0:
            raise ValueError("rounds, full_window, memo_each, memo_total, scene_min must be positive")
        self.fraction, self.enough, self.turn_window = fraction, enough, turn_window
        self.rounds, self.repairs, self.older_tries, self.max_failures = rounds, repairs, older_tries, max_failures
        self.sizes = dict(full_window=full_window, caps=mind_caps, memo_each=memo_each, memo_total=memo_total,
                          recent=recent, skill_each=skill_each, skills_total=skills_total, skills_share=skills_share,
                          skills_max=skills_max, files_modified=files_modified, files_read=files_read,
                          scene_min=scene_min, scene_max=scene_max, floor=floor)

    def begin(self, session: Session) -> None:
        super().begin(session)
        self.state = State()
        self.head: Message | None = None       # the recollection, first in the context once there is one
        self.files = FileLog()
        self.number: dict[str, int] = {}       # message id -> 1-based position in the record
        self.failures = 0
        self.mechanical_only = False
        self.b: Budgets = budgets(session.window, self.trigger(), **self.sizes)
        self.hard = session.window - session.reserve_output   # a request above this no longer fits

    def add(self, msg: Message) -> None:
        super().add(msg)
        rec = self.session.record
        self.number[msg.id] = len(rec) if rec and rec[-1] is msg else len(rec) + 1
        for c in msg.calls:
            self.files.note(c)

    def trigger(self) -> int:
        s = self.session
        return min(s.limit, trigger_limit(s.window, s.reserve_output, s.margin, self.fraction))

    async def compact(self) -> Compaction:
        before = self.size()
        if self.mechanical_only:
            why = "mechanical only: earlier checkpoints failed or freed too little"
            mech = self.mechanical(before, why)
            mech.ok, mech.error = False, why      # no checkpoint was made: a failed compaction, its fallback ran
            return mech
        try:
            comp = await self.checkpoint(before)
        except ModelError as exc:
            comp = Compaction(before=before, after=before, ok=False, error=f"writer failed: {exc}")
        except turn.NoRoom as exc:
            comp = Compaction(before=before, after=before, ok=False, error=f"checkpoint turn out of room: {exc}")
        too_little = comp.ok and comp.after > self.enough * self.trigger()
        if too_little:
            comp.problems.append(f"too little space freed: {comp.after} tokens after the checkpoint, the goal is "
                                 f"{int(self.enough * self.trigger())}")
        self.failures += (not comp.ok) or too_little
        if self.failures >= self.max_failures:
            self.mechanical_only = True
        if comp.ok:
            return comp
        if before <= self.hard:
            comp.fallback = "unchanged: the request still fits; a later request retries"
            return comp
        mech = self.mechanical(before, comp.error or "checkpoint failed")
        mech.problems[:0] = comp.problems
        mech.ok = False                           # the checkpoint failed; the mechanical step is its fallback
        mech.repairs, mech.error = comp.repairs, comp.error or "checkpoint failed"
        mech.fields["failed_checkpoint"] = {k: comp.fields.get(k) for k in ("mind", "memo", "scene", "part")}
        return mech

    # -- the checkpoint turn -------------------------------------------------------------------

    def body(self) -> list[Message]:
        return self.messages[1:] if self.head is not None and self.messages[:1] == [self.head] else self.messages

    def plans(self) -> list[split.Split]:
        body = self.body()
        out = [split.recent(body, self.b.recent)]
        for i in range(self.older_tries):
            part = split.older(body, 0.5 / 2 ** i)
            if part is not None and part.moved:
                out.append(part)
        return [p for p in out if p.moved]

    def instruction(self, n: int) -> Message:
        caps = self.b.caps
        text = fill("instruction.md", user=self.session.user, rounds=self.rounds, cap_here=caps["I am here"],
                    cap_goals=caps["Goals"], cap_decisions=caps["Key decisions"], cap_lessons=caps["Lessons"],
                    memo_total=self.b.memo_total, memo_each=self.b.memo_each, scene_min=self.b.scene_min,
                    scene_max=self.b.scene_max)
        return self.session.message(id=f"ckpt{n}-instruction", role="user", text=text, tag="harness")

    def turn_size(self, conversation: list[Message], instruction: Message, sheet: memo.Checklist) -> int:
        tok = self.session.tok
        files = tok.count(self.state.mind) + tok.count(sheet.text)
        return (self.size([*conversation, instruction]) + tok.count(json.dumps(list(tools()), sort_keys=True))
                + 2 * files + self.b.scene_max + 256)

    async def checkpoint(self, before: int) -> Compaction:
        n = self.state.n + 1
        instruction = self.instruction(n)
        window = self.turn_window or self.session.window
        record = {i: m for i, m in enumerate(self.session.record, 1)}
        head = [self.head] if self.head is not None and self.messages[:1] == [self.head] else []
        plans = self.plans()
        if not plans:
            return Compaction(before=before, after=before, ok=False,
                              error="nothing to checkpoint: the newest turn is all the conversation holds")
        for plan in plans:
            # Candidates are the user's messages leaving the context now. A message leaves it once, so one
            # listed and left unticked by an earlier checkpoint is out of the context and never listed again.
            new = [self.number[m.id] for m in plan.moved if m.tag == "user"]
            sheet = memo.checklist(sorted(self.state.memo), new, record)
            part = {id(m) for m in (*head, *plan.moved, *plan.current)}
            conversation = [m for m in self.messages if plan.label == "all" or id(m) in part]
            # every request of the turn asks for max_tokens = the output reserve: it must fit beside them
            if self.turn_size(conversation, instruction, sheet) + self.session.reserve_output <= window:
                break
        else:
            return Compaction(before=before, after=before, ok=False,
                              error="the conversation is too big for a checkpoint turn, even its older part")
        ws = turn.Workspace(mind=self.state.mind, memo=sheet.text, record=record)
        entries: dict[int, str] = {}

        def check(ws: turn.Workspace, answer: str) -> tuple[str | None, list[str]]:
            tok = self.session.tok
            text, problems = scene.extract(answer, self.b.scene_min, tok)
            if text is not None and not carries(text, [m.text for m in conversation],
                                                [self.session.system.text, instruction.text]):
                problems.append("scene: the checkpoint block carries nothing of the conversation (a chat reply, "
                                "an echo of the instruction, or invented text)")
            problems += mind.validate(ws.mind, self.state.mind, self.b.caps, tok)
            ticked, bad = memo.ticks(ws.memo, sheet)
            entries.clear()
            entries.update({k: memo.entry(record[k], k, self.b.memo_each, tok) for k in ticked})
            chosen = {k: record[k] for k in ticked}
            return text, problems + bad + memo.over_budget(chosen, self.b.memo_each, self.b.memo_total, tok)

        out = await turn.run(self.session, conversation, instruction, ws, check, rounds=self.rounds,
                             repairs=self.repairs, n=n, window=window)
        fields = {"kind": "checkpoint", "part": plan.label, "mind": ws.mind, "scene": out.scene or out.answer,
                  "memo": "\n\n".join(entries[k] for k in sorted(entries)), "candidates": list(sheet.new),
                  "kept": sorted(entries), "moved": [m.id for m in plan.moved], "rounds": out.rounds,
                  "tools": ws.log}
        if out.problems:
            return Compaction(before=before, after=before, ok=False, problems=out.found, repairs=out.repairs,
                              error="checkpoint still invalid after the repair: " + "; ".join(out.problems),
                              fields=fields)
        skills = choose([*self.state.skills, *loaded(plan.moved, self.number)], self.b, self.session.tok)
        self.state = State(n=n, mind=ws.mind, memo=dict(entries), scene=out.scene or "", skills=skills)
        self.rebuild(plan.current, plan.tail)
        problems = self.fit()
        return Compaction(before=before, after=self.size(), text=self.head.text, problems=out.found + problems,
                          repairs=out.repairs, fields=fields)

    # -- the context after a checkpoint --------------------------------------------------------

    def rebuild(self, current: list[Message], tail: list[Message]) -> None:
        """The recollection, then the user's current request if it was older than the tail, then the tail.
        Wherever the user's latest messages sit, the recollection says they are the current request."""
        current = self.cut_request(current)
        latest = split.latest_request([*current, *tail])
        since = self.number[latest[0].id] if latest else None
        self.head = recollection(self.session, self.state, self.files.text(self.b), since)
        self.messages = [self.head, *current, *tail]

    def cut_request(self, current: list[Message]) -> list[Message]:
        """The current request stays; above half the recent budget its biggest messages are cut, each with a
        note naming the record message that holds the full text."""
        tok, budget, out = self.session.tok, self.b.recent // 2, list(current)
        done: set[str] = set()
        while split.cost(out) > budget:
            big = max((m for m in out if m.tag == "user" and m.id not in done and m.tokens > 64),
                      key=lambda m: m.tokens, default=None)
            if big is None:
                break
            note = "\n" + block("recollection.md", "request_cut", tokens=big.tokens, number=self.number[big.id],
                                user=self.session.user)
            keep = max(32, big.tokens - (split.cost(out) - budget) - tok.count(note))
            kept = tok.truncate(big.text, keep).rstrip()
            cut = make(tok, id=big.id, role=big.role, text=kept + note, tag=big.tag, t=big.t, source=big.source,
                       parts=(Part(big.tag, kept), Part("frame", note)))
            out = [cut if m is big else m for m in out]
            done.add(big.id)
        return out

    def mechanical(self, before: int, reason: str) -> Compaction:
        """Move the oldest half out without a model call, keeping the last checkpoint; the user's latest run
        of messages (the current request) stays in the context, as after a checkpoint."""
        body = self.body()
        latest = {id(m) for m in split.latest_request(body)}   # the current request stays (cut if too big)
        total = split.cost(body)
        rest, moved = drop_oldest(body, total, total // 2)
        current = [m for m in moved if id(m) in latest]
        moved = [m for m in moved if id(m) not in latest]
        self.state.n += 1
        self._absorb(moved)
        self.rebuild(current, rest)
        if self.size() > self.hard:              # still too big: move more, the newest turn always stays
            rest, more = drop_oldest(rest, self.size(), self.hard)
            current = [m for m in self.messages[1:] if id(m) not in {id(x) for x in rest}]
            current += [m for m in more if id(m) in latest]
            more = [m for m in more if id(m) not in latest]
            self._absorb(more)
            self.rebuild(current, rest)
            moved += more
        problems = self.shed() + self.fit()
        return Compaction(before=before, after=self.size(), text=self.head.text if self.head else None,
                          problems=problems, fallback=f"mechanical: {reason}",
                          fields={"kind": "mechanical", "mind": self.state.mind, "scene": self.state.scene,
                                  "memo": "\n\n".join(self.state.memo[k] for k in sorted(self.state.memo)),
                                  "moved": [m.id for m in moved]})

    def _absorb(self, moved: list[Message]) -> None:
        """Every moved-out user message goes into the memo; moved-out skills are carried."""
        tok = self.session.tok
        memo_ = dict(self.state.memo)
        for m in moved:
            if m.tag == "user":
                k = self.number[m.id]
                memo_[k] = memo.entry(m, k, self.b.memo_each, tok)
        skills = choose([*self.state.skills, *loaded(moved, self.number)], self.b, tok)
        self.state = State(n=self.state.n, mind=self.state.mind, memo=memo_, scene=self.state.scene,
                           skills=skills)

    def shed(self) -> list[str]:
        """When even the newest turn and the recollection do not fit: drop carried parts, user words last."""
        dropped = []
        for part in ("skills", "scene", "mind", "memo"):
            if self.size() <= self.hard:
                break
            if part == "skills":
                self.state.skills = []
            elif part == "scene":
                self.state.scene = ""
            elif part == "mind":
                self.state.mind = mind.template()
            else:
                while self.state.memo and self.size() > self.hard:
                    self.state.memo.pop(min(self.state.memo))
                    self.rebuild([], self.body())
            dropped.append(part)
            self.rebuild([], self.body())
        return [f"dropped from the recollection to fit: {', '.join(dropped)}"] if dropped else []

    def fit(self) -> list[str]:
        """A lone tool output that cannot fit is cut, with a note saying so."""
        problems: list[str] = []
        tok = self.session.tok
        cut_ids: set[str] = set()
        while self.size() > self.hard:
            tools_ = [m for m in self.body() if m.role == "tool" and m.tokens > 64 and m.id not in cut_ids]
            if not tools_:
                problems.append(f"the request still needs {self.size()} tokens, {self.hard} fit; nothing left to cut")
                break
            big = max(tools_, key=lambda m: m.tokens)
            keep = max(16, big.tokens - (self.size() - self.hard) - 64)
            note = block("recollection.md", "tool_cut", tokens=big.tokens, kept=keep)
            cut = retext(tok, big, tok.truncate(big.text, keep).rstrip() + "\n" + note)
            self.messages = [cut if m is big else m for m in self.messages]
            cut_ids.add(big.id)
            problems.append(f"tool output {big.id} cut from {big.tokens} to {cut.tokens} tokens to fit")
        return problems
