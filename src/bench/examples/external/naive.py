#!/usr/bin/env python3
"""The naive rewrite-summary strategy as an external process: Python standard library only.

It does what strategies/naive.py does, over compaction-bench's external-strategy protocol
(compaction-bench's docs/protocol.md): JSON Lines on stdin/stdout, writer calls to the
OpenAI-compatible endpoint in COMPACTION_BENCH_WRITER_URL. At the trigger the writer gets the
system prompt, the previous summary plus every message since, and a generic "summarise
everything" instruction; its answer replaces the whole history as one user-role message
tagged `summary`. If the request still does not fit, the oldest turns are dropped.

    compaction-bench run suite=smoke strategies=[exec] \
        'strategy.exec.command=[python3,src/bench/examples/external/naive.py]'

Options: --budget (share of the window, or tokens; 0.1), --keep-last N (0), --trigger (share or
tokens; default the bench's limit), --prompt FILE (default: the built-in naive's prompt).
"""
from __future__ import annotations

import json
import os
import sys

VERSION = 1
DROP_TARGET = 0.8
# src/bench/strategies/prompts/naive.md (os.path, not pathlib: truncate.py imports this file, and a start pays
# for every module imported at the top; argparse, urllib and pathlib are imported where they are used)
PROMPT = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))), "strategies",
                      "prompts", "naive.md")


def share(value: float, window: int) -> int:
    """A size as a share of the window (0-1] or in tokens (above 1)."""
    return int(value * window) if value <= 1 else int(value)


class Bench:
    """The protocol's side in this process: lines in, lines out."""

    def __init__(self) -> None:
        self.inp, self.out = sys.stdin, sys.stdout

    def send(self, obj: dict) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()

    def receive(self) -> dict | None:
        line = self.inp.readline()
        return json.loads(line) if line else None

    def count(self, texts: list[str], limit: int | None = None) -> dict:
        """Token counts (and texts cut to `limit`) by the bench's own tokenizer."""
        self.send({"type": "count", "texts": texts, **({"limit": limit} if limit is not None else {})})
        reply = self.receive()
        if not reply or reply.get("type") != "counted":
            raise SystemExit(f"naive.py: expected a 'counted' reply, got {reply!r}")
        return reply


def wire(m: dict) -> dict:
    """A message in OpenAI chat form."""
    out = {"role": m["role"], "content": m["text"]}
    if m.get("calls"):
        out["tool_calls"] = [{"id": c["id"], "type": "function",
                              "function": {"name": c["tool"], "arguments": json.dumps(c["args"], sort_keys=True)}}
                             for c in m["calls"]]
    if m["role"] == "tool":
        out["tool_call_id"] = m.get("call")
        if m.get("tool"):
            out["name"] = m["tool"]
    return out


def chat(messages: list[dict], max_tokens: int) -> str:
    """One writer call through the bench's endpoint; raises RuntimeError with the server's message."""
    import urllib.error     # here, not at the top: it costs a start 40 ms of CPU, and truncate.py imports this file
    import urllib.request

    url = os.environ["COMPACTION_BENCH_WRITER_URL"].rstrip("/") + "/chat/completions"
    body = json.dumps({"model": "writer", "messages": messages, "max_tokens": max_tokens}).encode()
    req = urllib.request.Request(url, body, {"Content-Type": "application/json",
                                             "Authorization": f"Bearer {os.environ.get('OPENAI_API_KEY', '')}"})
    try:
        with urllib.request.urlopen(req, timeout=3600) as resp:
            data = json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        try:
            why = json.loads(exc.read())["error"]["message"]
        except (ValueError, KeyError, TypeError):
            why = f"HTTP {exc.code}"
        raise RuntimeError(why) from None
    return data["choices"][0]["message"].get("content") or ""


def turn_units(messages: list[dict]) -> list[list[dict]]:
    """Each assistant message travels with the tool results answering its calls."""
    units: list[list[dict]] = []
    owner: dict[str, list[dict]] = {}
    for m in messages:
        if m["role"] == "tool" and m.get("call") in owner:
            owner[m["call"]].append(m)
            continue
        unit = [m]
        units.append(unit)
        for c in m.get("calls") or ():
            owner[c["id"]] = unit
    return units


class Naive:
    def __init__(self, bench: Bench, begin: dict, budget: float, keep_last: int, trigger: float | None,
                 prompt: str):
        self.bench, self.keep_last, self.prompt = bench, keep_last, prompt
        self.window, self.limit = begin["window"], begin["limit"]
        self.per_message, self.per_request = begin["per_message"], begin["per_request"]
        self.system = begin["system"]
        self.budget = max(1, share(budget, self.window))
        self.trigger = self.limit if trigger is None else share(trigger, self.window)
        self.messages: list[dict] = []
        self.rounds = 0
        self.sent: list[str] = []          # ids of the context last sent to the bench
        self.announced: set[str] = set()   # ids the bench already knows (recorded, or written and sent)
        self.instruction: dict | None = None

    def size(self, messages: list[dict] | None = None) -> int:
        msgs = self.messages if messages is None else messages
        return (self.system["tokens"] + sum(m["tokens"] for m in msgs)
                + self.per_message * (len(msgs) + 1) + self.per_request)

    def prepare(self, added: list[dict], appended: int) -> dict:
        """`added`: the messages recorded since the last exchange; the bench already appended the first
        `appended` of them to the context (it did not ask, as `wake_above` allowed)."""
        self.messages.extend(added)
        self.sent.extend(m["id"] for m in added[:appended])
        self.announced.update(m["id"] for m in added)
        comp = None
        size = self.size()
        if size > self.trigger or size > self.limit:
            comp = self.compact()
        # no need to ask again while the context only grows and stays within both thresholds
        reply = {"type": "context", **self.delta(), "wake_above": min(self.trigger, self.limit)}
        if comp is not None:
            reply["compaction"] = comp
        return reply

    def delta(self) -> dict:
        """The context as the previous one's first `keep` messages plus the rest (ids, or new messages)."""
        ids = [m["id"] for m in self.messages]
        keep = 0
        while keep < min(len(ids), len(self.sent)) and ids[keep] == self.sent[keep]:
            keep += 1
        rest = []
        for m in self.messages[keep:]:
            if m["id"] in self.announced:
                rest.append(m["id"])
            else:
                rest.append({k: m[k] for k in ("id", "role", "tag", "text")})
                self.announced.add(m["id"])
        self.sent = ids
        return {"keep": keep, "messages": rest}

    def compact(self) -> dict | None:
        before = self.size()
        pinned = int(bool(self.messages) and self.messages[0]["tag"] == "summary")
        if self.instruction is None:
            text = self.prompt.replace("{budget}", str(self.budget))
            self.instruction = {"role": "user", "text": text, "tokens": self.bench.count([text])["tokens"][0]}
        head, tail = self.split()
        if len(head) <= pinned:   # only the previous summary could go: nothing to do unless it overflows
            if before <= self.limit:
                return None
            return self.fit(failed(before, "nothing new to summarise"), pinned)
        try:
            text = chat([wire({"role": "system", "text": self.system["text"]}), *map(wire, head),
                         wire(self.instruction)], self.budget)
        except (RuntimeError, OSError, ValueError, KeyError, IndexError) as exc:
            return self.fit(failed(before, f"model failed: {exc}"), pinned)
        text = text.strip()
        if not text:
            return self.fit(failed(before, "the writer returned no summary"), pinned)
        problems = []
        counted = self.bench.count([text], limit=self.budget)
        tokens = counted["tokens"][0]
        if tokens > self.budget:
            problems.append(f"summary of {tokens} tokens exceeds its budget of {self.budget}: cut to it")
            text = counted["texts"][0]
            tokens = self.bench.count([text])["tokens"][0]
        self.rounds += 1
        summary = {"id": f"summary-{self.rounds}", "role": "user", "tag": "summary", "text": text, "tokens": tokens}
        self.messages = [summary, *tail]
        comp = {"before": before, "after": self.size(), "text": text, "problems": problems,
                "fields": {"budget": self.budget, "summary_tokens": summary["tokens"],
                           "summarised": [m["id"] for m in head], "verbatim": [m["id"] for m in tail]}}
        return self.fit(comp, pinned=1)

    def split(self) -> tuple[list[dict], list[dict]]:
        """(to summarise, kept verbatim): the last `keep_last` messages in whole turns stay, and more
        stay while the writer request plus the summary would overflow the window."""
        units = turn_units(self.messages)
        n, kept = len(units), 0
        while n > 0 and kept + len(units[n - 1]) <= self.keep_last:
            kept += len(units[n - 1])
            n -= 1
        head = [m for u in units[:n] for m in u]
        while n > 1 and self.size([*head, self.instruction]) + self.budget > self.window:
            n -= 1
            head = head[:len(head) - len(units[n])]
        return head, [m for u in units[n:] for m in u]

    def fit(self, comp: dict, pinned: int = 0) -> dict:
        """Still over the limit: drop the oldest turns (never the first `pinned` messages)."""
        size = self.size()
        if size <= self.limit:
            return comp
        head, rest = self.messages[:pinned], self.messages[pinned:]
        units = turn_units(rest)
        i, total, goal = 0, size, int(DROP_TARGET * self.limit)
        while i < len(units) - 1 and total > goal:
            total -= sum(m["tokens"] + self.per_message for m in units[i])
            i += 1
        dropped = [m for u in units[:i] for m in u]
        gone = {id(m) for m in dropped}
        self.messages = head + [m for m in rest if id(m) not in gone]
        comp["after"] = self.size()
        comp["fallback"] = "drop_oldest"
        fields = comp.setdefault("fields", {})
        fields["dropped"] = fields.get("dropped", []) + [m["id"] for m in dropped]
        if comp["after"] > self.limit:
            comp.setdefault("problems", []).append(
                f"still {comp['after']} tokens after dropping: the newest turn alone exceeds the limit of {self.limit}")
        return comp


def failed(before: int, error: str) -> dict:
    return {"ok": False, "before": before, "after": before, "error": error}


def main(argv: list[str] | None = None) -> int:
    import argparse
    from pathlib import Path

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=float, default=0.1)
    p.add_argument("--keep-last", type=int, default=0)
    p.add_argument("--trigger", type=float, default=None)
    p.add_argument("--prompt", type=Path, default=PROMPT)
    a = p.parse_args(argv)
    prompt = a.prompt.read_text(encoding="utf-8")
    bench = Bench()
    begin = bench.receive()
    if not begin or begin.get("type") != "begin" or begin.get("version") != VERSION:
        bench.send({"type": "error", "message": f"naive.py speaks protocol version {VERSION}; got {begin!r:.200}"})
        return 1
    bench.send({"type": "hello", "version": VERSION, "name": "naive.py"})
    strategy = Naive(bench, begin, a.budget, a.keep_last, a.trigger, prompt)
    while (msg := bench.receive()) is not None:
        if msg["type"] == "prepare":
            bench.send(strategy.prepare(msg["add"], msg.get("appended", 0)))
        elif msg["type"] == "end":
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
