"""The command line end to end, in a temporary directory, as a user runs it."""
from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import yaml

import harden
from bench.scenarios import loader
from bench.results.store import SUMMARY_COLUMNS

ROOT = Path(__file__).resolve().parent.parent
HAND = ROOT / "src" / "bench" / "scenarios" / "hand"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`compaction-bench ARGS` run in this process (same code path as the console script, minus the
    interpreter start-up; tests/harden.py's runner, which also fails on a traceback); the tests that
    need a real process use subprocess themselves."""
    code, out, err = harden.cli(*args, cwd=cwd)
    return subprocess.CompletedProcess(["compaction-bench", *args], code, out, err)


def test_help_is_light(tmp_path):
    code = ("import sys; from bench.cli import main; main(['--help']); "
            "heavy = [m for m in ('litellm', 'pandas', 'matplotlib', 'hydra', 'tiktoken') if m in sys.modules]; "
            "print('HEAVY', heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert "HEAVY []" in out.stdout
    assert "usage: compaction-bench" in out.stdout


def _help_calls() -> list[tuple[str, ...]]:
    """Every command of the CLI's own COMMANDS table, and each sub-command its synopsis names
    (`scenarios list`, `cache stats|clear`), each with --help."""
    import re

    from bench.cli import COMMANDS

    out = []
    for name, command in COMMANDS.items():
        out.append((name, "--help"))
        for line in command.synopsis.splitlines():
            m = re.match(rf"^  {re.escape(name)} ([a-z|]+)(\s|$)", line)
            out += [(name, sub, "--help") for sub in (m.group(1).split("|") if m else [])]
    return out


def test_every_command_and_sub_command_answers_help_with_exit_0(tmp_path):
    calls = _help_calls()
    assert ("scenarios", "audit", "--help") in calls and ("cache", "clear", "--help") in calls
    for args in calls:
        r = cli(*args, cwd=tmp_path)
        assert r.returncode == 0 and r.stdout.strip() and "Traceback" not in r.stderr, (args, r.stderr[-500:])


def test_unknown_command_is_usage_error(tmp_path):
    r = cli("frobnicate", cwd=tmp_path)
    assert r.returncode == 2 and "unknown command 'frobnicate'" in r.stderr and "Traceback" not in r.stderr


def test_validate_good_and_bad(tmp_path):
    ok = cli("scenarios", "validate", str(HAND), cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.count("ok ") >= 2
    bad = tmp_path / "bad.yaml"
    bad.write_text((HAND / "pr-queue-small.yaml").read_text().replace("role: tool", "role: robot", 1)
                   .replace("window: 4500", "window: -1"))
    r = cli("scenarios", "validate", str(bad), cwd=tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) >= 2
    assert all(line.startswith(f"{bad}:") for line in lines)
    assert any("unknown role 'robot'" in line for line in lines)
    assert any("window must be a positive integer" in line for line in lines)


def test_validate_missing_file(tmp_path):
    r = cli("scenarios", "validate", "nope.yaml", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.strip() == "nope.yaml: no scenario files found"


def test_list_and_show(tmp_path):
    r = cli("scenarios", "list", str(HAND), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "pr-queue-small" in r.stdout and "injected-watch" in r.stdout
    s = cli("scenarios", "show", "pr-queue-small", "--dir", str(HAND), cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    assert "window 4500" in s.stdout and "u1" in s.stdout
    missing = cli("scenarios", "show", "nope", "--dir", str(HAND), cwd=tmp_path)
    assert missing.returncode == 2 and "no scenario with id 'nope'" in missing.stderr


def test_run_writes_results(tmp_path):
    out = tmp_path / "res"
    r = cli("run", f"scenarios=[{HAND}]", "strategies=[full,truncate]", f"out={out}", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert f"results: {out}" in r.stdout
    for name in ("config.yaml", "summary.csv", "requests.jsonl", "compactions.jsonl", "report.md"):
        assert (out / name).exists(), name
    rows = list(csv.DictReader((out / "summary.csv").open()))
    assert list(rows[0].keys()) == SUMMARY_COLUMNS
    ids = {loader.load(p).id for p in loader.expand([str(HAND)])}
    assert {(r["scenario"], r["strategy"]) for r in rows} == {(i, s) for i in ids for s in ("full", "truncate")}
    for row in rows:
        assert row["writer"] == "offline" and int(row["requests"]) > 0 and int(row["input_tokens"]) > 0
        assert row["cost_usd"] == "" or float(row["cost_usd"]) >= 0
    trunc = [r for r in rows if r["strategy"] == "truncate"]
    full = {r["scenario"]: r for r in rows if r["strategy"] == "full"}
    for row in trunc:
        assert int(row["compactions"]) >= 1
        assert int(row["input_tokens"]) < int(full[row["scenario"]]["input_tokens"])
    cfg = yaml.safe_load((out / "config.yaml").read_text())
    assert cfg["strategies"] == ["full", "truncate"] and cfg["writer"]["model"] == "offline"


def test_run_same_out_resumes(tmp_path):
    out = tmp_path / "res"
    args = [f"scenarios=[{HAND}/pr-queue-small.yaml]", "strategies=[full]", f"out={out}"]
    assert cli("run", *args, cwd=tmp_path).returncode == 0
    again = cli("run", *args, cwd=tmp_path)
    assert again.returncode == 0 and "1 of 1 cells already done" in again.stderr
    assert len(list(csv.DictReader((out / "summary.csv").open()))) == 1


def test_run_window_override_and_sweep(tmp_path):
    out = tmp_path / "res"
    r = cli("run", "-m", f"scenarios=[{HAND}/pr-queue-small.yaml]", "strategies=[truncate]", "window=3000,6000",
            f"out={out}", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader((out / "summary.csv").open()))
    assert sorted(int(r["window"]) for r in rows) == [3000, 6000]
    comp = {int(r["window"]): int(r["compactions"]) for r in rows}
    assert comp[3000] > comp[6000]


def test_run_bad_input_is_one_line(tmp_path):
    unknown = cli("run", "nonsense_key=3", f"out={tmp_path / 'x'}", cwd=tmp_path)
    assert unknown.returncode == 2 and unknown.stderr.count("\n") == 1 and "Traceback" not in unknown.stderr
    strat = cli("run", "strategies=[nope]", f"scenarios=[{HAND}]", cwd=tmp_path)
    assert strat.returncode == 2 and "unknown strategy 'nope'" in strat.stderr
    param = cli("run", "strategies=[truncate]", "strategy.truncate.target=7", f"scenarios=[{HAND}]", cwd=tmp_path)
    assert param.returncode == 2 and "strategy.truncate" in param.stderr and "target" in param.stderr
    scen = cli("run", "scenarios=[missing/dir]", cwd=tmp_path)
    assert scen.returncode == 2 and "missing/dir: no scenario files found" in scen.stderr


def test_readme_strategy_example_runs_by_dotted_path(tmp_path):
    """The README's starter, saved in a package of the user's own, runs by its dotted class path."""
    block = (ROOT / "README.md").read_text().split("## Writing a strategy", 1)[1].split("```python\n", 1)[1]
    block = block.split("```", 1)[0]
    (tmp_path / "my_pkg").mkdir()
    (tmp_path / "my_pkg" / "__init__.py").write_text("")
    (tmp_path / "my_pkg" / "mine.py").write_text(block)
    out = tmp_path / "res"
    r = subprocess.run([sys.executable, "-m", "bench", "run", f"scenarios=[{HAND}/pr-queue-small.yaml]",
                        "strategies=[my_pkg.mine.MySummary]", f"out={out}"], cwd=tmp_path, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(tmp_path)}, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader((out / "summary.csv").open()))
    assert rows[0]["strategy"] == "my_pkg.mine.MySummary" and int(rows[0]["compactions"]) >= 1


def test_sweeps_over_settings_stay_separate_cells(tmp_path):
    out = tmp_path / "res"
    r = cli("run", "-m", f"scenarios=[{HAND}/injected-watch.yaml]", "strategies=[naive]", "stress=[]",
            "strategy.naive.budget=0.05,0.2", "markers=true,false", f"out={out}", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    labels = sorted(row["strategy"] for row in csv.DictReader((out / "summary.csv").open()))
    assert labels == ["naive[strategy.naive.budget=0.05,markers=False]", "naive[strategy.naive.budget=0.05,markers=True]",
                      "naive[strategy.naive.budget=0.2,markers=False]", "naive[strategy.naive.budget=0.2,markers=True]"]


def test_resuming_with_other_settings_is_refused(tmp_path):
    out = tmp_path / "res"
    args = [f"scenarios=[{HAND}/injected-watch.yaml]", "strategies=[naive]", f"out={out}"]
    assert cli("run", *args, cwd=tmp_path).returncode == 0
    changed = cli("run", *args, "strategy.naive.budget=0.3", cwd=tmp_path)
    assert changed.returncode == 2 and "other settings (strategy.naive.budget)" in changed.stderr
    more = cli("run", f"scenarios=[{HAND}/injected-watch.yaml]", "strategies=[naive,truncate]", f"out={out}",
               cwd=tmp_path)
    assert more.returncode == 0 and "2 of 3 cells already done" in more.stderr   # naive, its offline:realistic cell


def test_bad_setting_values_are_one_line_each(tmp_path):
    cases = {"window=abc": "window: must be a positive integer", "window=0": "window: must be a positive integer",
             "window=1.5": "window: must be", "seed=x": "seed: must be", "concurrency=0": "concurrency: must be",
             "markers=maybe": "markers: must be true or false", "strategies=[]": "strategies: must be a non-empty",
             "encoding=bogus": "unknown tiktoken encoding 'bogus'", "probes.pass_score=abc": "probes.pass_score",
             "writer.retries=-1": "writer.retries: must be"}
    for override, expected in cases.items():
        r = cli("run", f"scenarios=[{HAND}]", override, f"out={tmp_path / 'x'}", cwd=tmp_path)
        assert r.returncode == 2 and expected in r.stderr and "Traceback" not in r.stderr, (override, r.stderr)
    (tmp_path / "file").write_text("")
    r = cli("run", f"scenarios=[{HAND}]", f"out={tmp_path / 'file'}", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("out: cannot write results to")


def test_a_second_run_into_a_busy_folder_is_refused(tmp_path):
    import fcntl

    out = tmp_path / "res"
    out.mkdir()
    with (out / ".lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        r = cli("run", f"scenarios=[{HAND}]", "strategies=[full]", f"out={out}", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.strip() == f"out: another run is writing to {out}; wait for it or choose another out="


def test_unknown_key_and_closed_pipe(tmp_path):
    r = cli("run", "windw=3", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.startswith("overrides: unknown key 'windw'")
    piped = subprocess.run(f"'{sys.executable}' -m bench scenarios list '{HAND}' | head -1", shell=True,
                           cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert piped.stdout.startswith("id") and "Traceback" not in piped.stderr


def test_printed_table_shows_what_tells_cells_apart():
    from bench.results.store import format_table

    rows = [{"scenario": "s", "strategy": "naive", "writer": "offline", "window": w, "seed": "0",
             "compactions": "2", "compaction_failures": f, "goal_retention": "1"} for w, f in (("800", "0"), ("900", "1"))]
    head = format_table(rows).splitlines()[0].split()
    assert "window" in head and "seed" not in head and "compaction_failures" in head
    assert "compaction_failures" not in format_table([{**rows[0]}]).splitlines()[0]


def test_probes_that_could_not_run_are_announced(tmp_path):
    r = cli("run", f"scenarios=[{HAND}/pr-queue-small.yaml]", "strategies=[full]", "agent.model=openai/x",
            "agent.api_base=http://127.0.0.1:9/v1", "agent.retries=0", "agent.timeout=2", f"out={tmp_path / 'r'}",
            cwd=tmp_path)
    assert r.returncode == 1, r.stderr          # every probe failed: the run says so in its exit code
    assert "warning: 2 probe(s) failed to run" in r.stderr and "error: agent/judge: all 2 probes failed" in r.stderr
