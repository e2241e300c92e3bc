"""trigger_at (issue 29 item 5): every writer strategy compacts earlier when asked, never later; a later
value is refused in one line with exit 2; a sweep gives the report a trigger table and figure."""
from __future__ import annotations

import subprocess

from bench.models.offline import OfflineModel
from bench.strategies.naive import Naive
from harden import cli
from test_strategy_common import long_scenario, run


def test_an_earlier_trigger_compacts_earlier_and_more_often():
    s = long_scenario(turns=60)
    _, _, default = run(s, Naive(), OfflineModel())
    early = Naive()
    early.earlier = 0.5
    _, _, sooner = run(s, early, OfflineModel())
    assert default and len(sooner) > len(default)
    assert sooner[0]["before"] < default[0]["before"] and sooner[0]["before"] > s.window * 0.5


def _cli(*args: str, cwd) -> subprocess.CompletedProcess:
    """`compaction-bench run ARGS` in this process (harden.cli: a traceback fails the test), where the report's
    libraries are imported already; a new interpreter would import them again for each run."""
    code, out, err = cli("run", *args, cwd=cwd)
    return subprocess.CompletedProcess(["compaction-bench", "run", *args], code, out, err)


def test_a_later_trigger_is_refused_in_one_line(tmp_path):
    p = _cli("strategies=[naive]", "suite=smoke", "strategy.naive.trigger_at=0.99", f"out={tmp_path / 'r'}",
             cwd=tmp_path)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    lines = [x for x in (p.stderr + p.stdout).splitlines() if x.strip()]
    assert len(lines) == 1 and "strategy.naive.trigger_at" in lines[0] and "only bring compaction earlier" in lines[0]


def test_a_sweep_puts_a_trigger_table_and_figure_in_the_report(tmp_path):
    p = _cli("-m", "trigger_at=0.6,0.8", "strategies=[naive,anchored]", "suite=smoke", "stress=[]",
             "probes.enabled=false", "report.figures=true", f"out={tmp_path / 'r'}", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    report = (tmp_path / "r" / "report.md").read_text()
    assert "## Trigger sweep" in report and "trigger_sweep" in report
    section = report.split("## Trigger sweep")[1].split("\n## ")[0]
    assert "| naive | 0.600 |" in section and "| anchored | 0.800 |" in section
