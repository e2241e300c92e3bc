"""Helpers for the hardening tests (issue 16): the CLI in this process, scenario files to break, and the
one-line rule every bad input must meet."""
from __future__ import annotations

import contextlib
import copy
import io
import json
import os
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
HAND = ROOT / "src" / "bench" / "scenarios" / "hand"
WATCH = HAND / "injected-watch.yaml"


def cli(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `compaction-bench ARGS` in this process; a traceback fails the test."""
    from bench.cli import main

    out, err, here = io.StringIO(), io.StringIO(), os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    except SystemExit as exc:   # argparse usage errors
        code = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.chdir(here)
    assert "Traceback" not in err.getvalue(), err.getvalue()
    return code, out.getvalue(), err.getvalue()


def one_line(code: int, err: str, *names: str) -> str:
    """The single stderr line of a bad-input exit; it must name what it is about."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, err
    assert len(lines) == 1, lines
    assert all(n in lines[0] for n in names), (names, lines[0])
    return lines[0]


def scenario(**changes: Any) -> dict[str, Any]:
    """injected-watch as data, with top-level keys replaced."""
    data = yaml.safe_load(WATCH.read_text(encoding="utf-8"))
    data = copy.deepcopy(data)
    data.update(changes)
    return data


def write(path: Path, data: Any) -> Path:
    if path.suffix == ".json":
        path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    else:
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def files_hold(root: Path, secret: str) -> list[Path]:
    """Every file under `root` whose bytes contain `secret` (as UTF-8 or JSON-escaped)."""
    needles = {secret.encode(), json.dumps(secret)[1:-1].encode()}
    return [p for p in root.rglob("*") if p.is_file() and any(n in p.read_bytes() for n in needles)]
