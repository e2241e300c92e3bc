"""progress_harness's feature list: the work items the user listed, each starting as not passing.

Anthropic's harness has an initializer agent write the list from the spec; a replay has no such turn,
so the items are read from the user's own messages: the entries of a list they gave (after a colon,
separated by commas or semicolons, at least three) and their bullet lines. An item turns passing when a
later agent or tool message says it is finished (`units.DONE`, not preceded by a plan or a denial,
`units.NOT_YET`) in the same sentence. JSON because, as the harness's authors note, a model rewrites a
Markdown list far more readily than a JSON one.
"""
from __future__ import annotations

import json
import re

from bench.harness.messages import Message
from bench.text import normalize
from bench.units import DONE, NOT_YET, SENTENCE

from bench.strategies.summary import is_user

LIST = re.compile(r":\s*([^:]+)$")
STOP = re.compile(r"(?<=[.!?])\s+(?=\S)")       # sentences, but a list may run on with semicolons
BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+(.+)$")
SEPARATORS = re.compile(r"\s*[;,]\s*(?:and\s+|then\s+)?|\s+and\s+(?=[^,;]+$)")


def listed(text: str) -> list[str]:
    """The items of the lists a user message gives."""
    out: list[str] = []
    for line in text.splitlines():
        b = BULLET.match(line)
        if b:
            out.append(b.group(1).strip().rstrip("."))
            continue
        for sentence in STOP.split(line):
            m = LIST.search(sentence.strip().rstrip("."))
            if not m:
                continue
            items = [i.strip().rstrip(".") for i in SEPARATORS.split(m.group(1)) if i.strip()]
            if len(items) >= 3 and all(len(i.split()) <= 8 for i in items):
                out.extend(items)
    return out


class Features:
    """The list as the harness keeps it: {"feature", "from", "passes"} items, in the order given."""

    def __init__(self) -> None:
        self.items: list[dict] = []
        self.seen: set[str] = set()

    def add(self, n: int, m: Message) -> None:
        if is_user(m):
            for item in listed(m.text):
                if normalize(item) not in self.seen:
                    self.seen.add(normalize(item))
                    self.items.append({"feature": item, "from": f"#{n}", "passes": False})
        elif m.role in ("assistant", "tool"):
            for sentence in SENTENCE.split(m.text):
                done = DONE.search(sentence.lower())
                if not done or NOT_YET.search(sentence.lower()[:done.start()]):
                    continue
                low = normalize(sentence)
                for item in self.items:
                    if not item["passes"] and _said(normalize(item["feature"]), low):
                        item["passes"] = True

    def render(self) -> str:
        return json.dumps(self.items, indent=1, ensure_ascii=False)


def _said(item: str, sentence: str) -> bool:
    return re.search(rf"(?<![\w/.:-]){re.escape(item)}(?![\w/.:-])", sentence) is not None
