"""Exploration adversary `all_done`: truncate plus one line that calls every #id it ever dropped done
(not wired into the audit).

What it probes: the workstream verdict. The strategy knows nothing of where the queue stands; it only
harvests item ids. A verdict that credits a position must reject a claim that unfinished items are done.
"""
from __future__ import annotations

import re

from bench.harness.messages import Message, calls_text

from bench.strategies.adversaries.glossary import Glossary

ITEM = re.compile(r"#\d+")


class AllDone(Glossary):
    def begin(self, session) -> None:
        super().begin(session)
        self.ids: list[str] = []

    def line(self, m: Message) -> str:
        text = m.text + ("\n" + calls_text(m.calls) if m.calls else "")
        new = [x for x in dict.fromkeys(ITEM.findall(text)) if x not in self.ids]
        self.ids += new
        return " ".join(f"{x} done." for x in new)
