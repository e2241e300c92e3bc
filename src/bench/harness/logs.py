"""Request and compaction logs, written as deltas so they grow linearly.

requests.jsonl — one line per request (kind ``agent``, ``compaction`` or
``probe``). Its ``seq`` rebuilds the request's message list from the previous
request of the same cell: ``[a, b]`` keeps messages a..b-1 of the previous
request, an object adds a message. Added messages carry id, role, tag, tokens
(``n``) and hash (``h``); their ``text`` is written only when it is not the
harness's own rendering of a scenario event (which the reader re-renders),
so the log never copies the scenario.

compactions.jsonl — one line per compaction with the text the strategy produced.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, TextIO

from bench.errors import BadInput
from bench.harness.messages import EVENT_TAGS, Message, common_prefix, render_all, system_message
from bench.harness.record import from_json, to_json
from bench.scenarios.model import Scenario
from bench.tokens import Tokenizer

# A cell is named by these, joined with "/", in every log line's `cell`; every result row is keyed by them.
KEY_COLUMNS = ["scenario", "strategy", "writer", "window", "seed"]
# A run's per-cell logs, each line naming its cell: what a cell appends, a resume prunes and merge joins.
# verdicts.jsonl is the scorer's trail (bench.scoring.trail), written here for the readers that show it.
VERDICTS = "verdicts.jsonl"
CELL_LOGS = ("requests.jsonl", "compactions.jsonl", VERDICTS)


def is_verbatim(m: Message, verbatim: dict[str, str]) -> bool:
    """The harness's own rendering of an event (or the system prompt), untouched by the strategy."""
    return verbatim.get(m.id) == m.hash and m.tag in EVENT_TAGS and not m.parts


# An added message's keys (bench.harness.record), in the log's order: what identifies it, and what the
# reader needs to make it again unless it is the harness's own rendering of an event.
HEAD = ("id", "role", "tag", "tokens", "hash")
BODY = HEAD + ("text", "t", "call", "tool", "source", "skill", "calls", "parts")
SHORT = (("tokens", "n"), ("hash", "h"))


def _msg_record(m: Message, verbatim: dict[str, str]) -> dict[str, Any]:
    return to_json(m, HEAD if is_verbatim(m, verbatim) else BODY, SHORT)


def identity(m: Message) -> tuple:
    """What makes two messages the same in the log: content and what the scorers read (id, tag, parts)."""
    return (m.hash, m.id, m.tag, tuple((p.tag, len(p.text)) for p in m.parts) if m.parts else ())


def delta(prev: list[Message], new: list[Message], prev_keys: list[tuple | None] | None = None
          ) -> tuple[list[Any], list[tuple | None] | None]:
    """Runs of the previous request's messages that survive, interleaved with new messages, and the new
    request's identities as far as they were built (pass them back as `prev_keys` with the next request;
    None where a message was not looked at).

    The head both requests share — the same message objects — is found by list compares in C
    (`common_prefix`), so a request that appends, or rebuilds only its tail, costs what changed; the
    rest is matched by identity, each message's built once. A previous position is used left to
    right, the first free one with the same identity."""
    k = common_prefix(prev, new)
    seq: list[Any] = [[0, k]] if k else []
    if k == len(prev):
        return seq + list(new[k:]), None
    known = prev_keys[k:] if prev_keys is not None else [None] * (len(prev) - k)
    pos: dict[tuple, list[int]] = {}
    for i, key, m in zip(range(k, len(prev)), known, prev[k:]):
        pos.setdefault(key if key is not None else identity(m), []).append(i)
    tail = [identity(m) for m in new[k:]]
    nxt = dict.fromkeys(pos, 0)        # per identity: how many of its positions are behind the cursor
    cursor = k
    for m, key in zip(new[k:], tail):
        where = pos.get(key)
        if where is not None:
            j = nxt[key]
            while j < len(where) and where[j] < cursor:
                j += 1
            nxt[key] = j
            if j < len(where):
                i = where[j]
                if seq and isinstance(seq[-1], list) and seq[-1][1] == i:
                    seq[-1][1] = i + 1
                else:
                    seq.append([i, i + 1])
                cursor = i + 1
                continue
        seq.append(m)
    head = prev_keys[:k] if prev_keys is not None else [None] * k
    return seq, head + tail


class RequestLog:
    """Writes one cell's requests as deltas to an open text file."""

    def __init__(self, fh: TextIO, cell: str, verbatim: dict[str, str]):
        self.fh, self.cell, self.verbatim = fh, cell, verbatim
        self.prev: list[Message] = []
        self.keys: list[tuple | None] | None = None   # the identities of `prev` the last delta built
        self.count = 0

    def follow(self, index: int, messages: list[Message]) -> None:
        """Continue a cell's log after its request `index` (which held `messages`), e.g. to append probes."""
        self.count, self.prev, self.keys = index + 1, list(messages), None

    def write(self, messages: list[Message], *, kind: str, tokens: int, **extra: Any) -> int:
        seq, keys = delta(self.prev, messages, self.keys)
        kept = sum(s[1] - s[0] for s in seq if isinstance(s, list))
        rec = {"cell": self.cell, "i": self.count, "kind": kind, "tokens": tokens, "n": len(messages),
               "added": len(messages) - kept, "dropped": len(self.prev) - kept, **extra,
               "seq": [s if isinstance(s, list) else _msg_record(s, self.verbatim) for s in seq]}
        self.fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
        self.prev, self.keys = list(messages), keys
        self.count += 1
        return self.count - 1


@dataclass
class LoggedRequest:
    """A request rebuilt from the log: its header fields and its messages."""
    i: int
    kind: str
    tokens: int
    record: dict[str, Any]
    messages: list[Message] = field(default_factory=list)


def read_jsonl(path: Path, cell: str | None = None) -> Iterator[dict[str, Any]]:
    """The records of a log (of one cell, if given). A last line cut short by an interrupted write (no
    newline, not JSON) is skipped; any other line that is not a JSON object is BadInput naming its line,
    raised once the good records have been read."""
    if not path.exists():
        return
    problems: list[str] = []
    with path.open("rb") as fh:
        for n, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                rec = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as exc:
                if not raw.endswith(b"\n"):
                    break                                   # a half-written last line
                problems.append(f"{path} line {n}: not JSON: {exc}")
                continue
            if not isinstance(rec, dict):
                problems.append(f"{path} line {n}: expected a JSON object, got {type(rec).__name__}")
            elif cell is None or rec.get("cell") == cell:
                yield rec
    if problems:
        raise BadInput(problems[:20] + ([f"{path}: ... and {len(problems) - 20} more"] if len(problems) > 20 else []))


_KNOWN: dict[tuple, tuple[Scenario, Tokenizer, dict[tuple[str, str], Message]]] = {}


def _known(scenario: Scenario, tok: Tokenizer, markers: bool) -> dict[tuple[str, str], Message]:
    """The harness's renderings of the scenario (and its system prompt) by (id, hash): rendered once per
    scenario, tokenizer and marker setting in this process, so the cells of a scenario share them."""
    key = (id(scenario), id(tok), markers)
    hit = _KNOWN.get(key)
    if hit is None or hit[0] is not scenario or hit[1] is not tok:
        if len(_KNOWN) > 8:
            _KNOWN.clear()
        hit = _KNOWN[key] = (scenario, tok, {(m.id, m.hash): m for m in (system_message(tok, scenario),
                                                                         *render_all(tok, scenario, markers))})
    return hit[2]


def replay_requests(records: Iterator[dict[str, Any]], scenario: Scenario, tok: Tokenizer,
                    markers: bool = True) -> Iterator[LoggedRequest]:
    """Rebuild each request's messages from its delta (one cell's records, in order)."""
    known = _known(scenario, tok, markers)
    prev: list[Message] = []
    for rec in records:
        seq = rec["seq"]
        if len(seq) >= 1 and isinstance(seq[0], list) and seq[0] == [0, len(prev)]:
            cur = list(prev)
            rest = seq[1:]
        else:
            cur, rest = [], seq
        for s in rest:
            if isinstance(s, list):
                cur.extend(prev[s[0]:s[1]])
            else:
                cur.append(_message(s, known, tok))
        prev = cur
        yield LoggedRequest(rec["i"], rec["kind"], rec["tokens"], rec, cur)


def _message(rec: dict[str, Any], known: dict[tuple[str, str], Message], tok: Tokenizer) -> Message:
    if "text" not in rec:
        return known[(rec["id"], rec["h"])]
    return from_json(tok, rec)
