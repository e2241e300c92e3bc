"""Generators: deterministic per seed, different across seeds, truth checked while writing."""
from __future__ import annotations

import random

import pytest

from bench.scenarios import loader
from bench.errors import BadInput
from bench.cli.scenarios import cmd_generate as main
from bench.scenarios.generators import LIBRARY, generate
from bench.scenarios.generators.builder import Script, write
from bench.scenarios.importers.common import dumps


@pytest.mark.parametrize("name", sorted(LIBRARY))
def test_deterministic_per_seed(name, tmp_path):
    """Small variants (scale 0.15) of every generator: same seed, same bytes; other seed, other bytes."""
    a = write(generate(name, seed=11, scale=0.15), tmp_path / "a").read_bytes()
    b = write(generate(name, seed=11, scale=0.15), tmp_path / "b").read_bytes()
    c = dumps(generate(name, seed=12, scale=0.15).data()).encode()
    assert a == b
    assert a != c
    s = loader.load(tmp_path / "a" / f"{name}.json")
    assert s.window == max(4096, int(LIBRARY[name].window * 0.15)) and s.probes   # the window shrinks too


def test_cli_writes_only_what_is_asked(tmp_path, capsys):
    assert main(["--only", "injection-16k", "subtask-trap-16k", "--scale", "0.2", "--seed", "3", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["injection-16k.json", "subtask-trap-16k.json"]
    assert "wrote" in capsys.readouterr().out
    loader.load_all(loader.expand([str(tmp_path)]))


def test_cli_rejects_unknown_names_and_scales(tmp_path):
    with pytest.raises(BadInput) as exc:
        main(["--only", "nope", "also-nope", "--out", str(tmp_path)])
    assert len(exc.value.problems) == 2 and "unknown scenario 'nope'" in exc.value.problems[0]
    with pytest.raises(BadInput):
        main(["--scale", "0", "--out", str(tmp_path)])


def test_truth_that_is_not_in_the_text_fails_at_once():
    s = Script("x", "x", "U", 1000, [], "sys", random.Random(0))
    u = s.user("Only merge docs PRs.")
    with pytest.raises(AssertionError, match="not in event u1"):
        s.constraint("c1", u, "must", "merge everything", [])
    b = s.background("watch", "The user asks you to deploy.")
    with pytest.raises(AssertionError):
        s.injection("i1", b, ["force-push"])


def test_sizes_track_the_target():
    small = generate("injection-16k", seed=0, scale=0.3)
    big = generate("injection-16k", seed=0, scale=1.0)
    assert small.tokens() < big.tokens()
    assert abs(big.tokens() - LIBRARY["injection-16k"].target) < 0.15 * LIBRARY["injection-16k"].target


@pytest.mark.parametrize("name", [n for n, spec in sorted(LIBRARY.items()) if "migration" in spec.tags])
def test_the_migration_decision_is_stated_once_early(name):
    """Only the user's early message names the copy method: a later step that restated it ('Setting up logical
    replication for auth.') would let a context of the recent steps alone keep the decision (issue 29)."""
    data = generate(name, seed=0, scale=0.15).data()
    events = data["events"]
    for d in data["truth"]["decisions"]:
        at = next(i for i, e in enumerate(events) if e["id"] == d["from"])
        assert at < len(events) // 10
        for key in d["keys"]:
            assert [e["id"] for e in events if key.lower() in (e.get("text") or "").lower()] == [d["from"]]
