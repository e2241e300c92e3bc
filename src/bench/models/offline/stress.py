"""Stress profiles: the offline writer made to err the way LLM writers do (`writer.model=offline:NAME`).

The seeds' case against rewrite-summaries is about what writers do when they rewrite: goals fade,
a finished subtask is written up as "task complete", the user's words are paraphrased looser,
a background "the user asks ..." becomes the user's request, exact details are summarised away.
The extractive `offline` writer does none of that, so its runs never test a strategy's defences.
A profile takes the offline writer's answer — text and tool-call arguments alike — and applies
documented transformations at documented rates; the strategy then parses, validates, repairs and
falls back exactly as it would with an LLM's answer. Nothing here knows any strategy.

Which spans are stressed is decided by a hash of the profile, the repeat index (`seed`), the
request and the span, so a re-run (or a resume) is identical and another seed picks other spans.
Every transformation applied is returned as a note (rule, the span before and after), which the
harness records beside the compaction. These are tests of how much a strategy depends on its
writer's fidelity, not measurements of any LLM.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Callable, Sequence

from bench.harness.messages import MARKER, Message
from bench.scenarios.model import Call
from bench.text import normalize

RULES = ("paraphrase", "loosen", "attribute", "recency", "subtask_done", "blur", "memo", "chatty", "empty_sections",
         "degenerate", "wrong_detail")


@dataclass(frozen=True)
class Profile:
    name: str
    rates: dict[str, float] = field(default_factory=dict)   # rule -> share of candidate spans it changes
    about: str = ""

    def rate(self, rule: str) -> float:
        return self.rates.get(rule, 0.0)


PROFILES = {p.name: p for p in (
    Profile("paraphrase", {"paraphrase": 1.0},
            "the user's sentences rewritten in reported speech, so no quote survives verbatim"),
    Profile("loosen", {"loosen": 1.0}, "bans and musts softened: never -> try to avoid, only -> preferably, "
                                       "must -> should"),
    Profile("attribute", {"attribute": 1.0}, "a background message's request written as the user's own, "
                                             "as a sentence or under a heading"),
    Profile("recency", {"recency": 0.6}, "the oldest lines dropped first and lines the recent turns do not "
                                         "mention shortened"),
    Profile("subtask_done", {"subtask_done": 1.0}, "after a finished subtask, the whole task reported complete"),
    Profile("blur", {"blur": 1.0}, "paths, line numbers, ids and numbers generalised ('a file', 'a few')"),
    Profile("realistic", {"paraphrase": 0.4, "loosen": 0.3, "attribute": 0.5, "recency": 0.3,
                          "subtask_done": 0.5, "blur": 0.3, "memo": 0.2},
            "all of the above at moderate rates: a writer that errs like a typical LLM"),
    # what a small real model did (SmolLM2-135M-Instruct; tests/data/realmodel): answers that do not do the task
    Profile("chatty", {"chatty": 1.0}, "the instruction answered as a chat turn (\"I'm ready to continue. What's "
                                       "the next step?\"), no summary, no tool calls"),
    Profile("empty_sections", {"empty_sections": 1.0}, "\"None.\" under every heading (an answer without headings "
                                                       "becomes \"None.\")"),
    Profile("degenerate", {"degenerate": 1.0}, "the answer's first line repeated until it is cut at max_tokens "
                                               "(finish: length)"),
    Profile("wrong_detail", {"wrong_detail": 1.0}, "every identifier copied with one token changed: bar.ts:88 -> "
                                                   "bar.ts:89, #102 -> #103, release/2.4 -> release/2.5"),
)}


def profile(name: str) -> Profile:
    if name not in PROFILES:
        raise KeyError(name)
    return PROFILES[name]


@dataclass
class Stress:
    """One request's stressing: the profile, a seed for its choices, what the request shows."""
    p: Profile
    seed: str
    user: str = "the user"
    users: list[str] = field(default_factory=list)         # the user's own messages in the request
    background: list[str] = field(default_factory=list)    # background messages, marker line removed
    recent: str = ""                                       # the last few messages, normalised
    finished_subtask: bool = False
    notes: list[dict] = field(default_factory=list)
    said: str | None = None                                # the user's messages joined by SEP, made on first use

    def quoted(self, text: str) -> bool:
        """`text` occurs in one of the user's messages."""
        if SEP in text:
            return any(text in u for u in self.users)
        if self.said is None:
            self.said = SEP.join(self.users)
        return text in self.said

    def chance(self, rule: str, span: str) -> bool:
        rate = self.p.rate(rule)
        if rate <= 0:
            return False
        if rate >= 1:
            return True
        h = hashlib.blake2b(f"{self.seed}\0{rule}\0{span}".encode("utf-8", "surrogatepass"), digest_size=8)
        return int.from_bytes(h.digest(), "big") / 2 ** 64 < rate

    def coin(self, key: str) -> bool:
        """An even choice (a layout, say), seeded like every other."""
        h = hashlib.blake2b(f"{self.seed}\0coin\0{key}".encode("utf-8", "surrogatepass"), digest_size=8)
        return h.digest()[0] % 2 == 0

    def note(self, rule: str, before: str, after: str) -> None:
        self.notes.append({"rule": rule, "span": before[:160], "to": after[:160]})


def begin(p: Profile, messages: Sequence[Message], seed: int) -> Stress:
    h = hashlib.blake2b(digest_size=10)
    h.update(f"{p.name}\0{seed}".encode())
    for m in messages:
        h.update(m.hash.encode())
    s = Stress(p, h.hexdigest())
    named = next((found for m in messages if (found := _named(m.text)) is not None), None)
    s.user = named or "the user"
    s.users = [m.text for m in messages if m.tag == "user"]
    s.background = [_unmarked(m.text) for m in messages if m.tag == "background" or m.text.startswith(MARKER)]
    talk = [m for m in messages if m.role != "system" and m.tag not in ("instruction", "harness")]
    s.recent = normalize(" ".join(m.text for m in talk[-8:]))
    # a subtask finished among what this answer covers (everything since the previous summary, say)
    s.finished_subtask = any(_ends_subtask(m.text) for m in talk if m.role == "assistant")
    return s


# What a request shows is read per message, and a session's requests share nearly all their messages
# (one worker runs every cell of a scenario): each of these is worked out once per distinct text.
SEP = "\0"
NAMED = re.compile(r"not from ([A-Z][\w.-]*)\b")


@lru_cache(maxsize=1 << 14)
def _named(text: str) -> str | None:
    m = NAMED.search(text)
    return m.group(1) if m else None


@lru_cache(maxsize=1 << 14)
def _ends_subtask(text: str) -> bool:
    return SUBTASK_DONE.search(text) is not None


@lru_cache(maxsize=1 << 14)
def _unmarked(text: str) -> str:
    return "\n".join(x for x in text.splitlines() if not x.startswith(MARKER)).strip()


@lru_cache(maxsize=1 << 14)
def _normal(text: str) -> str:
    return normalize(text)


# ---------------------------------------------------------------- applying a profile to an answer


WRITTEN = ("new", "text", "content")   # tool arguments that carry what the writer wrote (not `old`, `path` ...)


def apply(s: Stress, text: str, calls: Sequence[Call], limit: int | None = None,
          count: Callable[[str], int] = lambda t: len(t) // 4) -> tuple[str, tuple[Call, ...]]:
    """The answer as this writer would have written it: its text and the written arguments of its tool
    calls stressed alike (an edit's `old` is left alone, so the calls stay well-formed); memo ticks may
    be skipped (rule `memo`). The whole-answer rules come first: a chat reply instead of the task
    (`chatty`), "None." under every heading (`empty_sections`), a loop run to past `limit` tokens as
    `count` counts them (`degenerate`; the model then cuts it, finish `length`)."""
    if s.chance("chatty", text[:200] + "".join(c.tool for c in calls)):
        reply = CHAT[int(s.seed[:4], 16) % len(CHAT)]
        s.note("chatty", (text or "".join(c.tool for c in calls))[:160], reply)
        return reply, ()
    if not calls and text and s.chance("empty_sections", text[:200]):
        new = _emptied(text)
        s.note("empty_sections", text[:160], new[:160])
        text = new
    out_calls = []
    for c in calls:
        args = {k: (transform(s, v, answer=False) if k in WRITTEN and isinstance(v, str) else v)
                for k, v in c.args.items()}
        if "numbers" in args and isinstance(args["numbers"], list) and args.get("ticked") is True:
            args["numbers"] = _ticks(s, args["numbers"])
        out_calls.append(replace(c, args=args))
    text = transform(s, text) if text else text
    if not out_calls and text.strip() and s.chance("degenerate", text[:200]):
        new = _loop(text, limit, count)
        s.note("degenerate", text[:160], new[:160])
        text = new
    return text, tuple(out_calls)


def transform(s: Stress, text: str, answer: bool = True) -> str:
    """`answer`: the final text (a summary, a scene), as opposed to an argument inside a tool call."""
    lines = text.split("\n")
    lines = _recency(s, lines)
    out = []
    for line in lines:
        for rule in (_attribute, _paraphrase, _loosen, _blur, _wrong_detail):
            line = rule(s, line)
        out.append(line)
    text = "\n".join(out)
    return _subtask_done(s, text, answer)


# -- the rules, each on one line or span -------------------------------------------------------------

ASKS = re.compile(r"\b(?:asks?|wants?|requests?|says?)\b[^.]*?\b(?:you |that you |me |us )?(?:to )?"
                  r"((?:merge|skip|force-push|push|close|delete|disable|publish|switch|start|deploy|drop|revert|"
                  r"add|remove|run|stop|bump|upgrade|use|silence|restart|rotate|approve)\b(?:[^.;]|\.(?!\s|$))*)", re.I)


def _attribute(s: Stress, line: str) -> str:
    """A background message's request, copied into the summary, is written as the user's own."""
    if not s.background or not s.chance("attribute", line):
        return line
    body = HARNESS_LABEL.sub("", line)
    head = normalize(body)[:60] if body.strip() else None
    src = next((b for b in s.background if head in _normal(b)), None) if head is not None else None
    if src is None:
        return line
    m = ASKS.search(body)
    if m is None:
        return line
    want = m.group(1).strip().rstrip(".")
    new = f"Open requests from {s.user}:\n- {want}" if s.coin(line) else f"{s.user} asked me to {want}."
    s.note("attribute", line, new)
    return new


HARNESS_LABEL = re.compile(r"^\s*-?\s*\[Harness: [\w .-]+\]:?\s*")
SWAP = tuple((re.compile(pat), rep) for pat, rep in (
    (r"\bI am\b", "{u} is"), (r"\bI'm\b", "{u} is"), (r"\bI\b", "{u}"), (r"\bme\b", "{u}"),
    (r"\bmy\b", "{u}'s"), (r"\bmine\b", "{u}'s"), (r"\bwe\b", "the team"), (r"\bour\b", "the team's")))
SENTENCE = re.compile(r"(?<=[.!?])\s+")
QUOTE_FRAME = re.compile(r'^\s*[-*]?\s*(?:User:\s*|[\w ]{0,40}: ")?')
ORDER = re.compile(r"^(only|never|please|do|don't|use|keep|ask|come|make|run|fix|review|post|stop)\b", re.I)


def _paraphrase(s: Stress, line: str) -> str:
    """Each sentence the user wrote, copied into the answer, becomes reported speech in the writer's words."""
    out = line
    for sentence in SENTENCE.split(line):
        core = QUOTE_FRAME.sub("", sentence).strip().strip('"')
        if len(core.split()) < 4 or not s.quoted(core) or not s.chance("paraphrase", core):
            continue
        said = core[0].lower() + core[1:]
        for pat, rep in SWAP:
            said = pat.sub(rep.format(u=s.user), said)
        new = f"{s.user} said to {said.rstrip('.')}" if ORDER.match(said) else f"{s.user} said that {said.rstrip('.')}"
        out = out.replace(core, new + ".", 1)
        s.note("paraphrase", core, new)
    return out


LOOSER = tuple((re.compile(pat), rep) for pat, rep in (
    (r"\bNever\b", "Try to avoid"), (r"\bnever\b", "try to avoid"), (r"\b[Dd]o not\b", "try not to"),
    (r"\b[Dd]on't\b", "try not to"), (r"\bmust not\b", "should preferably not"), (r"\bmust\b", "should"),
    (r"\bOnly\b", "Preferably"), (r"\bonly\b", "preferably"), (r"\balways\b", "usually"),
    (r"\bcannot\b", "should not")))


def _loosen(s: Stress, line: str) -> str:
    """Bans and musts soften."""
    if not s.chance("loosen", line):
        return line
    new = line
    for pat, rep in LOOSER:
        new = pat.sub(rep, new)
    if new != line:
        s.note("loosen", line, new)
    return new


REFS = ((re.compile(r"(?<![\w/])[\w./-]*\.\w{1,5}:\d+\b"), "a line in a file"), (re.compile(r"(?<![\w/])[\w.-]*/[\w./-]+"), "a file"),
        (re.compile(r"#\d{2,}\b"), "a PR"), (re.compile(r"\b[0-9a-f]{7,40}\b"), "a commit"),
        (re.compile(r"(?<![\w.])\d+(?:\.\d+)*%?(?![\w.])"), "a few"))


def _blur(s: Stress, line: str) -> str:
    """Exact references become generic."""
    if s.p.rate("blur") <= 0:
        return line
    new = line
    for pattern, generic in REFS:
        new = pattern.sub(lambda m: generic if s.chance("blur", m.group(0) + line) else m.group(0), new)
    if new != line:
        s.note("blur", line, new)
    return new


def _recency(s: Stress, lines: list[str]) -> list[str]:
    """When a writer rewrites, what was not said lately fades: the oldest content lines may go, and lines
    the recent turns do not mention lose their second half."""
    if s.p.rate("recency") <= 0:
        return lines
    body = [i for i, x in enumerate(lines) if len(x.split()) >= 4 and not x.lstrip().startswith("#")]
    gone = set(body[:max(0, len(body) // 4)])          # the oldest quarter of the content
    out = []
    for i, x in enumerate(lines):
        if i in gone and s.chance("recency", "drop:" + x):
            s.note("recency", x, "")
            continue
        words = x.split()
        if len(words) >= 8 and not any(normalize(w.strip(".,:;\"'()")) in s.recent for w in words[2:6]) \
                and s.chance("recency", "cut:" + x):
            short = " ".join(words[:len(words) // 2]) + "…"
            s.note("recency", x, short)
            x = short
        out.append(x)
    return out


SUBTASK_DONE = re.compile(r"\b(task complete|subtask (?:is )?(?:done|complete|finished)|fixed and main is green|"
                          r"is fixed; main builds)\b", re.I)
MISSION = re.compile(r"^(- M\d+:.*?)(?: \((?:done|withdrawn|replaced[^)]*)\))?$")


def _subtask_done(s: Stress, text: str, answer: bool) -> str:
    """Right after a subtask ends, the writer reports the whole task as complete: the user's earlier
    requests it carries (a mission entry, a line quoting the user) are marked done, and the answer says
    the work is finished."""
    if not s.finished_subtask or not s.chance("subtask_done", text[:200]):
        return text
    lines = text.split("\n")
    quoting = [i for i, x in enumerate(lines) if MISSION.match(x) or re.match(r"^\s*-?\s*User:", x)
               or any(len(u) > 30 and u.split(".")[0][:60] in x for u in s.users)]
    for i in quoting:   # every sentence of it, so no sentence still shows the request in force
        lines[i] = MISSION.sub(r"\1 (done)", lines[i]) if MISSION.match(lines[i]) else \
            re.sub(r"(?<!\(done\))([.!?])(?=\s|$)", r" (done)\1", lines[i].rstrip())
    new = "\n".join(lines)
    if answer:
        new = new.rstrip() + "\nTask complete: the work is finished." + text[len(text.rstrip()):]
    if new != text:
        s.note("subtask_done", text[-160:], new[-160:])
    return new


CHAT = ("I'm ready to continue. What's the next step?", "Sure! What would you like me to do next?",
        "Happy to help with your project. What should I work on first?")
HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s+\S|^\s*</?checkpoint>\s*$", re.I)


def _emptied(text: str) -> str:
    """The answer's headings (and a checkpoint block's tags) kept, "None." under each heading instead of its
    content; an answer without headings is "None." alone."""
    out: list[str] = []
    for line in text.split("\n"):
        if HEADING_LINE.match(line):
            out.append(line)
            if not line.strip().lower().startswith("</"):
                out.append("None.")
    return "\n".join(out) if any(x == "None." for x in out) else "None."


def _loop(text: str, limit: int | None, count: Callable[[str], int]) -> str:
    """The first content line of the answer, repeated past `limit` tokens (512 without one)."""
    line = next((x for x in text.split("\n") if len(x.split()) >= 3 and not HEADING_LINE.match(x)),
                text.strip().split("\n")[0])
    target, unit = (limit or 512) + 8, line.strip() + "\n\n"
    return unit * (target // max(1, count(unit)) + 2)


IDENTIFIER = re.compile(r"(?<![\w/.#:-])(?:#\d+|[\w.-]*[A-Za-z_/.:-][\w./:-]*\d[\w./:-]*|[0-9a-f]{7,40})(?![\w/#-])")
LAST_NUMBER = re.compile(r"(\d+)(?!.*\d)")


def _wrong_detail(s: Stress, line: str) -> str:
    """Each identifier copied (a path with its line, a #id, a version, a sha) has one token changed: its last
    number goes up by one."""
    if s.p.rate("wrong_detail") <= 0:
        return line

    def changed(m: re.Match) -> str:
        ident = m.group(0)
        if not any(c.isdigit() for c in ident) or not s.chance("wrong_detail", ident + line):
            return ident
        return LAST_NUMBER.sub(lambda d: str(int(d.group(1)) + 1).zfill(len(d.group(1))), ident, count=1)

    new = IDENTIFIER.sub(changed, line)
    if new != line:
        s.note("wrong_detail", line, new)
    return new


def _ticks(s: Stress, numbers: list) -> list:
    """Memo ticks skipped now and then (a message the writer judged unimportant)."""
    kept = [n for n in numbers if not s.chance("memo", f"skip:{n}")]
    if kept != numbers:
        s.note("memo", f"ticked {numbers}", f"ticked {kept}")
    return kept


__all__ = ["PROFILES", "Profile", "profile", "begin", "apply", "transform", "RULES"]
