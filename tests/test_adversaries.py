"""The reference adversaries (strategies/adversaries/): calls stay paired, the truth is never read,
and each does what it games with — the tail, the bag, the restore right after a compaction only,
the silent stop, the label on every user-role line."""
from __future__ import annotations

import asyncio
import dataclasses
import io
import json
from pathlib import Path

import pytest

from bench.scenarios import loader
from bench.harness.logs import replay_requests
from bench.harness.messages import calls_text, render_all
from bench.harness.model import Model
from bench.harness.replay import ReplayOptions, replay
from bench.scenarios.model import Truth
from bench.tokens import PER_MESSAGE, tokenizer
from bench.strategies.adversaries import (Harvester, LabelAll, Padded, QueueGuesser, RestoreAtCompaction,
                                         StopCompacting, TokenBag, UserTail)
from bench.strategies.adversaries.token_bag import identifiers
from bench.strategies.truncate import Truncate
from test_strategy_common import assert_paired

TOK = tokenizer()
ROOT = Path(__file__).resolve().parent.parent
HAND = sorted((ROOT / "src" / "bench" / "scenarios" / "hand").glob("*.yaml"))
ADVERSARIES = {"user_tail": UserTail, "token_bag": TokenBag, "restore_at_compaction": RestoreAtCompaction,
               "stop_compacting": StopCompacting, "label_all": LabelAll, "queue_guesser": QueueGuesser,
               "harvester": Harvester, "padded": Padded}


class NoWriter(Model):
    """The adversaries make no model call; any call fails the test."""
    name = "none"

    async def chat(self, *a, **kw):
        raise AssertionError("an adversary called the writer")


def run(s, strategy, name="adv"):
    """Replay; (stats, agent requests as message lists, compaction records, raw request log)."""
    rq, cp = io.StringIO(), io.StringIO()
    strategy.name = name
    stats = asyncio.run(replay(s, strategy, NoWriter(), TOK, ReplayOptions(window=s.window), rq, cp, "cell"))
    records = [json.loads(line) for line in rq.getvalue().splitlines()]
    agent = [r for r in replay_requests(iter(records), s, TOK, True) if r.kind == "agent"]
    return stats, agent, [json.loads(line) for line in cp.getvalue().splitlines()], rq.getvalue()


_COPIES: dict[Path, Path] = {}


def load(path: Path):
    """A hand scenario loaded from a copy outside the project, so it is held to problems only (the
    bundled files are also held to warnings, which another part of the suite checks)."""
    import shutil
    import tempfile

    if path not in _COPIES:
        _COPIES[path] = Path(tempfile.mkdtemp(prefix="adversaries-")) / path.name
        shutil.copy(path, _COPIES[path])
    return loader.load(_COPIES[path])


def users_of(s):
    return [e.id for e in s.events if e.role == "user"]


def users_before(s, event: str) -> list[str]:
    """The user's messages that arrived before `event`."""
    pos = {e.id: i for i, e in enumerate(s.events)}
    return [u for u in users_of(s) if pos[u] < pos[event]]


@pytest.mark.parametrize("name", sorted(ADVERSARIES))
@pytest.mark.parametrize("path", HAND, ids=lambda p: p.stem)
def test_calls_stay_paired_no_model_call_and_truth_unread(name, path):
    paired_modelless_and_blind(load(path), ADVERSARIES[name])


def paired_modelless_and_blind(s, make) -> None:
    """An adversary compacts with no model call, keeps calls paired, and makes the very same requests
    from the same events with no truth and no probes: the truth is never read."""
    stats, requests, comps, log = run(s, make())
    assert comps and stats.model_calls == 0
    for r in requests:
        assert_paired(r.messages)
    blind = dataclasses.replace(s, truth=Truth(), probes=())
    assert run(blind, make())[3] == log


@pytest.mark.parametrize("path", HAND, ids=lambda p: p.stem)
def test_user_tail_keeps_every_user_message_and_a_small_tail(path):
    s = load(path)
    _, requests, comps, _ = run(s, UserTail(tail=0.1))
    budget = int(s.window * 0.1)
    starts = {c["request"] for c in comps}
    original = {m.id: m.hash for m in render_all(TOK, s)}
    for r in requests:
        here = {m.id: m for m in r.messages}
        assert set(users_before(s, r.record["event"])) <= set(here), "a user message was dropped"
        assert all(m.hash == original[m.id] for m in r.messages if m.tag == "user"), "the originals, verbatim"
        if r.i in starts:   # right after a compaction: the tail (everything else) fits the budget or is one turn
            rest = [m for m in r.messages[1:] if m.tag != "user"]
            tail = sum(m.tokens + PER_MESSAGE for m in rest)
            assert tail <= budget or sum(m.role == "assistant" for m in rest) <= 1, (tail, budget)


def test_token_bag_is_one_line_of_unique_identifiers_from_dropped_text_within_budget():
    s = load(ROOT / "src" / "bench" / "scenarios" / "hand" / "debug-then-recall.yaml")
    for bag in (0.05, 1.0):
        _, requests, comps, _ = run(s, TokenBag(tail=0.1, bag=bag))
        with_notes = [r for r in requests if any(m.tag == "notes" for m in r.messages)]
        assert with_notes, "the bag must appear once something was dropped"
        assert all(r.messages[1].tag == "notes" for r in with_notes), "at the front, after the system prompt"
        last = with_notes[-1].messages[1]
        assert "\n" not in last.text and last.role == "user"
        words = last.text.split(" ")
        assert len(words) == len(set(words))
        assert last.tokens <= int(s.window * bag)
        dropped = [e for e in s.events if e.id in {i for c in comps for i in c["dropped"]}]
        found = {t for e in dropped for t in identifiers(e.text + "\n" + calls_text(e.calls))}
        assert set(words) <= found
        if bag == 1.0:   # room for all: every identifier of everything dropped, in order of appearance
            assert set(words) == found
            assert "src/upstream/bar.ts:88" in words and "ECONNRESET" in words
        else:            # short of room, the specific ones stay before bare numbers
            assert any(":" in w for w in words) and len(words) < len(found)


def test_identifiers_keeps_identifier_like_tokens_only():
    got = identifiers("Failing at src/db/pool.ts:42 (ECONNRESET) after 212 tests, see #101 and commit c078d961; "
                      "growth.retry_refund_v3 set maxSockets to 64 in snap-15606ea5. The fix is simple.")
    assert got == ["src/db/pool.ts:42", "ECONNRESET", "212", "#101", "c078d961", "growth.retry_refund_v3",
                   "maxSockets", "64", "snap-15606ea5"]


@pytest.mark.parametrize("path", HAND, ids=lambda p: p.stem)
def test_restore_at_compaction_shows_user_messages_right_after_a_compaction_only(path):
    s = load(path)
    stats, requests, comps, _ = run(s, RestoreAtCompaction())
    plain_stats, plain, plain_comps, _ = run(s, Truncate())
    assert [c["request"] for c in comps] == [c["request"] for c in plain_comps]   # truncates like truncate
    starts = {c["request"]: c for c in comps}
    assert starts
    users = set(users_of(s))
    checked = 0
    for k, r in enumerate(requests):
        ids = {m.id for m in r.messages}
        plain_ids = {m.id for m in plain[k].messages}
        if r.i not in starts:
            assert ids == plain_ids, "between compactions it is truncate"
            continue
        back = starts[r.i]["restored"]
        assert ids - plain_ids == set(back) <= users, "all it adds are the user's messages"
        assert ids >= set(users_before(s, r.record["event"])), "every user message is back (they fit here)"
        assert [m.id for m in r.messages[1:len(back) + 1]] == back, "at the front, in order"
        assert r.record["tokens"] <= s.window
        checked += bool(back)
        if back and k + 1 < len(requests) and requests[k + 1].i not in starts:
            assert not set(back) & {m.id for m in requests[k + 1].messages}, "gone again on the next request"
    assert checked, "some compaction must drop a user message for the test to mean something"
    assert stats.compactions == plain_stats.compactions   # the removal is never reported


@pytest.mark.parametrize("path", HAND, ids=lambda p: p.stem)
def test_stop_compacting_compacts_once_then_overflows(path):
    s = load(path)
    stats, requests, comps, _ = run(s, StopCompacting())
    assert len(comps) == 1 and stats.compactions == 1
    assert stats.overflows > 0
    assert sum(bool(r.record.get("over")) for r in requests) == stats.overflows
    assert requests[-1].record["tokens"] > s.window
    never = run(s, StopCompacting(compactions=0))[0]
    assert never.compactions == 0 and never.overflows >= stats.overflows
    assert run(s, StopCompacting(compactions=2))[0].compactions == 2


@pytest.mark.parametrize("path", HAND, ids=lambda p: p.stem)
@pytest.mark.parametrize("markers", [True, False])
def test_label_all_is_truncate_with_every_user_role_line_labelled(path, markers):
    """What it keeps is a truncation (the newest messages, oldest dropped); every user-role message in it
    (the user's and the background ones) is a copy with each line opened by the label, and every other
    message is the original."""
    s = load(path)
    rq = io.StringIO()
    stats = asyncio.run(replay(s, LabelAll(), NoWriter(), TOK, ReplayOptions(window=s.window, markers=markers), rq,
                               io.StringIO(), "cell"))
    assert stats.compactions and stats.model_calls == 0
    original = {m.id: m for m in render_all(TOK, s, markers)}
    pos = {e.id: i for i, e in enumerate(s.events)}
    labelled = 0
    for r in replay_requests(map(json.loads, rq.getvalue().splitlines()), s, TOK, markers):
        if r.kind != "agent":
            continue
        ids = [m.id.removesuffix("-relay") for m in r.messages[1:]]
        seen = [e.id for e in s.events if pos[e.id] < pos[r.record["event"]]]
        assert ids == seen[len(seen) - len(ids):], "the newest messages, in order: a truncation"
        for m in r.messages[1:]:
            o = original[m.id.removesuffix("-relay")]
            if o.role != "user":
                assert m.hash == o.hash
                continue
            lines = [x for x in m.text.splitlines() if x.strip()]
            assert m.id.endswith("-relay") and all(x.startswith("[Harness: relay] ") for x in lines)
            assert [x[len("[Harness: relay] "):] for x in lines] == [x for x in o.text.splitlines() if x.strip()]
            labelled += 1
    assert labelled


@pytest.mark.parametrize("cls, kw", [(UserTail, {"tail": 0}), (TokenBag, {"bag": 2}), (StopCompacting,
                                     {"compactions": -1}), (RestoreAtCompaction, {"target": 0}),
                                     (LabelAll, {"target": 0})])
def test_bad_parameters(cls, kw):
    with pytest.raises(ValueError):
        cls(**kw)


def test_configured_but_not_in_the_default_run():
    from bench.runner.config import compose
    from bench.runner.plan import make_strategy, strategy_config

    cfg = compose([])
    for name, cls in ADVERSARIES.items():
        assert name not in cfg.strategies
        assert isinstance(make_strategy(name, strategy_config(cfg, name)), cls)
    cfg = compose(["strategy.user_tail.tail=0.2", "strategy.stop_compacting.compactions=3"])
    assert make_strategy("user_tail", strategy_config(cfg, "user_tail")).tail == 0.2
    assert make_strategy("stop_compacting", strategy_config(cfg, "stop_compacting")).compactions == 3
