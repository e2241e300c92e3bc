"""import --dataset (issue 27 item 5): every row of a dataset of agent trajectories, read with `datasets` from a
local dataset folder built here (no network), one scenario each, the same as importing the records from a file;
a dataset in no supported format is one line and exit 2."""
from __future__ import annotations

import json

import pytest

from bench.cli import main as cli

datasets = pytest.importorskip("datasets")


def _session(n: int, turns: int = 6) -> dict:
    """A record as OpenAI-chat datasets hold them: messages with tool calls whose keys differ between messages
    (Arrow gives each message every key, as null)."""
    msgs = [{"role": "system", "content": "You are a billing agent."},
            {"role": "user", "content": f"Please refund order #{100 + n}. Never refund more than $50 without asking me."}]
    for t in range(turns):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call-{t}", "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"order": t})}}]})
        msgs.append({"role": "tool", "tool_call_id": f"call-{t}", "name": "lookup", "content": f"order {t}: $12 paid"})
    msgs.append({"role": "assistant", "content": f"Refunded order #{100 + n}."})
    return {"task_id": n, "messages": msgs}


def _saved(tmp_path, rows, name="ds"):
    path = tmp_path / name
    datasets.Dataset.from_list(rows).save_to_disk(str(path))
    return path


def test_every_row_becomes_the_scenario_its_record_makes_from_a_file(tmp_path, capsys):
    rows = [_session(1), _session(2, turns=30)]
    ds = _saved(tmp_path, rows)
    assert cli(["import", "--dataset", str(ds), "--out", str(tmp_path / "out"), "--licence", "MIT"]) == 0
    said = capsys.readouterr().out
    assert f"{ds}: 2 row(s), 2 session(s) imported" in said
    (tmp_path / "recs.json").write_text(json.dumps(rows))
    assert cli(["import", "openai-chat", str(tmp_path / "recs.json"), "--all", "--out", str(tmp_path / "file")]) == 0
    got = sorted((tmp_path / "out").iterdir())
    want = sorted((tmp_path / "file").iterdir())
    assert len(got) == len(want) == 2
    for g, w in zip(got, want):
        a, b = json.loads(g.read_text()), json.loads(w.read_text())
        assert a["events"] == b["events"] and a["window"] == b["window"]    # the nulls Arrow added are gone
        assert a["provenance"]["licence"] == "MIT" and str(ds) in a["provenance"]["source"]
    # --min-tokens leaves the short session out
    assert cli(["import", "--dataset", str(ds), "--out", str(tmp_path / "long"), "--min-tokens", "300"]) == 0
    assert len(list((tmp_path / "long").iterdir())) == 1


def test_a_dataset_in_no_supported_format_is_one_line_and_exit_2(tmp_path, capsys):
    ds = _saved(tmp_path, [{"question": "What is 2+2?", "answer": "4"}] * 3)
    capsys.readouterr()
    assert cli(["import", "--dataset", str(ds), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no supported format" in err[0] and "columns: answer, question" in err[0]
    assert "Traceback" not in err[0] and not (tmp_path / "out").exists()
    assert cli(["import", "claude-code", "--dataset", str(ds), "--out", str(tmp_path / "out")]) == 2
    assert "a row cannot hold a claude-code session" in capsys.readouterr().err
    assert cli(["import", "--dataset", str(tmp_path / "missing"), "--out", str(tmp_path / "out")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_a_split_of_a_saved_dataset_dict_and_a_bad_row_reported_after_the_rest(tmp_path, capsys):
    good = _session(3)
    bad = {"task_id": 9, "messages": [{"role": "user", "content": "hi"}]}   # no assistant turn: not a session
    path = tmp_path / "dd"
    datasets.DatasetDict({"test": datasets.Dataset.from_list([good, bad])}).save_to_disk(str(path))
    assert cli(["import", "--dataset", str(path), "--split", "train", "--out", str(tmp_path / "o")]) == 2
    assert "no split 'train' (it has: test)" in capsys.readouterr().err
    assert cli(["import", "openai-chat", "--dataset", str(path), "--split", "test", "--out", str(tmp_path / "o")]) == 2
    out, err = capsys.readouterr()
    assert "1 session(s) imported, 1 problem(s) below" in out and "row 1" in err
    assert len(list((tmp_path / "o").iterdir())) == 1
