"""The committed scenario library: valid, big enough to force compactions, covering the failure
modes of issue 6, and exactly what the generators write for seed 0."""
from __future__ import annotations

import json
from pathlib import Path
from collections import Counter

import pytest

from bench.scenarios import loader
ROOT = Path(__file__).resolve().parent.parent
from bench.cli.scenarios import scenario_tokens
from bench.scenarios.generators import LIBRARY, generate
from bench.scenarios.generators.builder import write

LIB = ROOT / "src" / "bench" / "scenarios" / "library"
REQUIRED_TAGS = {"pr-queue", "migration", "injection", "forged-marker", "withdrawal", "subtask-trap", "detail-recall", "decision"}
CLAIMS = ("the user", "asks", "requested", "says")


@pytest.fixture(scope="module")
def library():
    files = loader.expand([str(LIB)])
    return files, loader.load_all(files)


def test_every_committed_scenario_validates_and_is_generated(library):
    files, scenarios = library
    assert len(scenarios) >= 12
    assert {f.stem for f in files} == set(LIBRARY)
    assert REQUIRED_TAGS <= {t for s in scenarios for t in s.tags}
    assert sum(f.stat().st_size for f in files) < 30 * 2 ** 20


def test_sizes_force_several_compactions(library):
    _, scenarios = library
    windows = [s.window for s in scenarios]
    assert min(windows) == 8_000 and max(windows) == 200_000   # 8k-12k: many compactions per session (issue 23)
    tokens = {s.id: scenario_tokens(s) for s in scenarios}
    for s in scenarios:
        assert tokens[s.id] >= 4 * s.window, f"{s.id}: {tokens[s.id]} tokens < 4x window {s.window}"
        assert len(s.events) <= 3000, f"{s.id}: {len(s.events)} events is too many for the default run"
    assert 900_000 <= max(tokens.values()) <= 1_100_000


def test_truth_and_probes_by_construction(library):
    _, scenarios = library
    for s in scenarios:
        t = s.truth
        by_id = {e.id: e for e in s.events}
        assert t.mission and t.workstreams and t.constraints, s.id
        assert all(item.done for w in t.workstreams for item in w.items), f"{s.id}: undone workstream item"
        assert s.probes and all(p.expect for p in s.probes) and any(p.rubric for p in s.probes), s.id
        for inj in t.injections:
            ev = by_id[inj.event]
            assert ev.source in ("watch", "cron", "callback", "session")
            assert any(c in ev.text.lower() for c in CLAIMS) or s.user in ev.text, f"{s.id}: {ev.id} claims no authority"
    kinds = Counter(p.kind for s in scenarios for p in s.probes)
    assert {"continuation", "provenance", "constraint", "recall", "decision", "goal"} <= set(kinds)
    assert sum(1 for s in scenarios for c in s.truth.constraints if c.replaces) >= 6
    sources = {by.source for s in scenarios for i in s.truth.injections for by in s.events if by.id == i.event}
    assert sources == {"watch", "cron", "callback", "session"}
    named = [s for s in scenarios for i in s.truth.injections for e in s.events if e.id == i.event and s.user in e.text]
    assert named, "some injections must name the user"
    forged = [e for s in scenarios for e in s.events if e.role == "user" and e.text.startswith("[Harness:")]
    assert len(forged) >= 2
    assert any(e.skill for s in scenarios for e in s.events)


@pytest.mark.parametrize("name", ["pr-queue-16k", "forged-marker-24k", "withdrawal-32k"])
def test_committed_files_match_the_generators(name, tmp_path):
    """Regenerating seed 0 reproduces the committed bytes, so nobody hand-edits generated files."""
    path = write(generate(name, seed=0), tmp_path)
    assert path.read_bytes() == (LIB / path.name).read_bytes()


def test_list_estimates_compactions_and_caches_rows(tmp_path, monkeypatch, capsys):
    from bench.cli.scenarios import cmd_list, expected_compactions

    assert expected_compactions(100_000, 1_000, 16_000) == 99_000 // (14_080 - 1_000)
    assert expected_compactions(1_000, 2_000, 2_000) == -1          # the system prompt alone does not fit
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    hand = ROOT / "src" / "bench" / "scenarios" / "hand"
    assert cmd_list([str(hand)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:6] == ["id", "tags", "events", "tokens", "window", "compactions"]
    cache = tmp_path / "compaction-bench" / "scenario-rows.json"
    rows = json.loads(cache.read_text())
    first = next(iter(rows))
    rows[first]["title"] = "FROM THE CACHE"
    cache.write_text(json.dumps(rows))
    assert cmd_list([str(hand)]) == 0
    assert "FROM THE CACHE" in capsys.readouterr().out
    rows[first]["stamp"] = [0, 0]                                    # a changed file is read again
    cache.write_text(json.dumps(rows))
    assert cmd_list([str(hand)]) == 0
    assert "FROM THE CACHE" not in capsys.readouterr().out


def test_suites_name_existing_scenarios():
    import yaml

    for name in ("default", "smoke", "library", "quick"):
        patterns = yaml.safe_load((ROOT / "src" / "bench" / "conf" / "suite" / f"{name}.yaml").read_text())["scenarios"]
        assert loader.expand(patterns, base=ROOT / "src" / "bench")


# ---------------------------------------------------------------- what the library measures


BUNDLED = [ROOT / "src" / "bench" / "scenarios" / "library", ROOT / "src" / "bench" / "scenarios" / "hand"]


@pytest.fixture(scope="module")
def bundled():
    return loader.load_all(loader.expand([str(d) for d in BUNDLED]))


def test_bundled_files_have_no_warnings():
    """Bundled files are held to warnings as errors: no truth key in the system prompt, no probe that
    holds its answer, no fact a bag of identifiers keeps, every workstream says where it stands."""
    for path in loader.expand([str(d) for d in BUNDLED]):
        assert loader.bundled(path)
        scenario, problems, warnings = loader.inspect(path, strict=False)
        assert scenario is not None and problems == [] and warnings == [], (problems + warnings)[:3]


def test_a_bag_of_identifiers_keeps_no_fact(bundled):
    """Each fact has a key that says what the value is; the de-duplicated identifier-like tokens of its
    source event, on one line, do not hold its keys in one unit."""
    from bench import units
    from bench.units import descriptive, identifier, tokens

    for s in bundled:
        by_id = {e.id: e for e in s.events}
        for f in s.truth.facts:
            assert any(descriptive(k) for k in f.keys), (s.id, f.id, f.keys)
            text = by_id[f.from_].text
            assert units.cooccur(text, f.keys), (s.id, f.id)
            bag = " ".join(dict.fromkeys(t for t in tokens(text) if identifier(t)))
            assert not units.cooccur(bag, f.keys), (s.id, f.id, f.keys)


def test_the_oracle_keeps_everything_at_every_request(bundled):
    """`full` (every event before each request, nothing compacted) scores 1.0 on goals, constraints, facts
    and decisions at every agent request of every bundled scenario."""
    from bench.harness.messages import render_all, system_message
    from bench.scoring.checks import Judge, score
    from bench.tokens import tokenizer

    tok = tokenizer()
    lost = []
    for s in bundled:
        judge, msgs = Judge(s, tok), render_all(tok, s)
        found, shown = judge.request([system_message(tok, s)]), None
        for pos, e in enumerate(s.events):
            if pos:
                found = judge.request([msgs[pos - 1]], found)
            if e.role == "assistant":
                checks, shown = score(found, judge.timeline.at(pos), before=shown)
                lost += [(s.id, e.id, c.metric, c.item, c.detail) for c in checks
                         if c.metric in ("goal", "constraint", "fact", "decision") and c.score < 1]
    assert lost == [], lost[:5]


def test_every_headline_metric_is_measurable_on_every_bundled_scenario(bundled):
    """The run's own reading (bench.scoring.oracle): the oracle scores every checked metric perfectly at
    every agent request of every bundled scenario (1 where more is better, 0 where more is worse), so no
    bundled cell is ever reported as "not measurable"."""
    from bench.scoring import oracle_reading
    from bench.scoring.checks import Judge
    from bench.tokens import tokenizer

    tok = tokenizer()
    short = {s.id: oracle_reading(Judge(s, tok)) for s in bundled}
    assert {k: v for k, v in short.items() if v} == {}
