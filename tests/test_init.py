"""`compaction-bench init`: the printed commands run the starter offline and gate it, exactly as
printed; the README shows the starter as it is written."""
from __future__ import annotations

import re
import shlex

import pytest
import yaml

from harden import ROOT, cli, one_line


def printed_commands(out: str) -> list[list[str]]:
    return [shlex.split(line.strip())[1:] for line in out.splitlines() if line.startswith("  compaction-bench ")]


@pytest.mark.parametrize("flags, name", [((), "my_summary"), (("--exec",), "my_compactor")])
def test_the_printed_commands_run_the_starter_and_gate_it(tmp_path, flags, name):
    """Python class or external program (--exec): init, then exactly the printed commands, all green."""
    code, out, err = cli("init", *flags, cwd=tmp_path)
    assert code == 0, err
    steps = printed_commands(out)
    assert [s[0] for s in steps] == ["baseline", "run", "compare"]
    for step in steps:
        code, out, err = cli(*step, cwd=tmp_path)
        assert code == 0, (step, err)
    summary = (tmp_path / "results" / "new" / "summary.csv").read_text()
    assert f"pr-queue-small,{name},offline," in summary and "truncate" in summary
    assert not (tmp_path / "results" / "new" / "errors.jsonl").exists()
    assert "no regression" in out


def test_the_starter_writes_a_real_summary_not_a_random_line(tmp_path):
    cli("init", cwd=tmp_path)
    code, _, err = cli("run", "--config-dir", "compaction", "suite=mine", "strategies=[my_summary]", "stress=[]",
                       "probes.enabled=false", "out=r", cwd=tmp_path)
    assert code == 0, err
    first = (tmp_path / "r" / "compactions.jsonl").read_text().splitlines()[0]
    assert "Never merge anything that touches billing/" in first    # the user's constraint, in the summary
    rows = {r.split(",")[1]: r for r in (tmp_path / "r" / "summary.csv").read_text().splitlines()[1:]}
    assert "my_summary" in rows


def test_init_never_overwrites(tmp_path):
    cli("init", cwd=tmp_path)
    code, _, err = cli("init", cwd=tmp_path)
    assert code == 2 and len(err.splitlines()) == 5 and all("exists; nothing was written" in ln for ln in err.splitlines())
    (tmp_path / "f").write_text("x")
    one_line(*cli("init", "f", cwd=tmp_path)[::2], "f", "is a file")


def test_the_workflow_runs_the_printed_commands(tmp_path):
    code, out, _ = cli("init", "repo", cwd=tmp_path)
    flow = yaml.safe_load((tmp_path / "repo" / ".github" / "workflows" / "compaction-bench.yml").read_text())
    runs = [step["run"] for step in flow["jobs"]["compaction"]["steps"] if "run" in step]
    assert [" ".join(["compaction-bench", *s]) for s in printed_commands(out)][1:] == runs[1:3]
    assert out.splitlines().count("  cd repo") == 1


def test_the_readme_shows_the_starter_as_init_writes_it():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Writing a strategy", 1)[1]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert block == (ROOT / "src" / "bench" / "cli" / "templates" / "my_summary.py").read_text(encoding="utf-8")


def test_the_strategy_tables_of_the_readme_and_the_strategy_docs_agree_and_name_every_config():
    def table(text: str) -> str:
        return text[text.index("| name | keeps | drops | costs |"):].split("\n\n", 1)[0]

    readme, docs = (ROOT / "README.md").read_text(encoding="utf-8"), (ROOT / "docs" / "strategies.md").read_text()
    assert table(readme) == table(docs)
    named = {row.split("`")[1] for row in table(readme).splitlines()[2:]}
    configs = {p.stem for p in (ROOT / "src" / "bench" / "conf" / "strategy").glob("*.yaml")}
    adversaries = {"user_tail", "token_bag", "restore_at_compaction", "stop_compacting", "label_all", "doubt_all",
                   "queue_guesser", "harvester", "glossary", "glossary_line", "claims", "all_done", "padded", "naive_hedge", "neither"}   # exploration ones too
    assert named == configs - adversaries
