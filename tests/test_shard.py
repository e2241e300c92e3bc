"""shard=I/N and `compaction-bench merge`: N shards merged are the unsharded run, up to timings; shards
of different settings, a shard twice or missing, and bad specs are one line and exit 2."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench.cli import main as cli
from bench.results.store import read_csv

RUN = ["suite=smoke", "strategies=[naive,truncate]", "stress=[]", "window=4000"]


def timeless(path: Path) -> str:
    """A file's text with its timings blanked (wall_s in summary.csv, latency_s in the logs)."""
    text = path.read_text(encoding="utf-8")
    if path.name == "summary.csv":
        rows = read_csv(path)
        return json.dumps([{k: v for k, v in r.items() if k != "wall_s"} for r in rows])
    return re.sub(r'"latency_s": [0-9.e-]+', '"latency_s": 0', text)


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shards")
    assert cli(["run", *RUN, f"out={tmp / 'whole'}"]) == 0
    for i in (1, 2, 3):
        assert cli(["run", *RUN, f"shard={i}/3", f"out={tmp / f's{i}'}"]) == 0
    return tmp


def test_merged_shards_equal_the_unsharded_run(shards, capsys):
    sizes = [len(read_csv(shards / f"s{i}" / "summary.csv")) for i in (1, 2, 3)]
    assert sum(sizes) == len(read_csv(shards / "whole" / "summary.csv")) == 6 and min(sizes) == 2
    assert cli(["merge", *(str(shards / f"s{i}") for i in (3, 1, 2)), "--out", str(shards / "merged")]) == 0
    for name in ("summary.csv", "checks.csv", "requests.jsonl", "compactions.jsonl", "scenarios.csv"):
        assert timeless(shards / "merged" / name) == timeless(shards / "whole" / name), name
    whole = (shards / "whole" / "report.md").read_text().splitlines()[1:]
    merged = (shards / "merged" / "report.md").read_text().replace(str(shards / "merged"), str(shards / "whole"))
    assert merged.splitlines()[1:] == whole      # up to the title and the folder the viewer hint names
    assert not (shards / "merged" / "shard.json").exists()
    # the merged folder resumes as the unsharded run: nothing left to do
    capsys.readouterr()
    assert cli(["run", *RUN, f"out={shards / 'merged'}"]) == 0
    assert "6 of 6 cells already done" in capsys.readouterr().err


def test_merge_refuses_what_is_not_one_sweep(shards, tmp_path, capsys):
    s = [str(shards / f"s{i}") for i in (1, 2, 3)]
    other = tmp_path / "other"
    assert cli(["run", *RUN[:-1], "window=4200", "shard=3/3", f"out={other}"]) == 0
    cases = [
        ([s[0], s[1], str(other)], "made with other settings than", "window"),
        ([s[0], s[1], s[1]], "are both shard 2/3", ""),
        ([s[0], s[1]], "shard(s) 3 of 3 not given", ""),
        ([s[0], s[1], str(shards / "whole")], "not a shard (no shard.json", ""),
    ]
    for i, (dirs, said, also) in enumerate(cases):
        capsys.readouterr()
        assert cli(["merge", *dirs, "--out", str(tmp_path / f"m{i}")]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and said in err and also in err and "Traceback" not in err, err
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    assert cli(["merge", *s, "--out", str(tmp_path / "full")]) == 2
    assert "is not empty" in capsys.readouterr().err


def test_an_unfinished_shard_is_refused(shards, tmp_path, capsys):
    import shutil

    cut = tmp_path / "cut"
    shutil.copytree(shards / "s2", cut)
    lines = (cut / "summary.csv").read_text().splitlines(keepends=True)
    (cut / "summary.csv").write_text("".join(lines[:-1]))
    assert cli(["merge", str(shards / "s1"), str(cut), str(shards / "s3"), "--out", str(tmp_path / "m")]) == 2
    assert "shard 2/3 is unfinished (1 of 2 cells missing)" in capsys.readouterr().err


@pytest.mark.parametrize("spec", ["0/4", "5/4", "x", "1/0", "2"])
def test_a_bad_shard_spec_is_one_line(spec, tmp_path, capsys):
    assert cli(["run", *RUN, f"shard={spec}", f"out={tmp_path / 'r'}"]) == 2
    err = capsys.readouterr().err
    assert "shard: must be I/N" in err and len(err.strip().splitlines()) == 1


def test_a_shard_folder_does_not_resume_as_another_shard(shards, tmp_path, capsys):
    import shutil

    d = tmp_path / "s1"
    shutil.copytree(shards / "s1", d)
    assert cli(["run", *RUN, "shard=2/3", f"out={d}"]) == 2
    assert "holds shard 1/3 of another plan" in capsys.readouterr().err
