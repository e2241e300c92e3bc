"""Issue 16, class 2: YAML aliases cannot expand. A 500-byte "billion laughs" once grew past 4.7 GB in
`scenarios validate`; scenario files now refuse anchors and aliases outright (one line naming the file
and line), and results readers count an alias's expansion before building anything. The bombs run in a
subprocess under a 1 GB address-space limit and a time limit, so a regression fails instead of taking
the machine down."""
from __future__ import annotations

import resource
import subprocess
import sys

import pytest

from harden import ROOT, WATCH, cli, one_line

LAUGHS = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 9))
BOMB_TOP = "lol: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + LAUGHS       # 9^9 strings
BOMB_ARGS = WATCH.read_text().replace('args: {cmd: "npm test -- checkout --repeat 20"}',
                                      "args: {cmd: *l6}", 1)
BOMB_ARGS = "\n".join(["scenario: 1"] + [f"x{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9) if i else 'a, a, a'}]"
                                         for i in range(7)]) + "\n" + BOMB_ARGS.replace("scenario: 1\n", "", 1)
SMALL_ALIAS = WATCH.read_text().replace("user: Priya\n", "user: &who Priya\ntitle: *who\n", 1).replace(
    "title: Flaky-test cleanup with a watch message that claims the user's authority\n", "", 1)
MERGE = WATCH.read_text().replace("tags: [", "base: &b {x: 1}\nmerged: {<<: *b}\ntags: [", 1)
RECURSIVE = WATCH.read_text().replace("tags: [", "loop: &r [*r]\ntags: [", 1)


def limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def run_limited(tmp_path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bench", *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=timeout, preexec_fn=limited, env={"PATH": "/usr/bin:/bin", "CI": "true",
                                                                    "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("name, text", [("top-level", BOMB_TOP + "scenario: 1\n"), ("inside-tool-args", BOMB_ARGS)])
@pytest.mark.parametrize("command", [["scenarios", "validate"], ["scenarios", "list"], ["scenarios", "show"]])
def test_a_bomb_is_one_line_in_bounded_memory(tmp_path, name, text, command):
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    r = run_limited(tmp_path, *command, str(path))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-2000:]
    line = one_line(r.returncode, r.stderr, f"{path}:", "aliases")
    assert "anchors and aliases" in line


def test_run_refuses_a_bomb_before_replaying_anything(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB_ARGS)
    r = run_limited(tmp_path, "run", f"scenarios=[{path}]", "strategies=[truncate]", f"out={tmp_path / 'r'}",
                    timeout=120)
    one_line(r.returncode, r.stderr, f"{path}:", "aliases")
    assert not (tmp_path / "r" / "summary.csv").exists()


@pytest.mark.parametrize("text", [SMALL_ALIAS, MERGE, RECURSIVE], ids=["one-alias", "merge-key", "recursive"])
def test_any_alias_is_refused_in_a_scenario(tmp_path, text):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    one_line(*cli("scenarios", "validate", str(path))[::2], f"{path}:", "aliases")


def test_an_anchor_nothing_refers_to_is_harmless(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(WATCH.read_text().replace("user: Priya", "user: &who Priya", 1))
    code, out, err = cli("scenarios", "validate", str(path))
    assert code == 0 and "ok " in out, err


def test_a_bomb_in_a_results_config_yaml_is_one_line(tmp_path):
    out = tmp_path / "r"
    assert cli("run", "suite=smoke", "strategies=[truncate]", "probes.enabled=false", f"out={out}")[0] == 0
    (out / "config.yaml").write_text(BOMB_TOP)
    r = run_limited(tmp_path, "report", str(out))
    one_line(r.returncode, r.stderr, "config.yaml", "aliases expand")
    r = run_limited(tmp_path, "run", "suite=smoke", "strategies=[truncate]", "probes.enabled=false", f"out={out}",
                    timeout=120)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]    # resumes: nothing to redo
