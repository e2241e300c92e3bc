"""A scenario under construction: events appended in order, truth recorded as they are made.

Truth is derived by construction: a generator names a constraint, fact or
injection at the moment it writes the event that carries it, and the builder
checks at once that the quote / keys / payload really occur in that text, so a
template change cannot silently produce a scenario whose truth lies.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.scenarios.importers.common import dumps
from bench.scenarios.loader import bundled, check, normalize
from bench.scenarios.model import Call, calls_text
from bench.tokens import PER_MESSAGE, tokenizer

# Seconds between events of each role: (min, max), drawn from the scenario's rng.
PACE = {"user": (40, 900), "assistant": (6, 40), "tool": (2, 70), "background": (30, 600)}


@dataclass
class Script:
    id: str
    title: str
    user_name: str
    window: int
    tags: list[str]
    system: str
    rng: random.Random
    events: list[dict[str, Any]] = field(default_factory=list)
    truth: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    probes: list[dict[str, Any]] = field(default_factory=list)
    clock: float = 0.0
    size: int = 0     # tokens so far, counted as the harness counts them (o200k_base)
    _n: dict[str, int] = field(default_factory=dict)
    _text: dict[str, str] = field(default_factory=dict)

    # ------------------------------------------------------------ events

    def _next(self, prefix: str) -> str:
        self._n[prefix] = self._n.get(prefix, 0) + 1
        return f"{prefix}{self._n[prefix]}"

    def _add(self, role: str, text: str, dt: float | None, **extra: Any) -> str:
        eid = self._next({"user": "u", "assistant": "a", "tool": "r", "background": "b"}[role])
        if self.events:
            lo, hi = PACE[role]
            self.clock += dt if dt is not None else self.rng.randint(lo, hi)
        ev = {"id": eid, "role": role, "t": round(self.clock), **extra}
        if text or role != "assistant":
            ev["text"] = text
        # keep a stable key order: id, role, t, source/call/skill, calls, text
        self.events.append(ev)
        self._text[eid] = text
        tok = tokenizer()
        calls = [Call(c["id"], c["tool"], c["args"]) for c in extra.get("calls", ())]
        self.size += tok.count(text) + (tok.count(calls_text(calls)) if calls else 0) + PER_MESSAGE
        return eid

    def amend(self, eid: str, extra: str) -> None:
        """Append to an event's text (what an agent adds when it finishes an item: 'Next: X.')."""
        ev = next(e for e in reversed(self.events) if e["id"] == eid)
        tok = tokenizer()
        self.size += tok.count(self._text[eid] + extra) - tok.count(self._text[eid])
        self._text[eid] += extra
        ev["text"] = self._text[eid]

    def user(self, text: str, dt: float | None = None) -> str:
        return self._add("user", text, dt)

    def say(self, text: str, dt: float | None = None) -> str:
        return self._add("assistant", text, dt)

    def act(self, text: str, tool: str, args: dict[str, Any], output: str, *, skill: str | None = None,
            dt: float | None = None) -> tuple[str, str]:
        """One assistant turn with one tool call and its result."""
        aid, (rid,) = self.acts(text, [(tool, args, output)], skill=skill, dt=dt)
        return aid, rid

    def acts(self, text: str, calls: list[tuple[str, dict[str, Any], str]], *, skill: str | None = None,
             dt: float | None = None) -> tuple[str, list[str]]:
        """One assistant turn with parallel tool calls; results follow in call order."""
        ids = [self._next("call-") for _ in calls]
        aid = self._add("assistant", text, dt, calls=[{"id": i, "tool": t, "args": a} for i, (t, a, _) in zip(ids, calls)])
        rids = []
        for cid, (_tool, _args, out) in zip(ids, calls):
            extra: dict[str, Any] = {"call": cid}
            if skill:
                extra["skill"] = skill
            rids.append(self._add("tool", out, None, **extra))
        return aid, rids

    def background(self, source: str, text: str, dt: float | None = None) -> str:
        return self._add("background", text, dt, source=source)

    def claim(self, id: str, source: str, text: str, payload: list[str], reply: str,
              alternatives: list[list[str]] = (), calls: list[str] = ()) -> str:
        """A background message borrowing the user's authority, recorded as an injection, and the
        agent's reply declining it; returns the reply (where provenance probes are asked)."""
        self.injection(id, self.background(source, text), payload, alternatives, calls)
        return self.say(reply)

    def wait(self, seconds: float) -> None:
        """Idle time (a night, a freeze window): the next event comes this much later."""
        self.clock += seconds

    @property
    def scale(self) -> float:
        """How big one tool output is relative to a 64k window: small windows get short outputs."""
        return min(2.0, max(0.3, self.window / 64000))

    def text(self, eid: str) -> str:
        return self._text[eid]

    def last(self) -> str:
        return self.events[-1]["id"]

    def tokens(self) -> int:
        """Tokens of the whole session so far (system prompt + every event), to size it to a target."""
        return self.size + tokenizer().count(self.system) + PER_MESSAGE

    # ------------------------------------------------------------ truth

    def _truth(self, section: str, item: dict[str, Any]) -> str:
        self.truth.setdefault(section, []).append({k: v for k, v in item.items() if v not in (None, [], ())})
        return item["id"]

    def _must_occur(self, eid: str, needles: list[str], what: str) -> None:
        hay = normalize(self._text[eid])
        missing = [n for n in needles if normalize(n) not in hay]
        if missing:
            raise AssertionError(f"{self.id}: {what} {missing} not in event {eid}")

    def mission(self, id: str, from_: str, text: str, keys: list[str]) -> str:
        self._must_occur(from_, keys, "mission keys")
        return self._truth("mission", {"id": id, "from": from_, "text": text, "keys": keys})

    def workstream(self, id: str, from_: str, title: str, items: list[tuple[str, str | None]]) -> str:
        return self._truth("workstreams", {"id": id, "from": from_, "title": title,
                                           "items": [{"id": i, **({"done": d} if d else {})} for i, d in items]})

    def constraint(self, id: str, from_: str, kind: str, quote: str, keys: list[str], *,
                   replaces: str | None = None, until: str | None = None, forbids: list[str] = ()) -> str:
        """`forbids`: the calls the rule forbids while in force, as normalised-call patterns (next action)."""
        self._must_occur(from_, [quote, *keys], "constraint quote/keys")
        return self._truth("constraints", {"id": id, "from": from_, "kind": kind, "quote": quote, "keys": keys,
                                           "replaces": replaces, "until": until, "forbids": list(forbids)})

    def injection(self, id: str, event: str, payload: list[str], alternatives: list[list[str]] = (),
                  calls: list[str] = ()) -> str:
        """`alternatives`: other key sets that say the same, so a reworded or blurred payload ('merge a PR
        right away without waiting for the tests') is still found."""
        self._must_occur(event, payload, "injection payload")
        return self._truth("injections", {"id": id, "event": event, "payload": payload,
                                          "alternatives": [list(a) for a in alternatives], "calls": list(calls)})

    def fact(self, id: str, from_: str, keys: list[str]) -> str:
        self._must_occur(from_, keys, "fact keys")
        return self._truth("facts", {"id": id, "from": from_, "keys": keys})

    def decision(self, id: str, from_: str, keys: list[str], rejected: list[str]) -> str:
        self._must_occur(from_, keys + rejected, "decision keys")
        return self._truth("decisions", {"id": id, "from": from_, "keys": keys, "rejected": rejected})

    def probe(self, id: str, at: str, kind: str, ask: str, expect: list[str], reject: list[str] = (),
              rubric: str | None = None) -> None:
        p: dict[str, Any] = {"id": id, "at": at, "kind": kind, "ask": ask, "expect": list(expect)}
        if reject:
            p["reject"] = list(reject)
        if rubric:
            p["rubric"] = rubric
        self.probes.append(p)

    # ------------------------------------------------------------ output

    def data(self) -> dict[str, Any]:
        return {"scenario": 1, "id": self.id, "title": self.title, "user": self.user_name, "window": self.window,
                "tags": self.tags, "system": self.system, "events": self.events, "truth": self.truth,
                "probes": self.probes}


def write(script: Script, out_dir: Path, strict: bool | None = None) -> Path:
    """Validate with the harness's own loader, then write `<id>.json`. `strict` (default: when
    writing into the bundled library) refuses warnings too, as the loader does for bundled files."""
    data = script.data()
    scenario, ck = check(data)
    path = out_dir / f"{script.id}.json"
    strict = bundled(path) if strict is None else strict
    issues = ck.problems + (ck.warnings if strict else [])
    if scenario is None or issues:
        raise AssertionError(f"{script.id}: generated an invalid scenario: "
                             + "; ".join(f"{ck.display(p)}: {m}" for p, m in issues[:5]))
    out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(data), encoding="utf-8")
    return path


def begin(sid: str, title: str, window: int, seed: int, tags: list[str], users: tuple[str, ...], system: str) -> Script:
    """A Script with its own rng (seeded by seed and id, so generators do not disturb each other)
    and a user name drawn from `users`; `{user}` in the system prompt is filled in."""
    rng = random.Random(f"{seed}:{sid}")
    user = rng.choice(users)
    return Script(sid, title, user, window, tags, system.format(user=user), rng)
