"""Package layout: the repository keeps its top-level folders, the wheel nests them under `bench`.

`strategies/`, `scenarios/`, `conf/` and `examples/` install as `bench.strategies`, `bench.scenarios`,
`bench.conf` and `bench.examples` (what `init --exec` copies), so no generic top-level names land in site-packages. Everything else is in
pyproject.toml; this file only computes the package list, which pyproject cannot map.
"""
from pathlib import Path

from setuptools import find_namespace_packages, setup

HERE = Path(__file__).parent
ROOTS = {"bench": "bench", "bench.strategies": "strategies", "bench.scenarios": "scenarios", "bench.conf": "conf",
         "bench.examples": "examples"}


def packages(name: str, folder: str) -> list[str]:
    found = find_namespace_packages(where=str(HERE / folder), exclude=["*__pycache__*"])
    return [name, *(f"{name}.{p}" for p in found)]


setup(package_dir=ROOTS, packages=[p for name, folder in ROOTS.items() for p in packages(name, folder)])
