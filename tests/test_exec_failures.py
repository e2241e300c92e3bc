"""exec: an external process that dies, hangs, writes garbage or breaks the protocol fails its own cell with
one clear line naming the cell and the request; every other cell finishes and the run exits 1."""
from __future__ import annotations

import csv
import json
import os
import sys
import time
from pathlib import Path

import pytest

from harden import cli

FAULT = Path(__file__).resolve().parent / "data" / "external_fault.py"
BROKEN = "injected-watch"          # the scenario whose cell each fault breaks
MODES = {   # mode -> (agent request it breaks at, what its line says)
    "kill": (3, "the process was killed by signal 9"),
    "exit": (2, "the process exited with code 3; its last stderr line: 'fault: giving up on purpose'"),
    "hang": (2, "no reply within 3 s (strategy.hang.timeout"),
    "garbage": (2, "its reply is not valid JSON"),
    "unknown": (4, "names unknown message id 'no-such-message'"),
    "untagged": (2, "a message the strategy wrote has no tag"),
    "version": (1, "it speaks protocol version 99; this bench speaks version 1"),
    "late-writer": (3, "it called the writer 1 time(s) but its reply has no \"compaction\" report"),
}


def fault(name: str, mode: str, pids: Path) -> str:
    at, _ = MODES[mode]
    command = ",".join([sys.executable, str(FAULT), mode, BROKEN, str(at), str(pids)])
    timeout = 3 if mode == "hang" else 30       # a loaded machine must not make the others' replies late
    spec = f"_target_:bench.strategies.exec.Exec,command:[{command}],timeout:{timeout},calls_writer:false"
    return f"+strategy.{name}={{{spec}}}"


@pytest.fixture(scope="module")
def faulty_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("faults")
    pids = tmp / "pids"
    names = [m.replace("-", "_") for m in MODES]
    code, out, err = cli("run", "suite=smoke", f"strategies=[truncate,{','.join(names)}]", f"out={tmp / 'run'}",
                         *(fault(n, m, pids) for n, m in zip(names, MODES)))
    return code, err, tmp / "run", pids


def test_each_fault_is_one_line_naming_the_cell_and_the_request(faulty_run):
    code, err, _, _ = faulty_run
    assert code == 1, err
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(errors) == len(MODES), errors
    for mode, (at, says) in MODES.items():
        name = mode.replace("-", "_")
        line = next(ln for ln in errors if f"/{name}/" in ln)
        assert line.startswith(f"error: {BROKEN}/{name}/offline/"), line
        assert f"external strategy python" in line and "external_fault.py" in line, line
        assert f"request {at} " in line or line.rstrip().endswith(f"request {at}") or f"request {at}:" in line, line
        assert says in line, (mode, line)


def test_the_failed_cells_are_recorded_and_every_other_cell_finishes(faulty_run):
    _, _, out, _ = faulty_run
    rows = list(csv.DictReader((out / "summary.csv").open(encoding="utf-8")))
    done = {(r["scenario"], r["strategy"]) for r in rows}
    scenarios = {p.stem for p in (Path(__file__).resolve().parent.parent / "src" / "bench" / "scenarios" / "hand").glob("*.yaml")}
    for mode in MODES:
        name = mode.replace("-", "_")
        assert (BROKEN, name) not in done
        assert {(s, name) for s in scenarios - {BROKEN}} <= done, name   # the same program's other cells ran
    assert {(s, "truncate") for s in scenarios} <= done
    failed = [json.loads(ln) for ln in (out / "errors.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(f["cell"].split("/")[1] for f in failed) == sorted(m.replace("-", "_") for m in MODES)


def test_no_strategy_process_is_left_running(faulty_run):
    _, _, _, pids = faulty_run
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) >= len(MODES) * 3
    deadline = time.time() + 5
    alive = started
    while alive and time.time() < deadline:
        alive = [p for p in alive if _running(p)]
        time.sleep(0.1)
    assert not alive, f"left running: {alive}"


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:   # a zombie is gone for our purpose
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_a_command_that_is_not_a_program_is_bad_input_naming_it(tmp_path):
    code, _, err = cli("run", "suite=smoke", "strategies=[exec]", "strategy.exec.command=[no-such-program-xyz]",
                       f"out={tmp_path / 'r'}")
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1, err
    assert "strategy.exec" in lines[0] and "no-such-program-xyz" in lines[0] and "not a program" in lines[0]


def test_exec_without_a_command_says_how_to_give_one(tmp_path):
    code, _, err = cli("run", "suite=smoke", "strategies=[exec]", f"out={tmp_path / 'r'}")
    assert code == 2 and "command is not set" in err and "strategy.exec.command=" in err, err
