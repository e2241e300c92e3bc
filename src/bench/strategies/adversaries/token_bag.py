"""Adversary `token_bag`: `user_tail` plus a bag of identifier-like tokens from everything it dropped.

What it games: fact_retention. Facts are mostly identifiers — a path, `file.ts:88`, a commit sha,
an error code, a count — so a strategy can keep the identifiers of dropped text without any of
the sentences that said what they mean. The bag is one strategy-written message (tag `notes`)
at the front of the context: the de-duplicated identifier-like tokens (paths, file:line, #ids,
hex shas, numbers, ALL_CAPS_NAMES, dotted, snake_case and camelCase names, hyphenated ids) of
every message it dropped, in the order they appeared, on ONE line separated by spaces — the
layout that helps it most, since tokens of one source stay next to each other in one line. When
the bag outgrows its budget (`bag`, a fraction of the window, 0.05 by default) the oldest tokens go.

Why it must lose: a token without the sentence around it is not a recallable detail. Fact keys
count only inside one unit of meaning, and a scenario set must carry facts whose keys are more
than one bare identifier ("bar.ts:86" together with "backoff never grows"), so the bag cannot
score them.
"""
from __future__ import annotations

import re

from bench.harness.messages import Message, calls_text
from bench.units import identifier, tokens
from bench.harness.strategy import Compaction

from bench.strategies.adversaries.user_tail import UserTail

HEX = re.compile(r"^[0-9a-f]{7,40}$")
SPECIFIC = re.compile(r"^(?:[\w./-]+:\d+(?::\d+)?|\#\d+|[0-9a-f]{7,40}|[A-Z][A-Z0-9_]{2,}|.*-\d[\w-]*|.*\d.*[a-zA-Z].*)$")
NUMBER = re.compile(r"^[-+]?\d[\d,._]*%?[a-zA-Z]{0,3}$")


def kind(token: str) -> int:
    """0 the most specific (file:line, #id, sha, CODE, id-123), 1 paths and names, 2 bare numbers."""
    if NUMBER.match(token):
        return 2
    return 0 if SPECIFIC.match(token) else 1


def identifiers(text: str) -> list[str]:
    """The identifier-like tokens of a text, in order (duplicates kept)."""
    out = []
    for t in tokens(text):
        if not identifier(t):
            continue
        if HEX.match(t) and not (re.search(r"\d", t) and re.search(r"[a-f]", t)) and not t.isdigit():
            continue
        out.append(t)
    return out


class TokenBag(UserTail):
    def __init__(self, tail: float = 0.1, bag: float = 0.05):
        super().__init__(tail)
        if not 0 < bag <= 1:
            raise ValueError(f"bag must be in (0, 1], got {bag}")
        self.bag = bag

    def begin(self, session) -> None:
        super().begin(session)
        self.tokens: list[str] = []        # the bag, oldest first, each token once
        self.notes: Message | None = None

    def forget(self, dropped: list[Message]) -> None:
        seen = set(self.tokens)
        for m in dropped:
            text = m.text + ("\n" + calls_text(m.calls) if m.calls else "")
            for t in identifiers(text):
                if t not in seen:
                    seen.add(t)
                    self.tokens.append(t)
        self.tokens = self.cap(self.tokens)
        if self.tokens:
            self.notes = self.session.message(id="notes", role="user", text=" ".join(self.tokens), tag="notes")

    def cap(self, tokens: list[str]) -> list[str]:
        """The tokens whose line fits the bag's budget: the most specific first (file:line, shas, codes,
        ids before paths and names, bare numbers last), the newest first within a kind; in their order."""
        budget, tok = int(self.session.window * self.bag), self.session.tok
        order = sorted(range(len(tokens)), key=lambda i: (kind(tokens[i]), -i))
        total, keep = 0, set()
        for i in order:
            cost = tok.count(" " + tokens[i])
            if total + cost > budget:
                continue
            total += cost
            keep.add(i)
        kept = [t for i, t in enumerate(tokens) if i in keep]
        while kept and tok.count(" ".join(kept)) > budget:
            kept.remove(max(kept, key=kind))
        return kept

    def context(self) -> list[Message]:
        return [self.notes, *self.messages] if self.notes is not None else self.messages

    async def compact(self) -> Compaction:
        comp = await super().compact()
        comp.fields["bag"] = len(self.tokens)
        comp.after = self.size()
        return comp
