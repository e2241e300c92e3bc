"""The wheel, not the checkout: what `pip install .` puts in site-packages runs from any folder.

The wheel is built once and unpacked into a folder that goes first on `sys.path` of a fresh
interpreter, so every import resolves inside it (never to this checkout) while the installed
dependencies still load. A non-editable `pip install .` into a new venv is the same layout; it is
what the README quickstart and issue notes measure, too slow to repeat in every test run.
"""
from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = {"src/bench": "bench"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(ROOT)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot build a wheel here (pip needs setuptools from the package registry): "
                    f"{done.stderr.strip().splitlines()[-1:]}")
    return next(out.glob("*.whl"))


@pytest.fixture(scope="module")
def site(wheel, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(folder)
    return folder


def tracked(folder: str) -> list[str]:
    files = subprocess.run(["git", "ls-files", folder], cwd=ROOT, capture_output=True, text=True).stdout.split()
    return [f for f in files if not f.endswith((".pyc", ".gitignore"))]


def test_only_the_bench_package_lands_in_site_packages(wheel):
    with zipfile.ZipFile(wheel) as z:
        tops = {n.split("/", 1)[0] for n in z.namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"bench"}


def test_every_tracked_strategy_scenario_and_config_file_ships(wheel):
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    missing = [f for folder, inside in SHIPPED.items() for f in tracked(folder)
               if f"{inside}/{f[len(folder) + 1:]}" not in names]
    assert not missing, f"tracked files the wheel leaves out (pyproject package-data?): {missing[:10]}"


def run_installed(site: Path, cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    code = ("import sys; sys.path.insert(0, sys.argv.pop(1)); import bench; "
            "assert bench.__file__.startswith(sys.path[0]), bench.__file__; "
            "assert str(bench.HOME).startswith(sys.path[0]), bench.HOME; from bench.cli import main; sys.exit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, str(site), *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


def test_the_installed_package_runs_lists_reports_and_compares_from_an_empty_folder(site, tmp_path):
    listed = run_installed(site, tmp_path, "scenarios", "list")
    assert listed.returncode == 0, listed.stderr
    shipped = [p for d in ("hand", "library") for p in (ROOT / "src" / "bench" / "scenarios" / d).iterdir()
               if p.suffix in (".yaml", ".yml", ".json")]
    assert f"{len(shipped)} scenarios" in listed.stdout
    ran = run_installed(site, tmp_path, "run", "suite=smoke", "strategies=[truncate]", "stress=[]", "probes.enabled=false",
                        "out=r")
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "r" / "summary.csv").read_text().count("truncate") == 3
    assert json.loads((tmp_path / "r" / "compactions.jsonl").read_text().splitlines()[0])
    report = run_installed(site, tmp_path, "report", "r")
    assert report.returncode == 0 and (tmp_path / "r" / "report.html").stat().st_size > 1000, report.stderr
    same = run_installed(site, tmp_path, "compare", "r", "r")
    assert same.returncode == 0, same.stdout + same.stderr
