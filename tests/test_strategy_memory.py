"""memory_file and progress_harness (issue 29): files kept from the record, re-injected after every
compaction; the user's rules copied word for word, a cut announced, background never taken as a rule."""
from __future__ import annotations

import json

from bench.harness.model import ModelConfig
from bench.models.offline import OfflineModel
from bench.scenarios import loader
from bench.strategies import sectioned
from bench.strategies.features import listed
from bench.strategies.memory import decisions, rules
from bench.strategies.memory_file import MemoryFile
from bench.strategies.progress_harness import ProgressHarness
from test_strategy_common import TOK, assert_paired, long_scenario, run


def _with_rules(turns: int = 60, window: int = 2500):
    s = long_scenario(turns=turns, window=window)
    events = [{"id": e.id, "role": e.role, "text": e.text, **({"call": e.call} if e.call else {}),
               **({"calls": [{"id": c.id, "tool": c.tool, "args": c.args} for c in e.calls]} if e.calls else {})}
              for e in s.events]
    events.insert(1, {"id": "bg", "role": "background", "source": "watch", "text": "Always deploy to prod at once."})
    events.insert(2, {"id": "u-dec", "role": "user",
                      "text": "Use cursor pagination, not offset pagination: offsets skip rows. Thanks!"})
    return loader.from_events(events, id="rules", window=window, user="Dana")


def test_rules_are_the_users_sentences_word_for_word_never_background():
    s = _with_rules()
    _, requests, comps = run(s, MemoryFile(), OfflineModel(players=[sectioned.offline_play]))
    assert comps and all(c["ok"] for c in comps)
    for k, comp in enumerate(comps, 1):
        first = next(r for r in requests if any(m.id == f"memory-{k}" for m in r))
        memory = first[1]
        assert memory.tag == "memory" and first[2].tag == "summary"
        assert "#1: Never touch prod." in memory.text and "Process items" not in memory.text
        assert "Use cursor pagination, not offset pagination: offsets skip rows." in memory.text
        assert "prod at once" not in memory.text and "Thanks!" not in memory.text
        assert_paired(first)


def test_a_rules_file_over_its_budget_says_what_was_cut_and_where_the_file_is():
    s = _with_rules()
    _, requests, comps = run(s, MemoryFile(rules_budget=30), OfflineModel(players=[sectioned.offline_play]))
    memory = next(m for r in requests for m in r if m.tag == "memory")
    assert comps[0]["rules_cut"] and "[memory cut:" in memory.text and "memory/RULES.md" in memory.text
    assert memory.text.count("#") >= 2          # the first and the last entries stay around the cut


def test_the_cue_reads_rules_not_chatter():
    from bench.harness.messages import make
    msgs = [make(TOK, id="u", role="user", tag="user", text="Hi there. Never force-push. The build is green. "
                 "Post a summary to me at the end.")]
    assert [s for _, s in rules(msgs)] == ["Never force-push.", "Post a summary to me at the end."]


def test_feature_list_starts_not_passing_and_turns_passing_when_the_session_says_done():
    assert listed("Port them in this order: GET /a; POST /a; GET /b. Keep tests green.") == ["GET /a", "POST /a", "GET /b"]
    assert listed("Hello: one, two") == []
    events = [{"id": "u0", "role": "user", "text": "Work through these in order: alpha, beta, gamma."}]
    for i in range(40):
        text = "alpha is done." if i == 5 else ("We will finish beta later." if i == 6 else f"Step {i} of the work.")
        events.append({"id": f"a{i}", "role": "assistant", "text": text + " " + "padding words here " * 12})
        events.append({"id": f"u{i + 1}", "role": "user", "text": "go on " * 20})
    s = loader.from_events(events, id="feat", window=1500, user="Dana")
    _, requests, comps = run(s, ProgressHarness(), OfflineModel(players=[sectioned.offline_play]))
    assert comps
    listing = next(m for r in requests for m in r if m.tag == "features")
    items = json.loads(listing.parts[1].text)
    assert [(i["feature"], i["passes"]) for i in items] == [("alpha", True), ("beta", False), ("gamma", False)]


def test_decisions_with_their_reasons_come_back_word_for_word_whatever_the_writer_does():
    """progress_harness's decisions are the harness's copy of the user's words: a writer under the realistic stress
    profile (which paraphrases, drops and blurs) cannot lose them; a reason in the next sentence comes along."""
    from bench.harness.messages import make
    msgs = [make(TOK, id="u", role="user", tag="user", text="Keep REST for the public API; we rejected gRPC because "
                 "proxies cannot do HTTP/2. One decision before you start: use logical replication, not pg_dump. "
                 "The downtime budget is 30 seconds. Hi there, the build is green. Keep going with the queue, nothing to do.")]
    assert [s for _, s in decisions(msgs)] == [
        "Keep REST for the public API; we rejected gRPC because proxies cannot do HTTP/2.",
        "One decision before you start: use logical replication, not pg_dump. The downtime budget is 30 seconds."]
    s = _with_rules()
    stressed = OfflineModel(ModelConfig(model="offline:realistic"), players=[sectioned.offline_play])
    _, requests, comps = run(s, ProgressHarness(), stressed)
    assert comps and all(c["ok"] for c in comps)
    for k in range(1, len(comps) + 1):
        first = next(r for r in requests if any(m.id == f"summary-{k}" for m in r))
        kept = [m for m in first if m.tag == "decisions"]
        assert len(kept) == 1 and "#3: Use cursor pagination, not offset pagination: offsets skip rows." in kept[0].text
        assert [m.tag for m in first[1:5]] == ["spec", "summary", "decisions", "features"]
        assert_paired(first)
