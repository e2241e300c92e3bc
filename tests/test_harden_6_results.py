"""Issue 16, class 6: no lost or corrupt data. `import --all` gives every session its own file even when
sessions share an id; a summary row is whole or absent, and resume drops a row that is not (cut after
the key, cut inside it, two rows glued, garbage in a number, a cut header) and reruns its cell, ending
with the same scores as a run that was never interrupted, also after a real kill."""
from __future__ import annotations

import copy
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from harden import HAND, ROOT, cli
from transcripts import OPENHANDS, TAU, needs_data

pytestmark = pytest.mark.heavy   # whole runs: scheduled first (tests/conftest.py)

RUN = ["suite=smoke", "strategies=[truncate,context_editing]", "probes.enabled=false", "concurrency=1"]
SCORES = ["goal_retention", "constraint_fidelity", "fact_retention", "input_tokens", "compactions"]


@needs_data
def test_import_all_gives_sessions_that_share_an_id_their_own_files(tmp_path):
    records = json.loads(TAU.read_text())[:1] * 24          # 24 trials of one task: one id
    src = tmp_path / "trials.json"
    src.write_text(json.dumps(records))
    code, out, err = cli("import", "openai-chat", str(src), "--all", "--out", str(tmp_path / "s"))
    assert code == 0, err
    files = sorted((tmp_path / "s").glob("*.json"))
    assert len(files) == 24 and out.count("wrote ") == 24 and "23 session(s) share an id" in out
    ids = {json.loads(f.read_text())["id"] for f in files}
    assert len(ids) == 24
    code, _, err = cli("scenarios", "validate", *map(str, files))
    assert code == 0, err


@needs_data
def test_openhands_records_of_one_instance_get_their_own_files(tmp_path):
    first = json.loads(OPENHANDS.read_text().splitlines()[0])
    first["history"] = first["history"][:40]
    src = tmp_path / "runs.jsonl"
    src.write_text("\n".join(json.dumps(copy.deepcopy(first)) for _ in range(3)) + "\n")
    code, out, err = cli("import", "openhands", str(src), "--all", "--id", "oh", "--out", str(tmp_path / "s"))
    assert code == 0, err
    assert len(list((tmp_path / "s").glob("*.json"))) == 3 and "2 session(s) share an id" in out


@pytest.fixture(scope="module")
def clean(tmp_path_factory):
    """An uninterrupted run: what every damaged-and-resumed folder must end up as."""
    out = tmp_path_factory.mktemp("clean") / "run"
    code, _, err = cli("run", *RUN, f"out={out}")
    assert code == 0, err
    return out


def finished_run(clean, tmp_path):
    """A copy of the uninterrupted run, to damage: the files a fresh run with RUN writes (the run is
    deterministic, and the folder its config.yaml names is not a setting resume compares), without running
    it again for every test."""
    out = tmp_path / "run"
    shutil.copytree(clean, out)
    return out


def scores(out):
    with (out / "summary.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    return sorted(tuple(r[c] for c in ["scenario", "strategy", *SCORES]) for r in rows)


def whole(out):
    text = (out / "summary.csv").read_text()
    rows = list(csv.reader(text.splitlines()))
    return text.endswith("\n") and all(len(r) == len(rows[0]) for r in rows)


def damage(text: str, how: str) -> str:
    lines = text.splitlines(keepends=True)
    last = lines[-1]
    if how == "cut-after-key":
        return "".join(lines[:-1]) + ",".join(last.split(",")[:6])
    if how == "cut-inside-key":
        return "".join(lines[:-1]) + last[:12]
    if how == "glued":
        return "".join(lines[:-2]) + lines[-2].rstrip("\n") + last
    if how == "garbage-number":
        cells = last.split(",")
        cells[11] = "0.5x"
        return "".join(lines[:-1]) + ",".join(cells)
    if how == "cut-header":
        return lines[0][:30]
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["cut-after-key", "cut-inside-key", "glued", "garbage-number", "cut-header"])
def test_resume_drops_a_row_that_is_not_whole_and_reruns_its_cell(clean, tmp_path, how):
    out = finished_run(clean, tmp_path)
    (out / "summary.csv").write_text(damage((out / "summary.csv").read_text(), how))
    code, _, err = cli("run", *RUN, f"out={out}")
    assert code == 0, err
    assert "incomplete summary row" in err or how == "cut-header"
    assert whole(out) and scores(out) == scores(clean)


def test_report_refuses_a_damaged_summary_in_one_line_and_resume_repairs_it(clean, tmp_path):
    out = finished_run(clean, tmp_path)
    (out / "summary.csv").write_text(damage((out / "summary.csv").read_text(), "glued"))
    code, _, err = cli("report", str(out))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "incomplete row" in err
    assert cli("run", *RUN, f"out={out}")[0] == 0 and cli("report", str(out))[0] == 0


def test_a_cut_log_line_is_pruned_on_resume(clean, tmp_path):
    out = finished_run(clean, tmp_path)
    text = (out / "summary.csv").read_text()
    (out / "summary.csv").write_text("".join(text.splitlines(keepends=True)[:-1]))
    with (out / "requests.jsonl").open("a") as fh:
        fh.write('{"cell": "half a line')
    assert cli("run", *RUN, f"out={out}")[0] == 0
    for line in (out / "requests.jsonl").read_text().splitlines():
        json.loads(line)
    assert scores(out) == scores(clean)


def test_a_killed_run_resumes_to_the_same_results(clean, tmp_path):
    out = tmp_path / "run"
    env = {**os.environ, "CI": "true", "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "bench", "run", *RUN, f"out={out}"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        path = out / "summary.csv"
        if path.exists() and len(path.read_text().splitlines()) >= 3:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    code, _, err = cli("run", *RUN, f"out={out}")
    assert code == 0, err
    assert whole(out) and scores(out) == scores(clean)
    assert len((out / "summary.csv").read_text().splitlines()) == 1 + len(list(HAND.glob("*.yaml"))) * 2


@pytest.mark.parametrize("name, how", [("checks.csv", "cut"), ("checks.csv", "glued"), ("checks.csv", "bad-utf-8"),
                                       ("requests.jsonl", "cut"), ("compactions.jsonl", "glued")])
def test_a_finished_cell_whose_logs_or_checks_are_damaged_runs_again(clean, tmp_path, name, how):
    out = finished_run(clean, tmp_path)
    end = b"\r\n" if name.endswith(".csv") else b"\n"       # the csv module ends rows with CRLF
    raw = (out / name).read_bytes().split(end)
    k = len(raw) // 2
    raw[k] = (raw[k][:len(raw[k]) // 2] if how == "cut" else raw[k] + raw[k + 1] if how == "glued"
              else raw[k].replace(b",", b",\xff", 1))
    if how == "glued":
        del raw[k + 1]
    (out / name).write_bytes(end.join(raw))
    code, _, err = cli("run", *RUN, f"out={out}")
    assert code == 0 and "runs again" in err, err
    assert whole(out) and scores(out) == scores(clean)
    assert cli("report", str(out))[0] == 0


def test_a_log_record_holding_a_line_separator_survives_resume(tmp_path):
    from bench.results.resume import prune_unfinished

    out = tmp_path / "run"
    assert cli("run", f"scenarios=[{HAND / 'pr-queue-small.yaml'}]", "strategies=[truncate]",
               "probes.enabled=false", f"out={out}")[0] == 0
    path = out / "compactions.jsonl"
    text = path.read_text()
    path.write_text(text.replace('"strategy": "truncate"', '"strategy": "truncate", "note": "a\u2028b\x85c"', 1))
    before = path.read_text()
    assert prune_unfinished(out) == 0 and path.read_text() == before


WORKER_HOLDS = """
import fcntl, os, sys, time
from bench.errors import forked_pool, private
fh = private(open(sys.argv[1], "w"))
fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
pool = forked_pool(1)
print(pool.submit(os.getpid).result(), flush=True)
pool.submit(time.sleep, 60)
time.sleep(60)
"""


def test_a_killed_runs_workers_neither_hold_its_lock_nor_outlive_it(tmp_path):
    """The CI failure this guards: a forked worker shared the run's flock, so after a SIGKILL the resumed
    run was told another run was writing to the folder."""
    import fcntl

    lock = tmp_path / ".lock"
    proc = subprocess.Popen([sys.executable, "-c", WORKER_HOLDS, str(lock)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    worker = int(proc.stdout.readline())
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with lock.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)     # free the moment the run is gone
    deadline = time.time() + 30
    while time.time() < deadline and os.path.exists(f"/proc/{worker}") and "Z" not in _state(worker):
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{worker}") or "Z" in _state(worker), "the worker outlived the run"


def _state(pid: int) -> str:
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"
