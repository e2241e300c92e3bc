"""Writers as an axis: per strategy × writer rows, each writer against a reference with a verdict, compare along
the writer axis, stress-only runs with a headline, and the writer × agent factorial."""
from __future__ import annotations

import pandas as pd
import pytest

from bench.cli import main as cli
from bench.report import factorial as F

pytestmark = pytest.mark.heavy   # whole runs: scheduled first (tests/conftest.py)

SCEN = "scenarios=[scenarios/hand/injected-watch.yaml,scenarios/hand/pr-queue-small.yaml]"


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    out = tmp_path_factory.mktemp("writers") / "run"
    assert cli(["run", "-m", "writer.model=offline,offline:loosen", SCEN, "strategies=[full,naive,truncate]",
                "stress=[]", f"out={out}"]) == 0
    return out


def test_two_writers_get_one_row_per_strategy_and_writer_never_pooled(two, capsys):
    assert cli(["report", str(two)]) == 0
    md = (two / "report.md").read_text()
    first = md.split("## Headline")[1].split("\n## ")[0]
    assert "| naive · offline | 2 |" in first and "| naive · offline:loosen | 2 |" in first   # cells 2, not 4
    assert "| truncate · offline (reference) |" in first and "| naive |" not in first
    decide = md.split("## What to ship")[1].split("\n## ")[0]     # the verdicts: a row per writer there too
    assert "| naive · offline |" in decide and "| naive · offline:loosen |" in decide
    assert "One row per strategy · writer" in decide
    tokens = md.split("## Strategies")[1].split("## ")[0]
    assert "| naive · offline |" in tokens and "| naive · offline:loosen |" in tokens


def test_writers_section_gives_each_writer_against_the_reference_with_a_verdict(two):
    md = (two / "report.md").read_text()
    section = md.split("## Writers\n")[1].split("\n## ")[0]
    assert "against `offline`" in section
    row = next(x for x in section.splitlines() if x.startswith("| naive | offline:loosen | constraint_fidelity |"))
    assert row.rstrip(" |").endswith("worse")          # loosen softens bans: naive keeps them worse
    goal = next(x for x in section.splitlines() if x.startswith("| naive | offline:loosen | goal_retention |"))
    assert goal.rstrip(" |").endswith("tied")
    assert not any(x.startswith("| naive | offline | goal_retention |") for x in section.splitlines())   # not itself


def test_compare_along_the_writer_axis_says_so_and_lists_regressed_cells_first(two, capsys):
    capsys.readouterr()
    assert cli(["compare", str(two), "--writers", "offline,offline:loosen"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("regression: ") and "/naive/offline→offline:loosen/4500: constraint_fidelity" in out[0]
    assert out[-2].startswith("compares writers of one run: offline (base) against offline:loosen (new)")
    assert cli(["compare", str(two), "--writers", "offline:loosen,offline:loosen"]) == 2
    assert cli(["compare", str(two), "--writers", "offline,gpt-9"]) == 2
    assert cli(["compare", str(two)]) == 2
    assert "gpt-9" in capsys.readouterr().err
    assert cli(["compare", str(two), str(two)]) == 0
    assert capsys.readouterr().out.splitlines()[-2].startswith("compares runs: BASE against NEW")


def test_a_stress_only_run_has_a_headline(tmp_path, capsys):
    out = tmp_path / "run"
    assert cli(["run", "-m", "writer.model=offline:loosen,offline:blur", SCEN, "strategies=[naive,truncate]",
                f"out={out}"]) == 0
    text = capsys.readouterr().out
    assert "(no cell" not in text and "naive · offline:loosen" in text and "naive · offline:blur" in text
    md = (out / "report.md").read_text()
    assert "| naive · offline:blur |" in md.split("## The sawtooth")[0]
    decide = md.split("## What to ship")[1].split("\n## ")[0]
    assert "| naive · offline:blur |" in decide and "| naive · offline:loosen |" in decide   # vs truncate
    assert "What to ship: no call" in decide
    assert "ran without `offline` cells" in decide and "no stress writer ran" not in decide
    assert "No truth item was lost at any request of the headline cells" not in md


def test_writer_by_agent_effects_and_a_deterministic_agent_has_no_seed_variance(tmp_path):
    out = tmp_path / "run"
    assert cli(["run", "-m", "writer.model=offline,offline:realistic", "agent.model=offline,offline:blur",
                "agent.seed=0,1", "repeats=2", SCEN, "strategies=[naive]", "stress=[]", f"out={out}"]) == 0
    md = (out / "report.md").read_text()
    section = md.split("## Writer × agent\n")[1].split("\n## ")[0]
    head = next(x for x in section.splitlines() if x.startswith("| strategy | metric |"))
    assert "offline × offline:blur" in head and "interaction" in head
    cols = [c.strip() for c in head.strip("|").split("|")]
    row = next(x for x in section.splitlines() if x.startswith("| naive | constraint_fidelity |"))
    vals = [c.strip() for c in row.strip("|").split("|")]
    assert float(vals[cols.index("writer effect")]) < -0.1        # the realistic writer loses constraints
    var = [x for x in section.splitlines() if x.startswith("| naive | offline") and "| goal_retention |" in x]
    vhead = next(x for x in section.splitlines() if x.startswith("| strategy | writer | agent |"))
    vcols = [c.strip() for c in vhead.strip("|").split("|")]
    parts = [[c.strip() for c in x.strip("|").split("|")] for x in var]
    assert len(parts) == 4 and all(float(p[vcols.index("agent seed")]) == 0 for p in parts)
    assert any(float(p[vcols.index("writer seed")]) > 0 for p in parts)   # the stress profile's seed matters


def frame(rows):
    return pd.DataFrame(rows, columns=["scenario", "strategy", "writer", "seed", "m"])


def test_effects_and_interaction_are_the_factorial_contrasts():
    rows = []
    for s, base in (("a", 0.5), ("b", 0.7)):
        for w, dw in (("W1", 0.0), ("W2", 0.2)):
            for ag, da in (("X", 0.0), ("Y", -0.1)):
                inter = 0.3 if (w, ag) == ("W2", "Y") else 0.0
                rows.append((s, f"naive[agent.model={ag}]", w, 0, base + dw + da + inter))
    fx = F.effects(frame(rows), ["m"], "X").iloc[0]
    assert fx["writer effect"] == pytest.approx(0.35) and fx["agent effect"] == pytest.approx(0.05)
    assert fx["interaction"] == pytest.approx(0.3)


def test_the_variance_split_sees_an_agent_whose_seed_matters_and_says_when_seeds_are_not_crossed():
    rows = [(s, f"naive[agent.seed={a}]", "W", ws, base + 0.1 * a + 0.01 * ws)
            for s, base in (("a", 0.2), ("b", 0.8)) for ws in (0, 1) for a in (0, 1)]
    v = F.variance(frame(rows), ["m"], "X").iloc[0]
    assert v["agent seed"] == pytest.approx(0.0025) and v["writer seed"] == pytest.approx(0.000025)
    assert v["interaction"] == pytest.approx(0.0) and v["session"] == pytest.approx(0.09)
    plain = F.variance(frame([(s, "naive", "W", ws, ws * 0.1) for s in "ab" for ws in (0, 1)]), ["m"], "X")
    assert "agent seed" not in plain.columns and plain.iloc[0]["seeds (writer and agent)"] == pytest.approx(0.0025)


def test_offline_against_a_writer_behind_the_loopback_server(loopback, tmp_path, api_key, capsys):
    """The second writer is real litellm over HTTP; every one of its calls fails, so its compactions fall back
    and the writer axis shows it: its own rows, a worse verdict, and compare's regressed cells first."""
    loopback.fail("500", times=10_000)
    out = tmp_path / "run"
    code = cli(["run", "-m", "writer.model=offline,openai/test", f"writer.api_base={loopback.url}",
                "writer.retries=0", "writer.backoff=0.01", "concurrency=1", "scenarios=[scenarios/hand/pr-queue-small.yaml]",
                "strategies=[naive,truncate]", f"out={out}"])
    assert code == 1 and loopback.calls > 0          # every call of a writer failed: the run says so
    text = capsys.readouterr().out
    assert "naive · offline " in text and "naive · openai/test " in text
    md = (out / "report.md").read_text()
    section = md.split("## Writers\n")[1].split("\n## ")[0]
    assert "against `offline`" in section and "| naive | openai/test | goal_retention |" in section
    assert cli(["compare", str(out), "--writers", "offline,openai/test"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("regression: pr-queue-small/naive/offline→openai/test/")
    assert lines[-2].startswith("compares writers of one run: offline (base) against openai/test (new)")


def test_the_console_gives_the_writer_by_agent_effects(tmp_path, capsys):
    out = tmp_path / "run"
    assert cli(["run", "-m", "writer.model=offline,offline:blur", "agent.model=offline,offline:blur",
                "scenarios=[scenarios/hand/pr-queue-small.yaml]", "strategies=[naive]", "stress=[]", f"out={out}"]) == 0
    text = capsys.readouterr().out.split("writer × agent (main effects and interaction")[1]
    row = next(x.split() for x in text.splitlines() if x.startswith("naive") and " goal " in f" {x} ")
    assert float(row[2]) < 0 and float(row[3]) == 0            # the blurring writer loses the goal; the agent does not
