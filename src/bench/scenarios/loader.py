"""Read scenario files (YAML or JSON) and validate them against DESIGN §2.

Every problem in a file is collected before anything is reported, so a user
fixes a file in one pass. Problems are one line each:
``FILE:LINE: <event id or key path>: what is wrong``.
Line numbers are looked up only when there is something to report.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Sequence

from bench import HOME
from bench.errors import BadInput
from bench.parsing import bounded_yaml, line_map, long_number_line, parse, parse_json, read_text  # noqa: F401
from bench.scenarios.model import Scenario
from bench.scenarios.validate import Path_, check, normalize

__all__ = ["read_text", "parse", "line_map", "load", "inspect", "bundled", "load_all", "expand", "check", "from_events", "normalize",
           "SCENARIO_SUFFIXES"]

SCENARIO_SUFFIXES = (".yaml", ".yml", ".json")


BUNDLED = (HOME / "scenarios" / "library", HOME / "scenarios" / "hand")


def bundled(path: str | Path) -> bool:
    """A file of the project's own scenario set, held to warnings as errors."""
    try:
        where = Path(path).resolve()
    except (OSError, RuntimeError):
        return False
    return any(where.is_relative_to(d.resolve()) for d in BUNDLED)


def inspect(path: str | Path, strict: bool | None = None) -> tuple[Scenario | None, list[str], list[str]]:
    """Validate one file: (scenario or None, problems, warnings), each a ``FILE:LINE: key: message``
    line (warnings say ``warning:``). `strict` (default: for the bundled files) counts warnings as
    problems. A file that cannot be read or parsed raises BadInput."""
    path = Path(path)
    data, text = parse(path)
    scenario, ck = check(data)
    strict = bundled(path) if strict is None else strict
    lines = line_map(text, path.suffix == ".json") if ck.problems or ck.warnings else {}

    def where(kp: Path_) -> str:
        line = _nearest_line(lines, kp)
        return f"{path}:{line}" if line else str(path)

    problems = [f"{where(kp)}: {ck.display(kp)}: {msg}" for kp, msg in ck.problems]
    warnings = [f"{where(kp)}: {ck.display(kp)}: warning: {msg}" for kp, msg in ck.warnings]
    if strict and warnings:
        problems += [f"{w} (bundled scenarios are held to warnings)" if bundled(path) else w for w in warnings]
        warnings = []
    if problems or scenario is None:
        return None, problems, warnings
    return _with_path(scenario, str(path)), problems, warnings


def load(path: str | Path, strict: bool | None = None) -> Scenario:
    """Load and validate one file; raise BadInput listing every problem (and, when strict — by
    default for the bundled files — every warning)."""
    scenario, problems, _ = inspect(path, strict)
    if scenario is None:
        raise BadInput(problems)
    return scenario


def from_events(events: list[dict], *, window: int, id: str = "t", user: str = "User",
                system: str = "You are an agent.", **top: Any) -> Scenario:
    """A validated scenario built in code (benchmarks, tests, generators); BadInput lists every problem."""
    data = {"scenario": 1, "id": id, "user": user, "window": window, "system": system, "events": events, **top}
    scenario, ck = check(data)
    if scenario is None:
        raise BadInput([f"{ck.display(kp)}: {msg}" for kp, msg in ck.problems])
    return scenario


def _nearest_line(lines: dict[Path_, int], kp: Path_) -> int | None:
    while True:
        if kp in lines:
            return lines[kp]
        if not kp:
            return None
        kp = kp[:-1]


def _with_path(s: Scenario, path: str) -> Scenario:
    from dataclasses import replace
    return replace(s, path=path)


def _glob(p: Path) -> list[Path]:
    root = Path(p.anchor) if p.is_absolute() else Path(".")
    rel = str(p.relative_to(p.anchor)) if p.is_absolute() else str(p)
    return sorted(f for f in root.glob(rel) if f.suffix in SCENARIO_SUFFIXES and f.is_file())


def expand(patterns: Iterable[str], base: Path | Sequence[Path] | None = None) -> list[Path]:
    """Paths, directories (every scenario file inside) or globs -> sorted unique files. A relative
    pattern not found here is tried against each of `base` in turn (the user's config folder, the
    project or installed package)."""
    bases = [] if base is None else [base] if isinstance(base, Path) else list(base)
    found: list[Path] = []
    problems = []
    for pattern in patterns:
        p = Path(pattern)
        if not p.is_absolute() and not p.exists():
            p = next((b / p for b in bases if (b / p).exists()), p)
        if p.is_dir():
            hits = sorted(f for f in p.rglob("*") if f.suffix in SCENARIO_SUFFIXES and f.is_file())
        elif any(ch in pattern for ch in "*?["):
            hits = _glob(p)
            for b in bases if not hits and not p.is_absolute() else ():
                hits = hits or _glob(b / p)   # like plain paths: relative to the project when not found here
        elif p.exists():
            hits = [p]
        else:
            hits = []
        if not hits:
            problems.append(f"{pattern}: no scenario files found")
        found.extend(hits)
    if problems:
        raise BadInput(problems)
    seen, out = set(), []
    for f in found:
        key = f.resolve()
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def load_all(paths: Iterable[Path]) -> list[Scenario]:
    """Load many files; report every problem of every file, and duplicate scenario ids."""
    scenarios, problems = [], []
    by_id: dict[str, str] = {}
    for p in paths:
        try:
            s = load(p)
        except BadInput as exc:
            problems.extend(exc.problems)
            continue
        if s.id in by_id:
            problems.append(f"{p}: id: scenario id '{s.id}' is also used by {by_id[s.id]}")
        by_id.setdefault(s.id, str(p))
        scenarios.append(s)
    if problems:
        raise BadInput(problems)
    return scenarios
