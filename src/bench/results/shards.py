"""Sharded sweeps: `shard=I/N` runs every N-th cell of the plan into its own folder, and
`compaction-bench merge DIR... --out DIR` joins the N folders into the run an unsharded run writes.

Why the plan travels with each shard (shard.json lists every cell of the full plan, in order): a
merge must put cells in the order one machine would have stored them, and must know that the
shards split the same plan. Cells go to shards round-robin in plan order, so each shard gets a
slice of every scenario and the shards finish at about the same time.
"""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any, Mapping, Sequence

from bench.errors import BadInput
from bench.harness.logs import CELL_LOGS, KEY_COLUMNS
from bench.parsing import flatten
from bench.results.repeats import write_spread
from bench.results.store import (SUMMARY_COLUMNS, append_csv, cell_key, cell_of, dump_yaml, failed_cells, lines,
                                 read_config, read_csv, records, summary_problems)

PLAN = "shard.json"
LOGS = (*CELL_LOGS, "errors.jsonl")


def select(cells: Sequence[Any], spec: tuple[int, int]) -> list[Any]:
    """Shard I of N (1-based): the cells at plan positions I-1, I-1+N, I-1+2N, ..."""
    i, n = spec
    return [c for k, c in enumerate(cells) if k % n == i - 1]


def write_plan(out: Path, spec: tuple[int, int], names: list[str]) -> None:
    """Record the shard and the full plan; a resume of the folder with another plan is refused."""
    path = out / PLAN
    data = {"shard": f"{spec[0]}/{spec[1]}", "cells": names}
    if path.exists():
        old = _plan(path)
        if old != data:
            raise BadInput(f"out: {out} holds shard {old.get('shard')} of another plan; use a new out= for "
                           f"shard {data['shard']} or the same settings to resume it")
        return
    path.write_text(json.dumps(data, indent=0) + "\n", encoding="utf-8")


def _plan(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise BadInput(f"{path}: not a shard plan: {exc}") from None
    ok = isinstance(data, dict) and isinstance(data.get("shard"), str) and isinstance(data.get("cells"), list) \
        and all(isinstance(c, str) for c in data["cells"])
    if not ok:
        raise BadInput(f"{path}: not a shard plan (needs 'shard': 'I/N' and 'cells': [names])")
    return data


def _settings(cfg: dict[str, Any]) -> dict[str, Any]:
    """A shard's config without what differs between shards of one sweep: the shard and the folder."""
    keep = {k: v for k, v in cfg.items() if k not in ("shard", "out")}
    if "overrides" in cfg:
        keep["overrides"] = [o for o in cfg["overrides"] or ()
                             if not str(o).lstrip("+~").startswith(("shard=", "out="))]
    if isinstance(cfg.get("sweep"), list):   # a sweep's configs each carry the shard and the folder too
        keep["sweep"] = [_settings(c) if isinstance(c, dict) else c for c in cfg["sweep"]]
    return keep


def merge(dirs: list[Path], out: Path) -> Path:
    """Join shard folders into `out`: summary, checks and logs in plan order, then repeats.csv, as an
    unsharded run of the same plan writes them (the caller writes the report)."""
    if out.exists() and any(out.iterdir()):
        raise BadInput(f"--out: {out} is not empty; merge writes a new run folder")
    plans, cfgs = [], []
    for d in dirs:
        if not (d / PLAN).exists():
            raise BadInput(f"{d}: not a shard (no {PLAN}; it was not run with shard=I/N)")
        plans.append(_plan(d / PLAN))
        cfgs.append(_settings(read_config(d)))
    first = dirs[0]
    for d, p, c in zip(dirs[1:], plans[1:], cfgs[1:]):
        a, b = flatten(cfgs[0]), flatten(c)
        diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        if diff:
            raise BadInput(f"{d}: made with other settings than {first} ({', '.join(diff[:6])}); shards of one "
                           f"sweep differ only in shard=")
        if p["cells"] != plans[0]["cells"]:
            raise BadInput(f"{d}: its plan lists other cells than {first}'s (other scenario files?); shards of "
                           f"one sweep plan the same cells")
    specs = [shard_spec(p["shard"]) for p in plans]
    if any(s is None for s in specs):
        bad = next(d for d, s in zip(dirs, specs) if s is None)
        raise BadInput(f"{bad / PLAN}: shard is not I/N")
    n = specs[0][1]
    if any(s[1] != n for s in specs):
        raise BadInput(f"merge: the folders split the plan in different numbers of shards "
                       f"({', '.join(sorted({p['shard'] for p in plans}))})")
    seen: dict[int, Path] = {}
    for d, (i, _) in zip(dirs, specs):
        if i in seen:
            raise BadInput(f"merge: {seen[i]} and {d} are both shard {i}/{n}")
        seen[i] = d
    missing = [str(i) for i in range(1, n + 1) if i not in seen]
    if missing:
        raise BadInput(f"merge: shard(s) {', '.join(missing)} of {n} not given; a merge needs every shard")
    names = plans[0]["cells"]
    order = {name: k for k, name in enumerate(names)}
    rows: list[dict[str, str]] = []
    for d, (i, _) in zip(dirs, specs):
        got = read_csv(d / "summary.csv")
        problems = summary_problems(d / "summary.csv", got)
        if problems:
            raise BadInput(problems)
        want = {name for k, name in enumerate(names) if k % n == i - 1}
        have = {"/".join(cell_key(r)) for r in got}
        stray = sorted(have - want)
        if stray:
            where = "another shard's" if stray[0] in order else "no cell of the plan"
            raise BadInput(f"{d / 'summary.csv'}: cell {stray[0]} is {where} (shard {i}/{n} runs every {n}th cell of "
                           f"{PLAN})" + (f" (and {len(stray) - 1} more)" if len(stray) > 1 else ""))
        if want - have and not _failed(d, want - have):
            raise BadInput(f"{d}: shard {i}/{n} is unfinished ({len(want - have)} of {len(want)} cells missing); "
                           f"run it again with the same settings and out= to finish it")
        rows += got
    rows.sort(key=lambda r: order.get("/".join(cell_key(r)), len(order)))
    out.mkdir(parents=True, exist_ok=True)
    cfg = read_config(first)
    cfg = {**_settings(cfg), "shard": None, "out": str(out)}
    if isinstance(cfg.get("sweep"), list):
        cfg["sweep"] = [{**c, "shard": None, "out": str(out)} if isinstance(c, dict) else c for c in cfg["sweep"]]
    (out / "config.yaml").write_text(dump_yaml(cfg), encoding="utf-8")
    append_csv(out / "summary.csv", SUMMARY_COLUMNS, rows)
    _merge_checks(dirs, out, order)
    for name in LOGS:
        _merge_log(dirs, out / name, name, order)
    if (first / "scenarios.csv").exists():
        shutil.copyfile(first / "scenarios.csv", out / "scenarios.csv")
    write_spread(out)
    return out


def put_in_plan_order(out: Path, names: list[str]) -> bool:
    """Sort a run folder's summary, checks and logs into plan order (a run stores each cell the moment it
    finishes, so an interruption loses none; sorted at the end, two runs of one plan write the same files).
    Each file is swapped in whole, so an interruption here loses nothing either. False if already sorted."""
    order = {name: k for k, name in enumerate(names)}
    rows = read_csv(out / "summary.csv") if (out / "summary.csv").exists() else []
    at = [order.get("/".join(cell_key(r)), len(order)) for r in rows]
    if at == sorted(at):
        return False
    tmp = out / ".order"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    rows.sort(key=lambda r: order.get("/".join(cell_key(r)), len(order)))
    append_csv(tmp / "summary.csv", list(rows[0]), rows)
    _merge_checks([out], tmp, order)
    for name in LOGS:
        _merge_log([out], tmp / name, name, order)
    for name in ("checks.csv", *LOGS, "summary.csv"):    # the summary last: it is what marks cells done
        if (tmp / name).exists():
            os.replace(tmp / name, out / name)
    shutil.rmtree(tmp, ignore_errors=True)
    return True


def _failed(d: Path, cells: set[str]) -> bool:
    """Every missing cell failed (errors.jsonl names it): the shard finished, as a run with a failed cell does."""
    return cells <= failed_cells(str(d))


def _merge_checks(dirs: list[Path], out: Path, order: dict[str, int]) -> None:
    header: list[str] | None = None
    rows: list[tuple[int, int, dict[str, str]]] = []
    for d in dirs:
        path = d / "checks.csv"
        if not path.exists():
            continue
        recs = records(path.read_text(encoding="utf-8-sig"))
        if not recs or not recs[0][1]:
            continue
        header = header or recs[0][1]
        for line, values in recs[1:]:
            if values:
                row = dict(zip(recs[0][1], values))
                rows.append((order.get("/".join(values[:len(KEY_COLUMNS)]), len(order)), len(rows), row))
    if header:
        rows.sort(key=lambda t: (t[0], t[1]))
        append_csv(out / "checks.csv", header, [r for _, _, r in rows])


def _merge_log(dirs: list[Path], dest: Path, name: str, order: dict[str, int]) -> None:
    """A log's lines, grouped by cell in plan order, each cell's own lines in their order."""
    found: list[tuple[int, int, str]] = []
    for d in dirs:
        path = d / name
        if path.exists():
            for line in lines(path.read_text(encoding="utf-8", errors="surrogateescape")):
                if line.strip():
                    found.append((order.get(cell_of(line) or "", len(order)), len(found), line))
    if found:
        found.sort(key=lambda t: (t[0], t[1]))
        dest.write_text("".join(line for _, _, line in found), encoding="utf-8", errors="surrogateescape")


AUTO = re.compile(r"auto(?:/(\d+))?")
# Where `shard=auto` reads its index, in this order: (index variable, its base, count variable).
# Kubernetes gives an Indexed Job's pod JOB_COMPLETION_INDEX (0-based) and no count: shard=auto/N, or
# BENCH_SHARD_COUNT in the pod template. SLURM numbers an array's tasks from its own minimum (--array=1-4
# or 0-3, or a step): the index is the task's position in the array. A CI matrix (GitHub Actions) sets
# BENCH_SHARD_INDEX (1-based) and BENCH_SHARD_COUNT itself; GitLab's `parallel:` sets CI_NODE_INDEX/TOTAL.
SOURCES = (("BENCH_SHARD_INDEX", 1, "BENCH_SHARD_COUNT"), ("JOB_COMPLETION_INDEX", 0, "BENCH_SHARD_COUNT"),
           ("SLURM_ARRAY_TASK_ID", None, "SLURM_ARRAY_TASK_COUNT"), ("CI_NODE_INDEX", 1, "CI_NODE_TOTAL"))


def auto_spec(value: str, env: Mapping[str, str]) -> tuple[tuple[int, int], str]:
    """`shard=auto` or `auto/N`: (I, N) from the environment, and where they came from; BadInput (one
    line) when no index is there, or it is not a whole number within the count."""
    match = AUTO.fullmatch(value.strip())
    given = int(match.group(1)) if match and match.group(1) else None
    source = next(((name, base, count) for name, base, count in SOURCES if env.get(name, "").strip()), None)
    if source is None:
        raise BadInput(f"shard={value}: no shard index in the environment (one of "
                       f"{', '.join(name for name, _, _ in SOURCES)}); set one or use shard=I/N")
    name, base, count_name = source
    raw = env[name].strip()
    if not raw.isdigit():
        raise BadInput(f"shard={value}: {name}={raw!r} is not a whole number")
    index = int(raw)
    if base is None:    # SLURM: the task's position in the array, whatever its first id and step
        lo, step = env.get("SLURM_ARRAY_TASK_MIN", "0").strip(), env.get("SLURM_ARRAY_TASK_STEP", "1").strip()
        if not lo.isdigit() or not step.isdigit() or int(step) < 1 or (index - int(lo)) % int(step):
            raise BadInput(f"shard={value}: {name}={raw} is not a step of the array (SLURM_ARRAY_TASK_MIN={lo!r}, "
                           f"SLURM_ARRAY_TASK_STEP={step!r}); use --array=A-B[:S] or shard=I/N")
        index, base = (index - int(lo)) // int(step), 0
    count_raw = env.get(count_name, "").strip()
    if given is None and not count_raw:
        raise BadInput(f"shard={value}: {name}={raw} but {count_name} is not set; say how many shards with "
                       f"shard=auto/N or {count_name}=N")
    if given is None and not count_raw.isdigit():
        raise BadInput(f"shard={value}: {count_name}={count_raw!r} is not a whole number")
    count = given if given is not None else int(count_raw)
    if given is not None and count_raw.isdigit() and int(count_raw) != given:
        raise BadInput(f"shard={value}: {count_name}={count_raw} says {count_raw} shards, shard={value} says {given}")
    spec = shard_spec(f"{index - base + 1}/{count}")
    if spec is None:
        first = "0" if base == 0 else "1"
        raise BadInput(f"shard={value}: {name}={raw} is outside {count} shards (from {first}, "
                       f"{'0-based' if base == 0 else '1-based'})")
    return spec, f"{name}={raw}"


def shard_spec(value: Any) -> tuple[int, int] | None:
    """`2/4` -> (2, 4); None when it is not I/N with 1 <= I <= N."""
    if isinstance(value, bool) or not isinstance(value, str):
        return None
    i, slash, n = value.strip().partition("/")
    if not slash or not i.strip().isdigit() or not n.strip().isdigit():
        return None
    i_, n_ = int(i), int(n)
    return (i_, n_) if 1 <= i_ <= n_ <= 100_000 else None


__all__ = ["select", "write_plan", "merge", "shard_spec", "auto_spec", "AUTO", "SOURCES"]
