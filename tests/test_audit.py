"""`compaction-bench scenarios audit`: the oracle, truncate and the adversaries on a scenario set, one
table, an exit code that agrees with it, and one line per bad input."""
from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
from pathlib import Path

import pytest

from bench.audit import ADVERSARIES, HEADLINE, assess, trade

ROOT = Path(__file__).resolve().parent.parent
HAND = ROOT / "src" / "bench" / "scenarios" / "hand"


def cli(*args: str, cwd: Path) -> tuple[int, str, str]:
    from bench.cli import main

    out, err, here = io.StringIO(), io.StringIO(), os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.chdir(here)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def hand(tmp_path_factory) -> Path:
    """Copies of the hand scenarios (outside the project, so held to problems, not warnings)."""
    d = tmp_path_factory.mktemp("hand")
    for f in HAND.glob("*.yaml"):
        shutil.copy(f, d / f.name)
    return d


@pytest.fixture(scope="module")
def audited(hand, tmp_path_factory):
    """One audit of the hand scenarios, its results kept (--out) so later tests reuse the cells."""
    out = tmp_path_factory.mktemp("audit") / "run"
    code, stdout, stderr = cli("scenarios", "audit", str(hand), "--out", str(out), "--by-scenario", cwd=hand)
    return code, stdout, stderr, out


ROW = re.compile(r"^(\w+)\s+(\w+)(?: \(lower is better\))?\s+(-?[\d.]+)\s+(-?[\d.]*)\s+(-?[\d.]+)\s+([-+][\d.]+)\s+"
                 r"([-+][\d.]+)?\s*(caught|not told apart|overflows)?( \[target\])?$")
# an adversary judged against truncate (no oracle column, no gap): truncate, it, the difference, a verdict
VS = re.compile(r"^(\w+)\s+(\w+)(?: \(lower is better\))?\s+(-?[\d.]+)\s+(-?[\d.]+)\s+([-+][\d.]+)\s*"
                r"(worse than truncate|not worse than truncate)?( \[target\])?$")
PAYS = {a.name for a in ADVERSARIES if a.pays and not a.pareto}
PRICED = {a.name for a in ADVERSARIES if a.pareto}      # cost or cache, judged beside retention against truncate
# a priced adversary's rows: every column, and a verdict against truncate
PRICE_ROW = re.compile(r"^(\w+)\s+(\w+)(?: \(lower is better\))?\s+(-?[\d.]+)\s+(-?[\d.]+)\s+(-?[\d.]+)\s+([-+][\d.]+)\s+"
                       r"([-+][\d.]+)\s*(worse than truncate|not worse than truncate|cheaper than truncate|"
                       r"more cached than truncate|no gain on truncate)?( \[target\])?$")


def table_rows(stdout: str) -> list[tuple]:
    return [m.groups() for m in map(ROW.match, stdout.splitlines())
            if m and m.group(1) != "adversary" and m.group(1) not in PRICED]


def vs_rows(stdout: str) -> list[tuple]:
    return [m.groups() for m in map(VS.match, stdout.splitlines()) if m and m.group(1) in PAYS]


def price_rows(stdout: str) -> list[tuple]:
    return [m.groups() for m in map(PRICE_ROW.match, stdout.splitlines()) if m and m.group(1) in PRICED]


def verdicts(stdout: str) -> dict[str, bool]:
    return {m.group(1): m.group(2) == "caught"
            for m in re.finditer(r"^(\w+): (caught|NOT caught)\b", stdout, re.M)}


def test_audit_prints_the_table_and_its_exit_code_agrees(audited):
    code, stdout, stderr, _ = audited
    assert code in (0, 1), stderr
    assert "Traceback" not in stderr
    assert "adversary" in stdout and "oracle" in stdout and "truncate" in stdout and "verdict" in stdout
    rows, against = table_rows(stdout), vs_rows(stdout)
    names = {a.name for a in ADVERSARIES}
    assert {r[0] for r in rows} == names - PAYS - PRICED and {r[0] for r in against} == PAYS
    priced = price_rows(stdout)
    assert {r[0] for r in priced} == PRICED
    for adv, metric, base, value, vs, verdict, _ in against:      # judged against truncate, run without markers
        assert abs(float(value) - float(base) - float(vs)) < 2e-3
        if metric != "overflow_requests":
            worse = -float(vs) if HEADLINE[metric] else float(vs)
            assert (verdict == "worse than truncate") == (worse >= 0.1 - 1e-3), (adv, metric, vs, verdict)
    # every verdict in the table follows from its numbers (gap = adversary - oracle, default gap 0.1)
    for adv, metric, oracle, _, value, gap, _, verdict, _ in rows:
        assert abs(float(value) - float(oracle) - float(gap)) < 2e-3
        if metric == "overflow_requests":
            assert (verdict == "overflows") == (float(value) > 0)
            continue
        worse = -float(gap) if HEADLINE[metric] else float(gap)
        assert (verdict == "caught") == (worse >= 0.1 - 1e-3), (adv, metric, gap, verdict)
    # the per-adversary verdicts follow from the target rows; the exit code from those
    got = verdicts(stdout)
    assert set(got) == names
    for a in ADVERSARIES:
        if a.pareto:   # cheaper or more cached than truncate only by knowing less: its loss reaches the gap
            table = {r[1]: float(r[6]) for r in priced if r[0] == a.name}
            gained = table.get("cost_usd", 0) < 0 or table.get("cache_hit_rate", 0) > 0
            loss = -sum(table[m] for m in a.pays if m in table)
            assert got[a.name] == (not gained or loss >= 0.1 - 3e-3), (a.name, table)
            continue
        if a.pays:     # what it loses on the metrics it pays with must exceed what it gains on its target
            table = {r[1]: float(r[4]) for r in against if r[0] == a.name}
            sign = lambda m: 1 if HEADLINE[m] else -1   # noqa: E731
            net = -sum(sign(m) * table[m] for m in a.pays if m in table) - sum(sign(m) * table[m] for m in a.targets
                                                                                if m in table)
            assert got[a.name] == (net >= 0.1 - 3e-3), (a.name, net)
            continue
        target = [r for r in rows if r[0] == a.name and r[8] and r[1] != "overflow_requests"]
        caught = any(r[7] == "caught" for r in target)
        if a.overflow:
            caught = caught and any(r[0] == a.name and r[1] == "overflow_requests" and r[7] == "overflows"
                                    for r in rows)
        assert got[a.name] == caught, a.name
    missed = [n for n, ok in got.items() if not ok]
    assert code == (1 if missed else 0)
    for n in missed:
        assert f"not caught: {n}:" in stderr
    assert ("every adversary caught" in stdout) == (not missed)


def test_stop_compacting_overflows_and_is_caught_on_the_hand_scenarios(audited):
    _, stdout, _, _ = audited
    rows = {(r[0], r[1]): r for r in table_rows(stdout)}
    assert float(rows[("stop_compacting", "overflow_requests")][4]) > 0
    assert float(rows[("stop_compacting", "overflow_requests")][3]) == 0   # truncate never overflows
    assert verdicts(stdout)["stop_compacting"]


def test_by_scenario_breakdown(audited, hand):
    _, stdout, _, _ = audited
    for a in ADVERSARIES:
        assert f"{a.name} by scenario" in stdout
    block = stdout.split("token_bag by scenario")[1].split("by scenario")[0]
    for f in hand.glob("*.yaml"):
        assert f.stem in block


def test_a_larger_gap_leaves_adversaries_uncaught_exit_1_reusing_the_cells(audited, hand):
    _, _, _, out = audited
    code, stdout, stderr = cli("scenarios", "audit", str(hand), "--out", str(out), "--min-gap", "5", cwd=hand)
    assert code == 1
    assert "already in" in stderr and "[1/" not in stderr      # nothing replayed again
    got = verdicts(stdout)
    assert not any(got[a.name] for a in ADVERSARIES if not a.pays)     # judged against the oracle: all missed
    for a in ADVERSARIES:           # a trader is still caught when it gains nothing on its target
        if a.pays and not a.pareto and got[a.name]:
            gain = re.search(rf"^{a.name}: caught: .* and gains (-?[\d.]+) on", stdout, re.M)
            assert gain and float(gain.group(1)) <= 0, a.name
    assert "adversaries not caught" in stdout
    lines = [line for line in stderr.splitlines() if line.startswith("not caught: ")]
    assert {line.split(":")[1].strip() for line in lines} == {a.name for a in ADVERSARIES if not got[a.name]}
    assert any("(its target)" in line and "needs 5" in line for line in lines)


def test_assess_names_the_metric_the_set_cannot_tell():
    base = {"scenario": "s", "writer": "offline", "window": "100", "seed": "0"}
    rows = [{**base, "strategy": "full", "goal_retention": "1", "fact_retention": "1", "overflow_requests": "3"},
            {**base, "strategy": "truncate", "goal_retention": "0.5", "fact_retention": "0.5",
             "overflow_requests": "0"}]
    for a in ADVERSARIES:
        rows.append({**base, "strategy": a.name, "goal_retention": "0.95", "fact_retention": "0.2",
                     "overflow_requests": "0"})
    _, misses, _ = assess(rows, 0.1)
    assert not misses["token_bag"]                           # fact_retention falls 0.8
    assert any(m.startswith("goal_retention (its target): 0.950") for m in misses["user_tail"])
    assert any(m.startswith("constraint_fidelity (its target): the set has no items")
               for m in misses["restore_at_compaction"])
    assert any("overflow_requests" in m for m in misses["stop_compacting"])   # caught on facts, but no overflow


@pytest.mark.parametrize("args, expect", [
    (["nope.yaml"], "nope.yaml: no scenario files found"),
    (["--min-gap", "-1"], "--min-gap: must be a positive number"),
    (["--min-gap", "abc"], "scenarios audit: argument --min-gap: invalid float value: 'abc'"),
    (["--frobnicate"], "scenarios audit: unrecognized arguments: --frobnicate"),
])
def test_bad_input_is_one_line_exit_2(args, expect, hand):
    code, stdout, stderr = cli("scenarios", "audit", *args, cwd=hand)
    assert code == 2 and "Traceback" not in stderr
    assert stderr.strip().splitlines() == [stderr.strip()] and stderr.strip().startswith(expect)


def test_a_broken_scenario_gets_one_line_per_problem(hand, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text((hand / "pr-queue-small.yaml").read_text().replace("role: tool", "role: robot", 1)
                   .replace("window: 4500", "window: -1"))
    code, _, stderr = cli("scenarios", "audit", str(bad), cwd=tmp_path)
    assert code == 2 and "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) >= 2 and all(line.startswith(f"{bad}:") for line in lines)


def test_sessions_that_fit_the_window_are_left_out_like_the_headline_means():
    """The session decides (`needs_compaction`), not the adversary's own compactions."""
    base = {"writer": "offline", "window": "100", "seed": "0"}
    rows = []
    for s, adv_goal, comps, needs in (("a", "0.2", "3", "1"), ("b", "1", "1", "0")):
        rows.append({**base, "scenario": s, "strategy": "full", "oracle": "1", "compactions": "0",
                     "needs_compaction": needs, "goal_retention": "1"})
        rows.append({**base, "scenario": s, "strategy": "user_tail", "oracle": "0", "compactions": comps,
                     "needs_compaction": needs, "goal_retention": adv_goal})
    lines, misses, detail = assess(rows, 0.1)
    goal = next(x for x in lines if x.adversary == "user_tail" and x.metric == "goal_retention")
    assert goal.scenarios == 1 and abs(goal.value - 0.2) < 1e-9 and goal.caught
    assert set(detail["user_tail"]) == {"a"}
    rows = [r for r in rows if r["scenario"] == "b"]
    _, misses, _ = assess(rows, 0.1)
    assert misses["user_tail"] == ["the sessions of this set fit the window (no strategy needs to compact), so the "
                                   "set cannot tell it from the oracle"]


def test_label_all_is_caught_when_what_it_loses_exceeds_what_it_gains_and_not_when_labels_cost_nothing():
    """label_all is judged against truncate on the run without markers: caught when the user's rules and
    mission it disowned cost more than the payloads its labels hide; a scorer that credited the user's
    words under another source's label (constraint and goal as truncate's) would let it through."""
    base = {"writer": "offline", "window": "100", "seed": "0", "compactions": "3", "oracle": "0"}
    marked = [{**base, "scenario": "s", "strategy": "full", "oracle": "1", "goal_retention": "1"}]

    def unmarked(goal: str, constraint: str, leak: str) -> list[dict]:
        return [{**base, "scenario": "s", "strategy": "truncate", "goal_retention": "0.55",
                 "constraint_fidelity": "0.25", "provenance_leakage": "0.37"},
                {**base, "scenario": "s", "strategy": "label_all", "goal_retention": goal,
                 "constraint_fidelity": constraint, "provenance_leakage": leak}]

    label_all = next(a for a in ADVERSARIES if a.name == "label_all")
    lines, misses, detail = assess(marked, 0.1, unmarked("0.45", "0.02", "0.16"))
    assert not misses["label_all"]
    loss, gain = trade(label_all, lines)
    assert abs(loss - 0.33) < 1e-9 and abs(gain - 0.21) < 1e-9
    assert abs(detail["label_all"]["s"]["constraint_fidelity"][1] + 0.23) < 1e-9   # by scenario: the gap to truncate
    _, misses, _ = assess(marked, 0.1, unmarked("0.55", "0.25", "0.0"))   # labels that cost nothing
    assert misses["label_all"] == ["against truncate it loses 0.000 on constraint_fidelity + goal_retention and "
                                   "gains 0.370 on provenance_leakage (the loss must exceed the gain by 0.1)"]
    _, misses, _ = assess(marked, 0.1, unmarked("0.50", "0.05", "0.10"))   # pays 0.25, gains 0.27: not enough
    assert misses["label_all"] and misses["label_all"][0].startswith("against truncate it loses 0.250")


def test_the_new_adversaries_are_caught_on_the_metric_they_attack(audited):
    """queue_guesser on goal_retention, harvester on provenance_leakage (with markers), padded on cost and
    cache read beside retention: cheaper and more cached than truncate only by knowing less."""
    _, stdout, _, _ = audited
    rows = {(r[0], r[1]): r for r in table_rows(stdout)}
    assert rows[("queue_guesser", "goal_retention")][7] == "caught" and rows[("queue_guesser", "goal_retention")][8]
    assert rows[("harvester", "provenance_leakage")][7] == "caught" and rows[("harvester", "provenance_leakage")][8]
    priced = {(r[0], r[1]): r for r in price_rows(stdout)}
    assert priced[("padded", "cost_usd")][7] == "cheaper than truncate"
    assert priced[("padded", "cache_hit_rate")][7] == "more cached than truncate"
    got = verdicts(stdout)
    assert got["queue_guesser"] and got["harvester"] and got["padded"]
    assert re.search(r"^padded: caught: cheaper by knowing less", stdout, re.M)


def test_a_cost_adversary_cheaper_at_equal_knowledge_is_not_caught():
    """The Pareto rule: cheaper than truncate while knowing as much is a real gain, so the set cannot
    show what the saving costs: not caught. Knowing less by the gap is caught, and so is no gain at all."""
    base = {"scenario": "s", "writer": "offline", "window": "100", "seed": "0", "compactions": "3", "oracle": "0"}

    def rows(goal: str, cost: str, cache: str) -> list[dict]:
        return [{**base, "strategy": "full", "oracle": "1", "goal_retention": "1", "cost_usd": "1",
                 "cache_hit_rate": "0.9"},
                {**base, "strategy": "truncate", "goal_retention": "0.5", "cost_usd": "0.5", "cache_hit_rate": "0.6"},
                {**base, "strategy": "padded", "goal_retention": goal, "cost_usd": cost, "cache_hit_rate": cache}]

    assert assess(rows("0.5", "0.4", "0.9", ), 0.1)[1]["padded"][0].startswith("cheaper at equal knowledge")
    assert assess(rows("0.35", "0.4", "0.9"), 0.1)[1]["padded"] == []      # cheaper by knowing less
    assert assess(rows("0.5", "0.6", "0.5"), 0.1)[1]["padded"] == []       # no gain at all
