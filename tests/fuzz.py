"""A seeded mutator over what users and attackers hand compaction-bench: scenario files, transcripts
and result folders. Each mutated input goes through the real command in this process, under a time
limit, and must end in exit 0 (or 1 for a gate) or 2 with every stderr line naming the input; an
exception escaping the command (a traceback) or a case over the time limit (a hang) is a failure.

    .venv/bin/python tests/fuzz.py --scenarios 500 --transcripts 150 --results 40 --runs 40

prints the figures (files, tracebacks, hangs, noisy cases, peak memory) and exits 1 on any failure.
tests/test_fuzz.py runs a small pass of the same code in CI. Seeded: the same arguments mutate the
same way, so a failure is reproduced by its case number (`--only N`).
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import random
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
HAND = sorted((ROOT / "src" / "bench" / "scenarios" / "hand").glob("*.yaml"))
SHARED = Path("/work/shared/data/transcripts")
if not SHARED.exists():
    SHARED = ROOT.parent / "shared" / "data" / "transcripts"
CLAUDE = ROOT / "tests" / "data" / "claude-code-session.jsonl"
NOISY = 3          # lines on stderr above which one mutation counts as noisy (one root cause, one line)


class Hang(BaseException):
    """Raised by the alarm: a BaseException, so no `except Exception` in the code under test hides it."""


@dataclass
class Tally:
    cases: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    exits: dict[int, int] = field(default_factory=dict)
    tracebacks: list[str] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    unnamed: list[str] = field(default_factory=list)     # exit 2 with a line that does not name the input
    unexpected: list[str] = field(default_factory=list)  # an exit code the case does not allow (e.g. 1 on resume)
    noisy: list[str] = field(default_factory=list)
    slowest: tuple[float, str] = (0.0, "")

    def failures(self) -> int:
        return len(self.tracebacks) + len(self.hangs) + len(self.unnamed) + len(self.unexpected)


def call(argv: list[str], limit: float) -> tuple[int, str, str, str | None]:
    """(exit code, stdout, stderr, traceback or 'hang' or None) of `compaction-bench ARGV` in this process."""
    from bench.cli import main

    out, err = io.StringIO(), io.StringIO()

    def alarm(*_: Any) -> None:
        raise Hang()

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    failure = None
    code = -1
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    except SystemExit as exc:            # argparse usage errors
        code = exc.code if isinstance(exc.code, int) else 2
    except Hang:
        failure = "hang"
    except BaseException:                # noqa: BLE001 - anything escaping the command is a traceback
        failure = traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return code, out.getvalue(), err.getvalue(), failure


def judge(t: Tally, kind: str, label: str, argv: list[str], names: tuple[str, ...], limit: float,
          ok_codes: tuple[int, ...] = (0, 2)) -> tuple[int, str]:
    started = time.perf_counter()
    code, out, err, failure = call(argv, limit)
    took = time.perf_counter() - started
    t.cases += 1
    t.by_kind[kind] = t.by_kind.get(kind, 0) + 1
    t.slowest = max(t.slowest, (took, label))
    if failure == "hang":
        t.hangs.append(f"{label}: over {limit:g}s: {' '.join(argv)}")
        return -1, ""
    if failure is not None:
        t.tracebacks.append(f"{label}: {' '.join(argv)}\n{failure}")
        return -1, ""
    t.exits[code] = t.exits.get(code, 0) + 1
    if "Traceback (most recent call last)" in err:
        t.tracebacks.append(f"{label}: printed a traceback: {err[-2000:]}")
    if code not in ok_codes:
        t.unexpected.append(f"{label}: exit {code}: {err[-500:]}")
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith(("warning:", "  note:"))
             and ": warning: " not in ln]
    if code == 2:
        stray = [ln for ln in lines if not ln.startswith(names)]
        if stray or not lines:
            t.unnamed.append(f"{label}: {stray[:2] or 'no line at all'}")
        if len(lines) > NOISY:
            t.noisy.append(f"{label}: {len(lines)} lines: {lines[0][:160]}")
    return code, err


# ---------------------------------------------------------------- mutations of parsed data

def _nodes(data: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(data, dict):
        for k, v in data.items():
            out.extend(_nodes(v, path + (k,)))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out.extend(_nodes(v, path + (i,)))
    return out


def _get(data: Any, path: tuple) -> Any:
    for k in path:
        data = data[k]
    return data


def _set(data: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    _get(data, path[:-1])[path[-1]] = value
    return data


def _nest(depth: int) -> Any:
    v: Any = 1
    for _ in range(depth):
        v = [v] if depth % 2 else {"k": v}
    return v


VALUES: list[Callable[[random.Random], Any]] = [
    lambda r: None, lambda r: True, lambda r: "", lambda r: " ", lambda r: -1, lambda r: 0, lambda r: 10 ** 400,
    lambda r: 1e308 * 10, lambda r: float("nan"), lambda r: [], lambda r: {}, lambda r: "x" * r.choice((1, 5000)),
    lambda r: "a\ud800b", lambda r: [""], lambda r: {"": 1}, lambda r: _nest(r.choice((70, 200, 900))),
    lambda r: "[Harness: watch] forged", lambda r: "2024-01-01", lambda r: "\u0000\u202e", lambda r: 3.5,
    lambda r: "unknown-id", lambda r: ["a", 1, None], lambda r: r.randint(-10 ** 6, 10 ** 6),
]


def mutate_data(data: Any, r: random.Random) -> tuple[Any, str]:
    """One structural change at a random place: a value retyped, a key dropped or added, an item
    duplicated, dropped or moved, an id reused."""
    data = copy.deepcopy(data)
    path = r.choice(_nodes(data))
    node = _get(data, path)
    op = r.choice(["retype", "retype", "drop", "add_key", "dup_item", "drop_item", "swap", "reuse_id", "rename"])
    if op == "retype" or (op in ("add_key", "rename") and not isinstance(node, dict)) or \
            (op in ("dup_item", "drop_item", "swap") and not isinstance(node, list)) or (op == "drop" and not path):
        return _set(data, path, r.choice(VALUES)(r)), f"retype {path[-3:]}"
    if op == "drop":
        parent = _get(data, path[:-1])
        del parent[path[-1]]
        return data, f"drop {path[-3:]}"
    if op == "add_key":
        node[r.choice(["extra", "id", "t", "role", "calls", "call", "source", "\ud800", "keys"])] = r.choice(VALUES)(r)
        return data, f"add key at {path[-3:]}"
    if op == "rename" and node:
        k = r.choice(list(node))
        node[str(k) + "x"] = node.pop(k)
        return data, f"rename {k!r} at {path[-3:]}"
    if op == "dup_item" and node:
        i = r.randrange(len(node))
        node.insert(i, copy.deepcopy(node[i]))
        return data, f"dup item {path[-3:]}[{i}]"
    if op == "drop_item" and node:
        node.pop(r.randrange(len(node)))
        return data, f"drop item of {path[-3:]}"
    if op == "swap" and len(node) > 1:
        i, j = r.sample(range(len(node)), 2)
        node[i], node[j] = node[j], node[i]
        return data, f"swap items of {path[-3:]}"
    ids = [p for p in _nodes(data) if p and p[-1] in ("id", "call", "from", "at", "tool_call_id", "cause")]
    if ids:
        a, b = r.sample(ids, 2) if len(ids) > 1 else (ids[0], ids[0])
        _set(data, a, copy.deepcopy(_get(data, b)))
        return data, f"reuse id {a[-3:]} <- {b[-3:]}"
    return _set(data, path, None), f"null {path[-3:]}"


# ---------------------------------------------------------------- mutations of text

BOMB = ('bomb: &a ["l","l","l","l","l","l","l","l","l"]\nb2: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n'
        'b3: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nb4: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n'
        'b5: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nb6: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n'
        'b7: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nb8: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n')


def mutate_text(raw: bytes, r: random.Random, yaml_file: bool) -> tuple[bytes, str]:
    """One change to the bytes: cut, flipped, a line dropped or doubled, a BOM, NULs, bad UTF-8, CRLF,
    a huge number, deep brackets, an alias bomb (YAML)."""
    op = r.choice(["cut", "flip", "drop_line", "dup_line", "bom", "nul", "bad_utf8", "crlf", "digits", "brackets",
                   "bomb" if yaml_file else "cut", "tab", "empty"])
    i = r.randrange(max(1, len(raw)))
    lines = raw.split(b"\n")
    j = r.randrange(len(lines))
    if op == "cut":
        return raw[:i], f"cut at {i}"
    if op == "flip":
        return raw[:i] + bytes([r.randrange(256)]) + raw[i + 1:], f"flip byte {i}"
    if op == "drop_line":
        return b"\n".join(lines[:j] + lines[j + 1:]), f"drop line {j + 1}"
    if op == "dup_line":
        return b"\n".join(lines[:j + 1] + lines[j:]), f"dup line {j + 1}"
    if op == "bom":
        return b"\xef\xbb\xbf" + raw, "utf-8 bom"
    if op == "nul":
        return raw[:i] + b"\x00" * 3 + raw[i:], f"nul at {i}"
    if op == "bad_utf8":
        return raw[:i] + b"\xff\xfe\xc3" + raw[i:], f"bad utf-8 at {i}"
    if op == "crlf":
        return raw.replace(b"\n", b"\r\n"), "crlf"
    if op == "digits":
        return raw[:i] + b"9" * r.choice((20, 400, 5000)) + raw[i:], f"digits at {i}"
    if op == "brackets":
        n = r.choice((100, 2000, 100_000))
        return raw[:i] + b"[" * n + b"]" * n + raw[i:], f"{n} brackets at {i}"
    if op == "bomb":
        return BOMB.encode() + raw, "alias bomb"
    if op == "tab":
        return raw[:i] + b"\t" + raw[i:], f"tab at {i}"
    return b"", "empty file"


# ---------------------------------------------------------------- seeds

def scenario_seeds() -> list[tuple[str, Any]]:
    """(suffix, data): the hand-written scenarios, as YAML and as JSON."""
    import yaml

    out = []
    for p in HAND:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
        out += [(".yaml", data), (".json", data)]
    return out


def transcript_seeds() -> list[tuple[str, str, Any]]:
    """(format, suffix, data): small real transcripts of each format (cut to keep cases fast)."""
    out: list[tuple[str, str, Any]] = []
    out.append(("claude-code", ".jsonl", [json.loads(ln) for ln in CLAUDE.read_text().splitlines() if ln.strip()]))
    if SHARED.exists():
        tau = json.loads((SHARED / "tau-bench-airline-gpt-4o.json").read_text())[:2]
        for rec in tau:
            rec["traj"] = rec["traj"][:14]
        out.append(("openai-chat", ".json", tau))
        first = json.loads((SHARED / "openhands-multi-swe-bench-output.jsonl").read_text().splitlines()[0])
        first["history"] = first["history"][:30]
        out.append(("openhands", ".jsonl", [first, copy.deepcopy(first)]))
        swe = json.loads((SHARED / "swe-agent-marshmallow-1867.traj").read_text())
        out.append(("swe-agent", ".traj", {"history": swe["history"][:14], "trajectory": swe["trajectory"][:4]}))
    return out


def dump(data: Any, suffix: str) -> bytes:
    if suffix in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_dump(data, sort_keys=False, allow_unicode=True).encode("utf-8")
        except (yaml.YAMLError, UnicodeEncodeError, RecursionError, ValueError):
            pass
    try:
        if suffix == ".jsonl" and isinstance(data, list):
            return "\n".join(json.dumps(x) for x in data).encode("utf-8", "surrogatepass")
        return json.dumps(data, indent=1).encode("utf-8", "surrogatepass")
    except (RecursionError, ValueError, TypeError):
        return json.dumps(str(data)[:1000]).encode()


def mutated(data: Any, suffix: str, r: random.Random) -> tuple[bytes, str]:
    """One or two mutations: structural, textual, or one of each."""
    how = r.random()
    notes = []
    if how < 0.65:
        data, note = mutate_data(data, r)
        notes.append(note)
    raw = dump(data, suffix)
    if how >= 0.45:
        raw, note = mutate_text(raw, r, suffix in (".yaml", ".yml"))
        notes.append(note)
    return raw, "; ".join(notes)


# ---------------------------------------------------------------- the passes

def scenarios_pass(t: Tally, n: int, runs: int, r: random.Random, work: Path, limit: float,
                   only: int | None) -> None:
    seeds = scenario_seeds()
    ran = 0
    for i in range(n):
        suffix, data = seeds[i % len(seeds)]
        raw, note = mutated(data, suffix, r)
        if only is not None and i != only:
            continue
        path = work / f"s{i}{suffix}"
        path.write_bytes(raw)
        code, _ = judge(t, "scenario", f"scenario {i} ({note})", ["scenarios", "validate", str(path)], (str(path),),
                        limit)
        if code == 0 and ran < runs:
            ran += 1
            out = work / f"run{i}"
            judge(t, "run", f"run {i} ({note})", ["run", f"scenarios=[{path}]", "strategies=[truncate,naive]",
                                                   "probes.enabled=false", "concurrency=1", f"out={out}"],
                  (str(path),), limit * 6, ok_codes=(0,))
            shutil.rmtree(out, ignore_errors=True)
        path.unlink(missing_ok=True)


def transcripts_pass(t: Tally, n: int, r: random.Random, work: Path, limit: float, only: int | None) -> None:
    seeds = transcript_seeds()
    for i in range(n):
        fmt, suffix, data = seeds[i % len(seeds)]
        raw, note = mutated(data, suffix, r)
        if only is not None and i != only:
            continue
        path, out = work / f"t{i}{suffix}", work / f"t{i}-out"
        path.write_bytes(raw)
        code, _ = judge(t, "transcript", f"transcript {i} {fmt} ({note})",
                        ["import", fmt, str(path), "--all", "--out", str(out)], (str(path), str(out)), limit)
        written = sorted(out.glob("*.json")) if out.exists() else []
        if code == 0 and written:     # what the importer writes must validate
            code, err = judge(t, "imported", f"imported {i} {fmt} ({note})",
                              ["scenarios", "validate", *map(str, written)], (str(out),), limit, ok_codes=(0,))
        shutil.rmtree(out, ignore_errors=True)
        path.unlink(missing_ok=True)


RESULT_FILES = ("summary.csv", "checks.csv", "requests.jsonl", "compactions.jsonl", "config.yaml", "errors.jsonl")


def results_pass(t: Tally, n: int, r: random.Random, work: Path, limit: float, only: int | None) -> None:
    base = work / "base-run"
    code, _, err, failure = call(["run", "suite=smoke", "strategies=[truncate,naive]", "concurrency=1",
                                  f"out={base}"], limit * 10)
    if code != 0 or failure:
        raise SystemExit(f"fuzz: the base run failed: {failure or err[-400:]}")
    for i in range(n):
        name = RESULT_FILES[i % len(RESULT_FILES)]
        src = base / name
        raw = src.read_bytes() if src.exists() else b'{"cell": "x", "error": "e"}\n'
        if r.random() < 0.5 and name.endswith((".csv", ".jsonl")):
            lines = raw.split(b"\n")
            k = r.randrange(len(lines))
            lines[k] = lines[k][:r.randrange(len(lines[k]) + 1)] if r.random() < 0.5 else \
                lines[k].replace(b",", b",x", 1).replace(b'":', b'":[', 1)
            raw, note = b"\n".join(lines) + (b"" if r.random() < 0.5 else b"\n"), f"{name}: line {k + 1} damaged"
        else:
            raw, note = mutate_text(raw, r, False)
            note = f"{name}: {note}"
        if only is not None and i != only:
            continue
        folder = work / f"r{i}"
        shutil.copytree(base, folder, ignore=shutil.ignore_patterns("figures", "report.*", ".lock"))
        (folder / name).write_bytes(raw)
        command = r.choice(["report", "compare", "compare", "resume"])
        names = (str(folder), str(base), name, "out:", "error:", "regression:", "resuming")
        if command == "report":
            judge(t, "results", f"results {i} report ({note})", ["report", str(folder)], names, limit * 3)
        elif command == "compare":
            judge(t, "results", f"results {i} compare ({note})", ["compare", str(base), str(folder)], names,
                  limit, ok_codes=(0, 1, 2))
        else:
            judge(t, "results", f"results {i} resume ({note})", ["run", "suite=smoke", "strategies=[truncate,naive]",
                                                                  "concurrency=1", f"out={folder}"],
                  names, limit * 6, ok_codes=(0, 2))
        shutil.rmtree(folder, ignore_errors=True)


def fuzz(scenarios: int, transcripts: int, results: int, runs: int, seed: int, limit: float,
         only: int | None = None) -> Tally:
    import os

    ci = os.environ.get("CI")
    os.environ["CI"] = "true"    # no progress bars
    t = Tally()
    r = random.Random(seed)
    seeds = [r.random() for _ in range(3)]     # one stream per pass: a pass's cases do not depend on the others
    try:
        with tempfile.TemporaryDirectory(prefix="cb-fuzz-") as tmp:
            work = Path(tmp)
            if scenarios:
                scenarios_pass(t, scenarios, runs, random.Random(seeds[0]), work, limit, only)
            if transcripts:
                transcripts_pass(t, transcripts, random.Random(seeds[1]), work, limit, only)
            if results:
                results_pass(t, results, random.Random(seeds[2]), work, limit, only)
    finally:
        os.environ.pop("CI") if ci is None else os.environ.__setitem__("CI", ci)
    return t


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="tests/fuzz.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--scenarios", type=int, default=500)
    p.add_argument("--transcripts", type=int, default=150)
    p.add_argument("--results", type=int, default=40)
    p.add_argument("--runs", type=int, default=40, help="mutated scenarios that validate, replayed with `run`")
    p.add_argument("--seed", type=int, default=16)
    p.add_argument("--limit", type=float, default=20.0, help="seconds per case before it counts as a hang")
    p.add_argument("--only", type=int, help="run only case N of each pass (to reproduce one)")
    p.add_argument("--verbose", action="store_true")
    a = p.parse_args(argv)
    started = time.perf_counter()
    t = fuzz(a.scenarios, a.transcripts, a.results, a.runs, a.seed, a.limit, a.only)
    print(f"cases {t.cases} ({', '.join(f'{k} {v}' for k, v in t.by_kind.items())}); exits "
          f"{dict(sorted(t.exits.items()))}; tracebacks {len(t.tracebacks)}; hangs {len(t.hangs)}; "
          f"unnamed {len(t.unnamed)}; unexpected exits {len(t.unexpected)}; noisy (> {NOISY} lines) {len(t.noisy)}; slowest {t.slowest[0]:.1f}s "
          f"({t.slowest[1][:80]}); peak memory {peak_mb():.0f} MB; {time.perf_counter() - started:.0f}s")
    for title, items in (("traceback", t.tracebacks), ("hang", t.hangs), ("unnamed", t.unnamed),
                         ("unexpected exit", t.unexpected),
                         ("noisy", t.noisy if a.verbose else t.noisy[:5])):
        for item in items[:30]:
            print(f"--- {title}: {item}")
    return 1 if t.failures() else 0


if __name__ == "__main__":
    sys.exit(main())
