"""A user's own config folder: strategies, suites and scenarios found by name, and the help and
errors that lead to a command that works."""
from __future__ import annotations

import shutil
import textwrap

import pytest

from harden import HAND, cli, one_line

MINE = '''
from bench.strategy import Compaction, Strategy, drop_oldest


class Keep(Strategy):
    def __init__(self, share: float = 0.5):
        self.share = share

    async def compact(self):
        before = self.size()
        self.messages, dropped = drop_oldest(self.messages, before, int(self.trigger() * self.share))
        return Compaction(before=before, after=self.size(), fields={"share": self.share})
'''


@pytest.fixture
def repo(tmp_path):
    """A user's repository: the strategy module in its config folder, a suite naming a folder of its own."""
    own = tmp_path / "compaction"
    (own / "strategy").mkdir(parents=True)
    (own / "suite").mkdir()
    (own / "sessions").mkdir()
    (own / "user_keep_strategy.py").write_text(textwrap.dedent(MINE))
    (own / "strategy" / "keep.yaml").write_text("_target_: user_keep_strategy.Keep\nshare: 0.5\n")
    (own / "suite" / "mine.yaml").write_text("# @package _global_\nscenarios: [sessions]\n")
    shutil.copy(HAND / "pr-queue-small.yaml", own / "sessions")
    return tmp_path


def test_a_users_strategy_suite_and_scenarios_run_by_name_with_their_keys(repo):
    code, out, err = cli("run", "--config-dir", "compaction", "suite=mine", "strategies=[keep,truncate]",
                         "strategy.keep.share=0.25", "probes.enabled=false", "out=r", cwd=repo)
    assert code == 0, err
    rows = (repo / "r" / "summary.csv").read_text().splitlines()
    assert len(rows) == 3 and sum("pr-queue-small,keep," in r for r in rows) == 1
    assert '"share": 0.25' in (repo / "r" / "compactions.jsonl").read_text()


def test_help_lists_the_users_strategies_with_their_keys(repo):
    code, out, _ = cli("run", "--help", "--config-dir", "compaction", cwd=repo)
    assert code == 0
    assert "keep  " in out and "share=0.5" in out and "mine" in out
    assert "budget=0.1" in out          # the built-in ones too, with their keys
    assert "window: null" in out        # and the run's own keys, explained


@pytest.mark.parametrize("args, says", [
    (["strategies=[kep]"], ["unknown strategy 'kep'", "did you mean keep?"]),
    (["suite=mien"], ["suite=mien", "did you mean mine?"]),
    (["strategy.naive.budgte=1"], ["did you mean strategy.naive.budget?", "takes budget, keep_last, trigger"]),
    (["windw=1"], ["did you mean window?"]),
    (["writer.top_pp=1"], ["+writer.top_pp=VALUE passes an extra setting"]),
])
def test_unknown_names_and_keys_get_a_did_you_mean(repo, args, says):
    code, _, err = cli("run", "--config-dir", "compaction", *args, "out=r", cwd=repo)
    one_line(code, err, *says)


def test_a_missing_config_folder_is_one_line(tmp_path):
    code, _, err = cli("run", "--config-dir", "nowhere", cwd=tmp_path)
    one_line(code, err, "config_dir", "nowhere", "no such folder")


def test_the_add_a_key_hint_leads_to_a_command_that_works(repo):
    """Only a key the strategy's class accepts is offered as +KEY; that command then runs."""
    (repo / "compaction" / "strategy" / "keep.yaml").write_text("_target_: user_keep_strategy.Keep\n")
    code, _, err = cli("run", "--config-dir", "compaction", "suite=mine", "strategies=[keep]",
                       "strategy.keep.share=0.3", "out=r", cwd=repo)
    hint = one_line(code, err, "strategy.keep")
    assert "+strategy.keep.share=VALUE" in hint
    code, _, err = cli("run", "--config-dir", "compaction", "suite=mine", "strategies=[keep]",
                       "+strategy.keep.share=0.3", "probes.enabled=false", "out=r", cwd=repo)
    assert code == 0, err
