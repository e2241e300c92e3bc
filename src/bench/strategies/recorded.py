"""The source harness's own compactions, replayed: `recorded` (DESIGN §4).

An imported session whose harness compacted (Claude Code's `compact_boundary`, a Codex `compacted` item, an
OpenHands condensation, an ATIF context-management step) carries each compaction in the scenario's
`compactions`: after which event it happened and what the harness put in the context in its place. This
strategy installs exactly that at exactly that point, and never compacts anywhere else, so the harness's
real compaction is scored like any other strategy on the same session. It reads the record (what the
harness did, `Session.recorded`), never the truth; a scenario without compactions is refused by the run.
"""
from __future__ import annotations

from bench.harness.messages import Message
from bench.harness.strategy import Compaction, Session, Strategy
from bench.scenarios.model import RecordedCompaction

TAGS = {"summary": "summary", "retained": "retained", "file": "file", "harness": "harness"}


class Recorded(Strategy):
    needs_recorded = True

    def begin(self, session: Session) -> None:
        super().begin(session)
        self.after = {rc.after: rc for rc in session.recorded}
        self.due: list[tuple[RecordedCompaction, int]] = []   # compactions whose `after` event has arrived
        self.made = 0

    def add(self, msg: Message) -> None:
        super().add(msg)
        if msg.id in self.after:
            self.due.append((self.after.pop(msg.id), len(self.messages)))

    def should_compact(self) -> bool:
        return bool(self.due)

    async def compact(self) -> Compaction:
        """The latest due compaction wins (two with no request between: the second replaced the first's
        context too); what arrived after its event stays, in order."""
        before = self.size()
        rc, mark = self.due[-1]
        self.due = []
        by_id = {m.id: m for m in self.session.record}
        installed = [by_id[x.event] if x.event else self._message(x.role, x.kind, x.text)
                     for x in rc.installed]
        self.messages = installed + self.messages[mark:]
        summary = "\n\n".join(x.text for x in rc.installed if x.kind == "summary") or None
        return Compaction(before=before, after=self.size(), text=summary,
                          fields={"recorded_after": rc.after, "trigger": rc.trigger, "pre_tokens": rc.pre_tokens,
                                  "installed": [x.event or x.kind for x in rc.installed]})

    def _message(self, role: str, kind: str, text: str) -> Message:
        self.made += 1
        return self.session.message(id=f"recorded-{self.made}", role=role, text=text, tag=TAGS[kind])
