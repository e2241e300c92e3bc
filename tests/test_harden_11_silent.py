"""Issue 26, accepted invalid input and silent passes: `merge` refuses a shard with a row given twice or a
row of another shard (7 rows for a 6-cell plan once merged), `compare` refuses a summary with a renamed
column or a score that is not a finite number (inf once crashed `--format json`) and says so when NEW
lacks a strategy of BASE, a folder is not extended with cells of another window or suite under a
rewritten config.yaml, a YAML scenario cut short is refused, and a failed compaction's answers are never
replayed from the response cache. One sharded run (two shards of six cells) is made per module."""
from __future__ import annotations

import csv
import json
import shutil

import pytest

from bench.harness.strategy import Compaction, Strategy
from bench.harness.messages import make
from bench.models.cache import ResponseCache
from bench.testing import LoopbackServer
from harden import WATCH, cli, one_line

RUN = ["suite=smoke", "strategies=[truncate,context_editing]", "probes.enabled=false"]


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shards")
    for i in (1, 2):
        code, _, err = cli("run", *RUN, f"shard={i}/2", f"out={tmp / f's{i}'}")
        assert code == 0, err
    code, _, err = cli("merge", str(tmp / "s1"), str(tmp / "s2"), "--out", str(tmp / "merged"))
    assert code == 0, err
    return tmp


def rows(path):
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def write_rows(path, data, columns=None):
    columns = columns or list(data[0])
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=columns)
        w.writeheader()
        w.writerows(data)


def copy(src, dst):
    shutil.copytree(src, dst)
    return dst


# ---- merge -----------------------------------------------------------------------------------------

def test_the_merged_run_has_one_row_per_cell(shards):
    assert len(rows(shards / "merged" / "summary.csv")) == 6


def test_merge_refuses_a_shard_with_a_row_given_twice(shards, tmp_path):
    s1 = copy(shards / "s1", tmp_path / "s1")
    data = rows(s1 / "summary.csv")
    write_rows(s1 / "summary.csv", data + data[:1])
    line = one_line(*cli("merge", str(s1), str(shards / "s2"), "--out", str(tmp_path / "m"))[::2], "summary.csv")
    assert "given twice" in line and not (tmp_path / "m").exists()


def test_merge_refuses_a_row_of_another_shard(shards, tmp_path):
    s1 = copy(shards / "s1", tmp_path / "s1")
    write_rows(s1 / "summary.csv", rows(s1 / "summary.csv") + rows(shards / "s2" / "summary.csv")[:1])
    line = one_line(*cli("merge", str(s1), str(shards / "s2"), "--out", str(tmp_path / "m"))[::2], "summary.csv")
    assert "another shard's" in line


def test_merge_refuses_a_row_of_no_cell_of_the_plan(shards, tmp_path):
    s1 = copy(shards / "s1", tmp_path / "s1")
    extra = dict(rows(s1 / "summary.csv")[0], window="123")
    write_rows(s1 / "summary.csv", rows(s1 / "summary.csv") + [extra])
    line = one_line(*cli("merge", str(s1), str(shards / "s2"), "--out", str(tmp_path / "m"))[::2], "summary.csv")
    assert "no cell of the plan" in line


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "abc"])
def test_merge_refuses_a_score_that_is_not_a_finite_number(shards, tmp_path, value):
    s1 = copy(shards / "s1", tmp_path / "s1")
    data = rows(s1 / "summary.csv")
    data[0]["fact_retention"] = value
    write_rows(s1 / "summary.csv", data)
    line = one_line(*cli("merge", str(s1), str(shards / "s2"), "--out", str(tmp_path / "m"))[::2], "fact_retention")
    assert "not a finite number" in line


# ---- compare ---------------------------------------------------------------------------------------

def changed(shards, tmp_path, edit, name="new"):
    """A copy of the merged run's summary.csv, edited (a function of the rows and the columns)."""
    out = tmp_path / name
    out.mkdir()
    data = rows(shards / "merged" / "summary.csv")
    columns = list(data[0])
    data, columns = edit(data, columns)
    write_rows(out / "summary.csv", data, columns)
    return out


def test_compare_of_a_run_with_itself_passes(shards):
    code, out, err = cli("compare", str(shards / "merged"), str(shards / "merged"))
    assert code == 0, out + err


def test_compare_refuses_a_renamed_baseline_column(shards, tmp_path):
    def rename(data, columns):
        ren = lambda c: "constraint_fidelty" if c == "constraint_fidelity" else c   # noqa: E731
        return [{ren(k): v for k, v in r.items()} for r in data], [ren(c) for c in columns]

    base = changed(shards, tmp_path, rename, "base")
    line = one_line(*cli("compare", str(base), str(shards / "merged"))[::2], "constraint_fidelty")
    assert "did you mean 'constraint_fidelity'" in line


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "markdown"])
@pytest.mark.parametrize("value", ["inf", "nan", "1e999", "abc"])
def test_compare_refuses_a_score_that_is_not_a_finite_number(shards, tmp_path, fmt, value):
    def bad(data, columns):
        data[0]["goal_retention"] = value
        return data, columns

    new = changed(shards, tmp_path, bad)
    line = one_line(*cli("compare", str(shards / "merged"), str(new), "--format", fmt)[::2], "goal_retention")
    assert "not a finite number" in line and "line 2" in line


def test_compare_refuses_a_cell_given_twice(shards, tmp_path):
    new = changed(shards, tmp_path, lambda d, c: (d + d[-1:], c))
    line = one_line(*cli("compare", str(shards / "merged"), str(new))[::2])
    assert "given twice" in line


def test_compare_says_when_new_lacks_a_strategy_of_base(shards, tmp_path):
    new = changed(shards, tmp_path, lambda d, c: ([r for r in d if r["strategy"] == "truncate"], c))
    code, out, _ = cli("compare", str(shards / "merged"), str(new))
    assert code == 0
    assert "note: strategy context_editing (writer offline) is in BASE but not in NEW: none of its 3 cell(s) " \
           "was compared (--all-cells fails on them)" in out
    code, out, _ = cli("compare", str(shards / "merged"), str(new), "--all-cells")
    assert code == 1
    assert "missing from NEW (in BASE; NEW did not run its strategy; --all-cells)" in out
    assert "NEW ran its scenario and strategy" not in out
    code, out, _ = cli("compare", str(shards / "merged"), str(new), "--format", "json")
    assert code == 0 and "context_editing" in " ".join(json.loads(out)["notes"])


def test_json_has_no_infinity_even_when_a_difference_overflows(shards, tmp_path):
    def huge(data, columns):
        for r in data:
            r["cost_usd"] = "1e308"
        return data, columns

    base = changed(shards, tmp_path, lambda d, c: ([dict(r, cost_usd="-1e308") for r in d], c), "base")
    new = changed(shards, tmp_path, huge)
    code, out, err = cli("compare", str(base), str(new), "--format", "json", "--threshold", "cost_usd=0.1")
    assert code in (0, 1) and "Infinity" not in out and "NaN" not in out, err
    json.loads(out)


# ---- a folder of other cells -----------------------------------------------------------------------

@pytest.mark.parametrize("other", [["window=9000"], ["suite=quick"], ["seed=1"], ["-m", "window=4400,9000"]])
def test_a_folder_is_not_extended_with_cells_of_another_window_or_suite(shards, tmp_path, other):
    run = copy(shards / "merged", tmp_path / "run")
    before = {f: (run / f).read_bytes() for f in ("config.yaml", "summary.csv")}
    code, _, err = cli("run", *[a for a in RUN if not a.startswith("suite=") or "suite=quick" not in other],
                       *other, f"out={run}")
    line = one_line(code, err, str(run), "does not plan")
    assert {f: (run / f).read_bytes() for f in before} == before, line


def test_a_folder_is_extended_with_more_strategies_and_resumed(shards, tmp_path):
    run = copy(shards / "merged", tmp_path / "run")
    code, _, err = cli("run", "suite=smoke", "strategies=[truncate,context_editing,masking]", "probes.enabled=false",
                       f"out={run}")
    assert code == 0 and "6 of 9 cells already done" in err, err


# ---- a YAML scenario cut short ------------------------------------------------------------------------

@pytest.mark.parametrize("upto", ["      title: flaky te", "truth:\n  mis", "probes:\n  - {id: p1, at: a6"])
def test_a_yaml_scenario_cut_short_is_refused(tmp_path, upto):
    text = WATCH.read_text(encoding="utf-8")
    path = tmp_path / "cut.yaml"
    path.write_text(text[:text.index(upto) + len(upto)], encoding="utf-8")
    code, _, err = cli("scenarios", "validate", str(path))
    one_line(code, err, str(path))


def test_every_way_of_cutting_a_yaml_scenario_off_mid_line_is_refused(tmp_path):
    """`head -c N` of a scenario for every N at which YAML still reads a mapping: none validates."""
    text = WATCH.read_text(encoding="utf-8")
    path = tmp_path / "cut.yaml"
    accepted = []
    for n in range(len(text) // 3, len(text) - 1, 97):
        if text[n - 1] == "\n":
            continue
        path.write_text(text[:n], encoding="utf-8")
        if cli("scenarios", "validate", str(path))[0] == 0:
            accepted.append(n)
    assert accepted == []


# ---- the response cache never replays a failed compaction ---------------------------------------------

class Rejects(Strategy):
    """Asks the writer, rejects the answer (a failed compaction), then asks once more without reporting a
    compaction: the run's calls and its compaction records cannot be paired one to one."""

    calls_writer = True

    def begin(self, session):
        super().begin(session)
        self.asked = 0

    async def prepare(self):
        if self.size() <= self.trigger() or self.asked >= 2:
            return None
        self.asked += 1
        ask = make(self.session.tok, id=f"ask{self.asked}", role="user", text="Summarise.", tag="instruction")
        await self.session.writer.chat([self.session.system, *self.messages[-4:], ask], max_tokens=60,
                                       purpose="summary")
        if self.asked == 1:
            return Compaction(before=self.size(), after=self.size(), ok=False, error="rejected on purpose")
        return None


def test_a_failed_compactions_answer_is_forgotten_even_when_calls_cannot_be_paired(tmp_path):
    cache = tmp_path / "cache"
    args = [f"scenarios=[{WATCH}]", "window=900", "writer.model=openai/test", "writer.backoff=0.01",
            "concurrency=1", "probes.enabled=false", "strategies=[test_harden_11_silent.Rejects]",
            f"responses.dir={cache}"]
    with LoopbackServer(lifetime=120) as srv:
        code, _, err = cli("run", *args, f"writer.api_base={srv.url}", f"out={tmp_path / 'a'}")
        first = srv.calls
    assert code == 0 and first == 2, err
    comps = [json.loads(x) for x in (tmp_path / "a" / "compactions.jsonl").read_text().splitlines()]
    assert [c["ok"] for c in comps] == [False] and len(comps[0]["calls"]) == 1
    with LoopbackServer(lifetime=120) as srv:          # the rejected answer is asked again, not replayed
        code, _, err = cli("run", *args, f"writer.api_base={srv.url}", f"out={tmp_path / 'b'}")
        assert code == 0 and srv.calls == first, err
    assert len(ResponseCache(cache)) == 0


# ---- baseline ----------------------------------------------------------------------------------------

def test_baseline_prints_no_path_of_its_deleted_scratch_folder(tmp_path):
    code, out, err = cli("baseline", f"scenarios=[{WATCH}]", "strategies=[truncate]", "probes.enabled=false",
                         "--out", str(tmp_path / "b"))
    assert code == 0, err
    assert "baseline-" not in out + err and "report:" not in out and "results:" not in out
    assert str(tmp_path / "b") in out
