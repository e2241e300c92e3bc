"""Exploration adversary `neither`: truncate plus, for each dropped message, its word trigrams each
opened by 'not' (not wired into the audit).

What it probes: decision_retention against rejected_revived. The strategy does not know which option
won; writing 'not' before every phrase keeps the chosen option's key in a unit (decisions credit the
key in any unit not marked ended) while every rejected option sits right after a negation (which
excuses it from rejected_revived). The context says nothing of which option was chosen.
"""
from __future__ import annotations

from bench.harness.messages import Message, calls_text

from bench.strategies.adversaries.glossary import Glossary


class Neither(Glossary):
    def line(self, m: Message) -> str:
        words = (m.text + ("\n" + calls_text(m.calls) if m.calls else "")).replace(";", ",").replace(".", " ").split()
        return " ".join(f"not {' '.join(words[i:i + 3])};" for i in range(max(0, len(words) - 2)))
