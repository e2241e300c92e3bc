"""The offline writer's play of the checkpoint turn, through the same tools an LLM gets.

Round one reads mind.md and memo.md; round two edits the mind and ticks the
memo; then it answers with one checkpoint block. It uses only the request:
the conversation, the instruction (user name, budgets) and the tool results it
asked for. Its output goes through the strategy's validation like any other.
"""
from __future__ import annotations

import difflib
import re
from typing import Sequence

from bench.harness.messages import Message
from bench.models.offline import Turn
from bench.scenarios.model import Call
from bench.tokens import Tokenizer

from bench.strategies.vibey import mind as mindfile
from bench.strategies.vibey import reading as rd
from bench.strategies.vibey.budgets import SECTIONS
from bench.strategies.vibey.memo import LINE, preview
from bench.strategies.vibey.scene import CLOSE, OPEN
from bench.strategies.vibey.texts import block, raw, tool_names

MARK = raw("instruction.md").splitlines()[0]
RECOLLECTION = block("recollection.md", "intro", n=0, user="", session="").split(",")[0]
REPAIR = raw("repair.md").splitlines()[0]
BUDGET = re.compile(r"I am here (\d+), Goals (\d+), Key decisions (\d+), Lessons (\d+); memo (\d+) in all, "
                    r"(\d+) per message.*?scene at least (\d+), at most (\d+)", re.S)
EDITS = {"edit_mind", "rewrite_mind_section", "tick_memo", "edit_memo"}
REFUSED = "not run:"      # what the harness answers for a round of tool calls it did not run


def play(messages: Sequence[Message], tools: list[dict] | None, max_tokens: int | None,
         tok: Tokenizer) -> Turn | None:
    names = {t.get("function", {}).get("name") for t in tools or ()}
    at = next((i for i in reversed(range(len(messages)))
               if messages[i].role == "user" and messages[i].text.startswith(MARK)), None)
    if at is None or not tool_names() <= names:
        return None
    instruction, after = messages[at].text, list(messages[at + 1:])
    m = BUDGET.search(instruction)
    user = re.search(r"not from (.+?)\. It is not", instruction)
    if m is None or user is None:
        return None
    caps = dict(zip(SECTIONS, map(int, m.groups()[:4])))
    memo_total, memo_each, _, scene_max = map(int, m.groups()[4:])
    k = sum(1 for x in after if x.role == "assistant") + 1
    reads, acted = _results(after)
    if any(x.role == "tool" and x.text.startswith(REFUSED) for x in after[-3:]):
        # the harness ran no more rounds ("answer now"): the checkpoint block, from what was read
        conv = [x for x in messages[:at] if x.role != "system" and not x.text.startswith(RECOLLECTION)]
        now = reads.get("mind.md") or mindfile.template()
        text = scene(conv, now, user.group(1), scene_max, tok, [])
        return Turn(text=f"{OPEN}\n{text}\n{CLOSE}")
    if "mind.md" not in reads or "memo.md" not in reads:
        return Turn(calls=(Call(f"ck{k}-1", "read_file", {"path": "mind.md"}),
                           Call(f"ck{k}-2", "read_file", {"path": "memo.md"})))
    conv = [x for x in messages[:at] if x.role != "system" and not x.text.startswith(RECOLLECTION)]
    system = messages[0].text if messages and messages[0].role == "system" else ""
    if not acted:
        new = compose(reads["mind.md"], conv, system, user.group(1), caps, tok)
        calls = edits(reads["mind.md"], new, k)
        calls += ticks(reads["memo.md"], conv, memo_total, memo_each, tok, k)
        if calls:
            return Turn(calls=tuple(calls))
    now = compose(reads["mind.md"], conv, system, user.group(1), caps, tok)
    before = next((x.text for x in messages[:at] if x.text.startswith(RECOLLECTION)), "")
    text = scene(conv, now, user.group(1), scene_max, tok, rd.recalled_pitfalls(before))
    return Turn(text=f"{OPEN}\n{text}\n{CLOSE}")


def _results(after: list[Message]) -> tuple[dict[str, str], bool]:
    """Files read (path -> latest content) and whether any change was made, repairs aside."""
    calls = {c.id: c for x in after for c in x.calls}
    reads: dict[str, str] = {}
    acted = False
    for x in after:
        if x.role == "user" and x.text.startswith(REPAIR):   # start over: read the files as they are now
            reads, acted = {}, False
        for c in x.calls:
            acted = acted or c.tool in EDITS
        c = calls.get(x.call_id or "")
        if x.role == "tool" and c is not None and c.tool == "read_file" and not x.text.startswith(REFUSED):
            reads[str(c.args.get("path"))] = x.text
    return reads, acted


# -- the mind -----------------------------------------------------------------------------------

def _lines(text: str) -> list[str]:
    return [x for x in text.splitlines() if x.strip()]


def compose(old: str, conv: list[Message], system: str, user: str, caps: dict[str, int], tok: Tokenizer) -> str:
    """The mind this checkpoint should leave: old entries kept, new ones added, each section within its cap."""
    users = [m for m in conv if rd.is_user(m)]
    assistant = [m for m in conv if m.role == "assistant"]
    subs = dict(mindfile.subsections(mindfile.body(old, "Goals")))
    mission = _lines(subs.get("Mission", ""))
    goals: list[str] = []
    for i, m in enumerate(users):
        if rd.withdrawn(m, users[i + 1:]) or rd.CONTINUE.match(m.text):
            continue
        said = rd.sentences(m.text, clauses=False)
        first = " ".join([*said[:1], *[x for x in said[1:] if len(rd.items(x)) >= 3][:1]])
        if (not mission and not goals and len(first.split()) >= 4) or rd.DIRECTION.search(first):
            goals.append(re.sub(r"^(please|now|also|ok(ay)?),?\s+", "", first, flags=re.I))
    for g in goals:
        if not any(g[:40].lower() in e.lower() for e in mission):
            mission.append(f"- M{len(mission) + 1}: for {user}: {g}")
    for i, e in enumerate(mission):
        if "(withdrawn" not in e and rd.withdrawn(_Text(e), users):
            mission[i] = e + " (withdrawn)"
    streams = _workstreams(mission, _lines(subs.get("Workstreams", "")), assistant)
    if streams and all("(done)" in s for s in streams):
        mission = [e if re.search(r"\((done|withdrawn|replaced)", e) else e + " (done)" for e in mission]
    kept = [x for x in _lines(mindfile.body(old, "I am here")) if not rd.withdrawn(_Text(x), users)]
    here = _merge(kept, _here(users, system, user), caps["I am here"], tok, keep=1)
    decisions = [f"- {s}" for m in conv if m.role == "assistant" or rd.is_user(m)
                 for s in rd.sentences(m.text) if rd.DECIDE.search(s)]
    decided = _merge(_lines(mindfile.body(old, "Key decisions")), decisions, caps["Key decisions"], tok)
    lessons = _merge(_lines(mindfile.body(old, "Lessons")), _lessons(conv, user), caps["Lessons"], tok)
    goals_cap = caps["Goals"] - tok.count("## Mission\n\n## Workstreams")
    mission = _shorten(mission, goals_cap // 2, tok)
    streams = _merge([], streams, goals_cap - tok.count("\n".join(mission)), tok)
    # Parts counted apart can tokenize to less than joined: the section is checked whole, as the validator does.
    while streams and tok.count(_goals(mission, streams).strip()) > caps["Goals"]:
        streams.pop(0)
    return (f"# I am here\n{_block(here)}\n# Goals\n{_goals(mission, streams)}"
            f"\n# Key decisions\n{_block(decided)}\n# Lessons\n{_block(lessons)}")


def _goals(mission: list[str], streams: list[str]) -> str:
    return f"## Mission\n{_block(mission)}\n## Workstreams\n{_block(streams)}"


class _Text:
    """Text that is not a message of this conversation (a preview, a line of the old mind)."""
    def __init__(self, text: str):
        self.text = text


def _block(lines: list[str]) -> str:
    return "".join(x + "\n" for x in lines)


def _here(users: list[Message], system: str, user: str) -> list[str]:
    role = rd.sentences(system)[0] if system.strip() else "I am an agent"
    out = [f"- I work for {user}. " + re.sub(r"^You are\b", "I am", role)]
    for i, m in enumerate(users):
        if rd.withdrawn(m, users[i + 1:]):
            continue
        for s in rd.sentences(m.text):
            if rd.AGREE.search(s):
                out.append(f'- Agreement with {user}: "{s}"')
            elif rd.BAN.search(s):
                out.append(f'- Boundary set by {user}: "{s}"')
            elif rd.MUST.search(s):
                out.append(f'- Rule set by {user}: "{s}"')
    return out


def _workstreams(mission: list[str], old: list[str], assistant: list[Message]) -> list[str]:
    out = []
    for e in mission:
        wid = re.match(r"-\s*M(\d+)", e)
        if not wid or re.search(r"\((withdrawn|replaced)", e):
            continue
        queue = rd.items(re.sub(r"^-\s*M\d+:\s*(for [^:]{1,40}:\s*)?", "", e))
        if not queue:
            continue
        prev = next((x for x in old if x.startswith(f"- W{wid.group(1)}:")), "")
        start = re.search(r"current (\S+?)[;,)]", prev)
        p = rd.progress(queue, assistant, start.group(1) if start else None)
        if len(p.done) == len(queue):
            out.append(f"- W{wid.group(1)}: queue {queue[0]} … {queue[-1]} (done) — all {len(queue)} handled")
            continue
        status = "in progress" if p.current else "pending"
        out.append(f"- W{wid.group(1)}: queue {_queue(queue)} — {status}; {len(p.done)}/{len(queue)} done; "
                   f"current {p.current or 'none'}; next {p.next or 'none'}")
    return out


def _queue(queue: list[str]) -> str:
    if len(queue) <= 8:
        return ", ".join(queue)
    return f"{queue[0]} … {queue[-1]} ({len(queue)} items, in this order)"


def _lessons(conv: list[Message], user: str) -> list[str]:
    out = [f"- {s}" for m in conv if m.role == "assistant" for s in rd.sentences(m.text) if rd.LESSON.search(s)]
    if any(m.role == "user" and not rd.is_user(m) for m in conv):
        out.append(f"- A message that starts with a [Harness: ...] line comes from a watch, job or session, not "
                   f"from {user}; what it asks is not {user}'s request.")
    return out


def _merge(old: list[str], new: list[str], cap: int, tok: Tokenizer, keep: int = 0) -> list[str]:
    """Old lines plus the new ones not there yet; the oldest after `keep` go first when over the cap."""
    lines = old + [x for x in new if x not in old]
    while lines and tok.count("\n".join(lines)) > cap:
        if len(lines) > keep:
            lines.pop(keep if len(lines) > keep else 0)
        else:
            lines[-1] = tok.truncate(lines[-1], max(0, cap - tok.count("\n".join(lines[:-1])) - 2))
            break
    return lines


def _shorten(entries: list[str], cap: int, tok: Tokenizer) -> list[str]:
    """Mission entries are never dropped; long ones lose words, keeping id and status."""
    while entries and tok.count("\n".join(entries)) > cap:
        longest = max(range(len(entries)), key=lambda i: len(entries[i]))
        e = entries[longest]
        status = re.search(r"\s\((done|withdrawn|replaced[^)]*)\)$", e)
        head = e[:status.start()] if status else e
        short = head.rsplit(" ", 1)[0] + "…"
        if len(short) >= len(head) - 1 or len(short) < 12:
            break
        entries[longest] = short + (status.group(0) if status else "")
    return entries


def edits(old: str, new: str, k: int) -> list[Call]:
    """edit_mind calls (old -> new, line hunks per section) that turn `old` into `new`."""
    calls: list[Call] = []
    text, rewritten = old, False
    for heading in SECTIONS:
        a = mindfile.body(text, heading).splitlines()
        b = mindfile.body(new, heading).splitlines()
        if [x for x in a if x.strip()] == [x for x in b if x.strip()]:
            continue
        ops, trial = [], text
        try:
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
                if tag == "equal":
                    continue
                if i1 == i2:
                    anchor = a[i1 - 1] if i1 else f"# {heading}"
                    old_s, new_s = anchor + "\n", anchor + "\n" + "".join(x + "\n" for x in b[j1:j2])
                else:
                    old_s, new_s = "".join(x + "\n" for x in a[i1:i2]), "".join(x + "\n" for x in b[j1:j2])
                if mindfile.whole_section(trial, old_s):       # replacing a whole body is the one rewrite
                    raise mindfile.EditError("whole section")
                trial = mindfile.apply_edit(trial, old_s, new_s)
                ops.append((old_s, new_s))
        except mindfile.EditError:
            if rewritten:
                continue
            rewritten, ops = True, []
            trial = mindfile.rewrite_section(text, heading, "\n".join(b))
            calls.append(Call(f"ck{k}-s{len(calls)}", "rewrite_mind_section", {"section": heading, "text": "\n".join(b)}))
        text = trial
        calls += [Call(f"ck{k}-e{len(calls)}", "edit_mind", {"old": o, "new": n}) for o, n in ops]
    return calls


# -- the memo -----------------------------------------------------------------------------------

def ticks(sheet: str, conv: list[Message], total: int, each: int, tok: Tokenizer, k: int) -> list[Call]:
    users = [m for m in conv if rd.is_user(m)]
    by_preview = {preview(m.text): m for m in users}
    lines = [(int(m.group(2)), m.group(1) != " ", line[m.end():].strip()) for line in sheet.splitlines()
             if (m := LINE.match(line))]
    want: list[tuple[int, int, int]] = []      # (priority, -number, cost)
    for number, _, shown in lines:
        msg = by_preview.get(shown)
        text = msg.text if msg else shown
        if rd.CONTINUE.match(text) or len(text.split()) < 4:
            continue
        later = users[users.index(msg) + 1:] if msg is not None else users
        if rd.withdrawn(msg or _Text(text), later):
            continue
        rank = 0 if (rd.RULE.search(text) or rd.AGREE.search(text)) else 1 if len(text.split()) >= 6 else 2
        if rank < 2:
            # a message no longer in view is known by its preview only: it may take the whole `each`
            want.append((rank, -number, min(tok.count(msg.text), each) if msg else each))
    keep, used = set(), 0
    for rank, neg, cost in sorted(want):
        if used + cost <= total:
            keep.add(-neg)
            used += cost
    on = sorted(n for n, ticked, _ in lines if n in keep and not ticked)
    off = sorted(n for n, ticked, _ in lines if ticked and n not in keep)
    calls = [Call(f"ck{k}-t1", "tick_memo", {"numbers": on, "ticked": True})] if on else []
    return calls + ([Call(f"ck{k}-t0", "tick_memo", {"numbers": off, "ticked": False})] if off else [])


# -- the scene ----------------------------------------------------------------------------------

def scene(conv: list[Message], mind: str, user: str, cap: int, tok: Tokenizer, earlier: list[str]) -> str:
    """Rewritten each time; pitfalls of the previous scene follow the new ones while the budget allows."""
    assistant = [m for m in conv if m.role == "assistant" and m.tag != "checkpoint"]
    users = [m for m in conv if rd.is_user(m)]
    last = assistant[-1] if assistant else None
    streams = [x for x in _lines(dict(mindfile.subsections(mindfile.body(mind, "Goals"))).get("Workstreams", ""))]
    stream = next((s for s in streams if "(done)" not in s), streams[-1] if streams else "")
    step = rd.sentences(last.text)[0] if last and rd.sentences(last.text) else "resuming the work"
    waits = [f"{rd.source(m)}: {s}" for m in conv[-40:] if m.role != "tool" for s in rd.sentences(m.text)
             if rd.WAIT.search(s) and not s.startswith("[Harness:")]
    latest = " ".join(rd.sentences(users[-1].text)[:2]) if users else ""
    lines = [f"Current step: {step}" + (f" (workstream {stream[2:].split(':')[0]})" if stream else ""),
             f"Progress: {stream[2:] if stream else 'see the latest messages'}",
             "Waiting for: " + ("; ".join(waits[-3:]) if waits else "nothing outstanding"),
             f'Next step: continue with what {user} asked most recently: "{latest}"' if latest
             else "Next step: continue the current workstream",
             "Pitfalls:", *[f"- {p}" for p in dict.fromkeys([*rd.pitfalls(conv), *earlier[:8]])],
             "References: " + ", ".join(rd.refs(conv)[:30])]
    text = "\n".join(lines)
    return tok.truncate(text, cap) if tok.count(text) > cap else text
