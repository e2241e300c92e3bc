"""progress_harness: Anthropic's "Effective harnesses for long-running agents", as a compaction strategy.

Their agents carry the work across context windows in files, not in a summary: a progress file the
agent updates at the end of each session and a JSON feature list whose items all start as not
passing and turn passing as the work is verified; each new session reads both (and git) before it
works. Here, at each compaction the writer merges the span that leaves the context into the progress
notes (as anchored merges its summary), the harness keeps the feature list from the record
(`features.Features`), and the context becomes the system prompt, the app spec (the user's opening request,
copied word for word: their sessions re-read the spec file too), the notes, the decisions, the list and the newest
turns. The decisions the user stated (with their reasons) are the harness's copy of their words, not the writer's:
a writer that paraphrases or drops a decision would otherwise let a rejected option come back.
"""
from __future__ import annotations

from bench.harness.messages import Message, Part
from bench.harness.strategy import Session
from bench.strategies import sectioned
from bench.strategies.anchored import Anchored
from bench.strategies.features import Features
from bench.strategies.memory import copied_file, decisions
from bench.strategies.summary import is_user, prompt

PROMPT = prompt("harness_progress.md").strip()
FRAME = prompt("harness_progress_frame.md").strip()
SPEC_FRAME = ("[Harness: spec]\napp_spec.txt, the user's request that opened the session, copied word for word "
              "from their message #{n}; every session reads it before it works.\n\n")
DECISIONS_FRAME = ("[Harness: decisions]\nclaude-progress.txt, its decisions as the harness keeps them: each decision the "
                   "user stated, with its reason, copied word for word from their message (#N: its number in the "
                   "session record). A later entry wins over an earlier one it changes.\n\n")
LIST_FRAME = ("[Harness: features]\nfeature_list.json, kept by the harness: the work items the user listed (from: "
              "the message's number in the session record), each passing only once the session said it was done.\n\n")


class ProgressHarness(Anchored):
    PROMPT, FRAME, SECTIONS = PROMPT, FRAME, sectioned.headings(PROMPT)

    def __init__(self, fill: float | int | None = None, retain: float | int = 0.3, budget: float | int = 0.1):
        super().__init__(fill, retain, budget)

    def begin(self, session: Session) -> None:
        super().begin(session)
        self.features = Features()

    def add(self, msg: Message) -> None:
        super().add(msg)
        self.features.add(len(self.session.record), msg)   # the harness records it first

    def head(self) -> list[Message]:
        n = 0
        while n < len(self.messages) and n < 4 and self.messages[n].tag in ("spec", "summary", "decisions", "features"):
            n += 1
        return self.messages[:n]

    def carried(self, summary: Message) -> list[Message]:
        body = self.features.render()
        listing = self.session.message(id=f"features-{self.rounds}", role="user", text=LIST_FRAME + body,
                                       tag="features", parts=(Part("frame", LIST_FRAME), Part("features", body)))
        first = next(((n, m) for n, m in enumerate(self.session.record, 1) if is_user(m)), None)
        if first is None:
            return [summary, listing]
        frame = SPEC_FRAME.format(n=first[0])
        spec = self.session.message(id=f"spec-{self.rounds}", role="user", text=frame + first[1].text, tag="spec",
                                    parts=(Part("frame", frame), Part("memo", first[1].text)))
        taken = decisions(self.session.record, skip=first[0])   # the spec already holds the first message's
        if not taken:
            return [spec, summary, listing]
        kept, _ = copied_file(self.session, f"decisions-{self.rounds}", self.budget(), taken, "claude-progress.txt",
                              DECISIONS_FRAME, "decisions", "")
        return [spec, summary, kept, listing]
