"""The package's layers point one way: a module imports only its own layer's folder or the layers below.

Data flows scenario -> replay -> strategy -> logs -> scorers -> results -> gate / report / viewer, and
the folders are ranked in that order (docs/design.md, "Map"). An import that runs upward, or a cycle,
is how a layered codebase starts to knot; this test names each one with its file and line.

An import inside a function is allowed only where it keeps a heavy library (litellm, pandas,
matplotlib, Hydra, datasets, ...) off the paths that do not need it — `--help`, offline runs — and
the test says so for each one that does not.
"""
from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PKG = SRC / "bench"

# Folder (or top-level module) -> rank. A module may import ranks <= its own; within one rank only its
# own folder. The top-level modules are the foundation every layer shares.
RANKS = {
    "": 0,              # bench/errors.py, env.py, parsing.py, text.py, tokens.py
    "units": 1,         # what a unit of text is and how a reading reads it: on text alone
    "scenarios": 2,
    "harness": 3,
    "models": 4,
    "strategies": 5,
    "scoring": 6,
    "results": 7,
    "gate": 8,
    "report": 9,
    "audit": 10,
    "view": 10,
    "runner": 11,
    "cli": 12,
    "perf": 13,
    "testing": 13,
}
# Public faces, for users: they re-export and are imported by no module of the package.
FACES = {"bench", "bench.strategy", "bench.__main__"}
# Each costs a tenth of a second to many seconds to import (litellm: several seconds).
HEAVY = ("litellm", "pandas", "matplotlib", "hydra", "omegaconf", "datasets", "numpy", "tiktoken")


def modules() -> dict[str, Path]:
    out = {}
    for path in PKG.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if "templates" in parts or "examples" in parts:   # files copied to users, not part of the package's code
            continue
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = modules()


def folder(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return ""
    if len(parts) == 2 and f"{module}" in MODULES and not (PKG / parts[1]).is_dir():
        return ""
    return parts[1]


def resolve(module: str, node: ast.ImportFrom) -> list[str]:
    """The project modules an import statement names (a `from pkg import sub` names pkg.sub)."""
    if node.level:
        base = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
        base = base[:len(base) - (node.level - 1)]
        src = ".".join(base + ([node.module] if node.module else []))
    else:
        src = node.module or ""
    if not (src == "bench" or src.startswith("bench.")):
        return []
    found = []
    for alias in node.names:
        sub = f"{src}.{alias.name}"
        found.append(sub if sub in MODULES else src)
    return [m for m in found if m in MODULES]


@lru_cache(maxsize=None)
def imports(module: str) -> tuple[tuple[str, int, bool], ...]:
    """(imported module, line, inside a function) for each project import of `module`."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.ImportFrom):
                found.extend((m, child.lineno, nested) for m in resolve(module, child))
            elif isinstance(child, ast.Import):
                found.extend((a.name, child.lineno, nested) for a in child.names if a.name in MODULES)
            elif isinstance(child, ast.If) and _type_checking(child):
                continue
            visit(child, inner)

    visit(tree, False)
    return tuple(found)


def _type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


@lru_cache(maxsize=None)
def top_level_libraries(module: str) -> frozenset[str]:
    """Every third-party or stdlib module `module` imports at its top level, through the project's own."""
    seen: set[str] = set()
    libs: set[str] = set()
    todo = [module]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        parents = [".".join(m.split(".")[:i]) for i in range(1, len(m.split(".")))]
        todo.extend(p for p in parents if p in MODULES)
        tree = ast.parse(MODULES[m].read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Import):
                libs.update(a.name for a in node.names if not a.name.startswith("bench"))
                todo.extend(a.name for a in node.names if a.name in MODULES)
            elif isinstance(node, ast.ImportFrom):
                names = resolve(m, node)
                if names:
                    todo.extend(names)
                elif not node.level and node.module:
                    libs.add(node.module)
    return frozenset(libs)


def heavy(module: str) -> bool:
    return any(lib == h or lib.startswith(h + ".") for lib in top_level_libraries(module) for h in HEAVY)


def rank(module: str) -> int:
    return RANKS[folder(module)]


def where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(SRC.parent)}:{line}"


def test_every_folder_has_a_rank():
    assert {folder(m) for m in MODULES} <= set(RANKS), {folder(m) for m in MODULES} - set(RANKS)


def test_no_module_imports_upward_or_across_its_rank():
    bad = []
    for m in MODULES:
        if m in FACES:
            continue
        for target, line, _ in imports(m):
            if target in FACES and target != "bench":
                bad.append(f"{where(m, line)}: {m} imports the public face {target}")
            elif target in FACES:
                continue
            elif rank(target) > rank(m) or (rank(target) == rank(m) and folder(target) != folder(m)):
                bad.append(f"{where(m, line)}: {m} ({folder(m) or 'bench'}) imports {target} "
                           f"({folder(target) or 'bench'}), a layer above or beside it")
    assert not bad, "\n".join(bad)


def test_no_import_cycles():
    graph = {m: {t for t, _, _ in imports(m) if t != m and t not in FACES} for m in MODULES if m not in FACES}
    cycles, state = [], {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for t in sorted(graph.get(m, ())):
            if state.get(t) == 1:
                cycles.append(" -> ".join(path[path.index(t):] + [t]))
            elif t not in state:
                visit(t, path + [t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, "\n".join(cycles)


def test_an_import_inside_a_function_defers_a_heavy_library():
    """Imports at the top say what a module needs; one inside a function is a promise that it keeps a heavy
    library off a path that does not need it (or loads one subcommand of many)."""
    bad = [f"{where(m, line)}: {m} imports {t} inside a function, but {t} loads no heavy library"
           for m in MODULES for t, line, nested in imports(m)
           if nested and not heavy(t)]
    assert not bad, f"{len(bad)} in-function imports:\n" + "\n".join(bad)


def test_the_package_has_few_top_level_modules():
    tops = sorted(p.name for p in PKG.glob("*.py"))
    assert len(tops) <= 9, tops


def test_a_module_names_each_top_level_thing_once():
    """A second `NAME = …` (or def, class) at a module's top level silently replaces the first for every
    use above it too: two merged branches each adding a `PRONOUN` regex to units.py once made the later one
    read every attribution (ruff's F811 sees only functions and imports)."""
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        seen: dict[str, int] = {}
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                names = [node.target.id]
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names = [node.name]
            else:
                continue
            for name in names:
                if name in seen:
                    bad.append(f"{path.relative_to(SRC)}:{node.lineno}: {name} first set at line {seen[name]}")
                seen.setdefault(name, node.lineno)
    assert not bad, "\n".join(bad)
