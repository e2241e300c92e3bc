"""The results folder (DESIGN §7): summary.csv written one finished cell at a time.

A column that does not apply to a cell, or that nothing computed, stays empty,
never zero. Finished cells are known by their summary row, which is what lets
an interrupted run be resumed: a row is written in one write and synced, and a
row that is not whole (a full disk, a power cut) is dropped on resume, so its
cell runs again instead of counting as done with empty scores (bench/results/resume.py).
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from pathlib import Path
from typing import Any, Iterable

import yaml

from bench.errors import BadInput
from bench.harness.logs import KEY_COLUMNS
from bench.parsing import bounded_yaml
from bench.scoring import metrics as M
from bench.scoring.metric import CONSOLE
from bench.scoring.oracle import COLUMN as UNMEASURED, NEEDS, decode, sentence

# summary.csv: the cell's key, what the replay counted, every metric (bench.scoring.metrics), the time taken.
# `needs_compaction`: the session does not fit the window (bench.scoring.oracle); `unmeasured`: the metrics the
# oracle cannot score on the scenario, left empty in the row (text: `column=mean:short/requests ...`).
RUN_COLUMNS = ["oracle", NEEDS, "events", "requests", "compactions", "compaction_failures"]
SUMMARY_COLUMNS = [*KEY_COLUMNS, *RUN_COLUMNS, *M.COLUMNS, UNMEASURED, "wall_s"]


def cell_key(row: dict[str, Any]) -> tuple[str, ...]:
    return tuple(str(row[c]) for c in KEY_COLUMNS)


def append_csv(path: Path, columns: list[str], rows: Iterable[dict[str, Any]], durable: bool = False) -> None:
    """Append rows, writing the header when the file is new; missing values stay empty. The rows go out in
    one write; `durable` also syncs it to disk (summary rows: a row on disk is a finished cell)."""
    new = not path.exists() or path.stat().st_size == 0
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", restval="")
    if new:
        w.writeheader()
    for row in rows:
        w.writerow({k: _fmt(v) for k, v in row.items()})
    with path.open("a", newline="", encoding="utf-8") as fh:
        fh.write(buf.getvalue())
        if durable:
            fh.flush()
            os.fsync(fh.fileno())


def read_csv(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV file ([] when there is none); BadInput naming the line when it is not UTF-8 CSV."""
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        try:
            return list(reader)
        except csv.Error as exc:
            raise BadInput(f"{path} line {reader.line_num}: not CSV ({exc})") from None
        except UnicodeDecodeError:
            raw = path.read_bytes()
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                line = raw[:exc.start].count(b"\n") + 1
                raise BadInput(f"{path} line {line}: not UTF-8 text") from None
            raise


SCENARIO_COLUMNS = ["scenario", "tags", "window", "title"]


def write_scenarios(out: Path, scenarios: list[Any]) -> None:
    """scenarios.csv: each planned scenario's id and tags (space-separated), so a gate can hold a tag of
    scenarios to its own thresholds without the scenario files."""
    path = out / "scenarios.csv"
    tmp = path.with_name(".scenarios.csv.tmp")
    tmp.unlink(missing_ok=True)
    append_csv(tmp, SCENARIO_COLUMNS, [{"scenario": s.id, "tags": " ".join(s.tags), "window": s.window,
                                        "title": s.title} for s in scenarios])
    os.replace(tmp, path)


def scenario_tags(run_dir: Path) -> dict[str, set[str]]:
    """Tags per scenario id from a run's scenarios.csv ({} for a run without one)."""
    return {r["scenario"]: set((r.get("tags") or "").split()) for r in read_csv(run_dir / "scenarios.csv")
            if r.get("scenario")}


def _fmt(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return v


# What `load` insists on per table: columns that must be there, and columns that must hold numbers.
REQUIRED = {"summary": KEY_COLUMNS, "checks": ["strategy", "point", "check_point", "metric", "item", "score"]}
NUMERIC = {"summary": [c for c in SUMMARY_COLUMNS if c not in ("scenario", "strategy", "writer", UNMEASURED)],
           "checks": ["check_point", "request", "score", "oracle"]}


def load(run_dir: str | Path, table: str = "summary"):
    """summary.csv (or checks.csv with table="checks") of a run as a pandas DataFrame; empty cells are NaN.
    BadInput, one line per problem, when the file is not UTF-8 CSV, lacks a required column or holds
    a non-number in a numeric column."""
    import pandas as pd

    path = Path(run_dir) / f"{table}.csv"
    if not path.is_file():
        raise BadInput(f"{path}: no such file (is {run_dir} a results directory?)")
    cut = _cut_rows(path, table)
    if cut:
        raise BadInput(cut)
    try:
        df = pd.read_csv(path, encoding="utf-8-sig", dtype=str, keep_default_na=False, na_values=["", "nan", "NaN"])
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text")
    except pd.errors.EmptyDataError:
        raise BadInput(f"{path}: empty file (no header row)")
    except (pd.errors.ParserError, ValueError, OSError) as exc:
        raise BadInput(f"{path}: not a readable CSV: {str(exc).strip().splitlines()[-1]}")
    problems = [f"{path}: missing column '{c}'" for c in REQUIRED.get(table, []) if c not in df.columns]
    for c in KEY_COLUMNS if table == "summary" and not problems else ():
        empty = df[c].isna()
        if empty.any():
            problems.append(f"{path} line {int(empty.to_numpy().nonzero()[0][0]) + 2}: column '{c}' is empty (a row "
                            f"names its cell by {', '.join(KEY_COLUMNS)})")
    for c in NUMERIC.get(table, []):
        if c not in df.columns:
            continue
        num = pd.to_numeric(df[c], errors="coerce")
        bad = df[c].notna() & num.isna()
        if bad.any():
            i = int(bad.to_numpy().nonzero()[0][0])
            problems.append(f"{path} line {i + 2}: column '{c}' is not a number: {df[c].iloc[i]!r}"
                            + (f" (and {int(bad.sum()) - 1} more)" if bad.sum() > 1 else ""))
        else:
            df[c] = num
    if problems:
        raise BadInput(problems)
    return df


def _cut_rows(path: Path, table: str) -> list[str]:
    """Rows that are not whole (a write cut short, rows glued together): pandas would fill them with
    empty values and report them as cells with no scores. One line, naming the first."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        return [f"{path}: not UTF-8 text"]
    rows = records(text)
    width = len(rows[0][1] or ()) if rows else 0
    notes = [f"{path} line {n}: incomplete row ({'not CSV' if v is None else f'{len(v)} fields, the header has {width}'})"
             for n, v in rows[1:] if v is None or (len(v) != width and any(x.strip() for x in v))]
    if not notes:
        return []
    more = f" (and {len(notes) - 1} more)" if len(notes) > 1 else ""
    return [f"{notes[0]}{more}: an interrupted write? `compaction-bench run out={path.parent}` with the run's "
            f"settings drops what is not whole and finishes those cells"]


def to_dataset(run_dir: str | Path):
    """A run as a `datasets.DatasetDict`: "summary" (one row per cell) and, when present, "checks"."""
    import datasets

    parts = {"summary": datasets.Dataset.from_pandas(load(run_dir), preserve_index=False)}
    if (Path(run_dir) / "checks.csv").exists():
        parts["checks"] = datasets.Dataset.from_pandas(load(run_dir, "checks"), preserve_index=False)
    return datasets.DatasetDict(parts)


def latest_run(root: Path = Path("results")) -> Path | None:
    """The most recent run directory under `root` (by name: run ids are timestamps), for resume=true."""
    runs = sorted(p for p in root.glob("*") if p.is_dir() and p.name != "baseline" and (p / "config.yaml").exists())
    return runs[-1] if runs else None


# The per-cell console table: the scores, then what the cell cost.
TABLE_COLUMNS = [*KEY_COLUMNS, "compactions", "compaction_failures",
                 *[m.column for m in M.shown(CONSOLE) if m.gated == "always"],
                 *[m.column for m in M.shown(CONSOLE) if m.gated != "always"]]
# Shown only when they tell rows apart or report trouble.
WHEN_VARYING = ("window", "seed")
WHEN_NONZERO = ("compaction_failures", *M.COUNTS)


def format_table(rows: list[dict[str, Any]], columns: list[str] = TABLE_COLUMNS) -> str:
    """A fixed-width text table of the columns that have any value."""
    def shown(c: str) -> bool:
        values = [str(r.get(c, "")) for r in rows]
        if c in WHEN_VARYING:
            return len(set(values)) > 1
        if c in WHEN_NONZERO:
            return any(v not in ("", "0") for v in values)
        return any(v != "" for v in values)

    cols = [c for c in columns if shown(c)]
    if not rows:
        return "(no finished cells)"
    cells = [[_short(r.get(c, "")) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join(lines)


def _short(v: Any) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if f.is_integer() and ("." not in str(v) or abs(f) >= 1000):   # token counts in full, 1.0 scores as 1.000
        return str(int(f))
    return f"{f:.3g}" if 0 < abs(f) < 0.01 else f"{f:.3f}"   # small costs keep their digits




def records(text: str) -> list[tuple[int, list[str] | None]]:
    """(line, fields) per CSV record; fields None for a line the csv module refuses (a NUL byte)."""
    reader = csv.reader(io.StringIO(text, newline=""))
    out: list[tuple[int, list[str] | None]] = []
    while True:
        try:
            values = next(reader)
        except StopIteration:
            return out
        except csv.Error:
            values = None
        out.append((reader.line_num, values))


def lines(text: str) -> list[str]:
    """Lines ending in \\n only: a record's text may hold U+2028 or \\x85, which str.splitlines splits on."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def cell_of(line: str) -> str | None:
    """The cell a log line belongs to; None when the line is not a whole JSON record."""
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    return rec.get("cell") if isinstance(rec, dict) else None


def read_config(run_dir: Path) -> dict[str, Any]:
    """config.yaml as a mapping ({} when absent); BadInput when it is not UTF-8 YAML holding a mapping."""
    path = run_dir / "config.yaml"
    if not path.exists():
        return {}
    try:
        cfg = bounded_yaml(path.read_text(encoding="utf-8-sig"))
    except UnicodeDecodeError:
        raise BadInput(f"{path}: not UTF-8 text")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise BadInput(f"{path}{where}: not valid YAML: {getattr(exc, 'problem', None) or exc}")
    if cfg is None:
        return {}
    if not isinstance(cfg, dict):
        raise BadInput(f"{path}: expected a mapping of config keys, got a {type(cfg).__name__}")
    return cfg


def summary_path(arg: str) -> Path:
    p = Path(arg)
    path = p / "summary.csv" if p.is_dir() else p
    if not path.exists():
        raise BadInput(f"{arg}: no summary.csv there (give a results directory or a summary.csv)")
    return path


def failed_cells(arg: str) -> set[str]:
    """Cells a run recorded as failed (errors.jsonl next to its summary.csv)."""
    path = summary_path(arg).parent / "errors.jsonl"
    if not path.exists():
        return set()
    out = set()
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: unreadable: {exc}")
    for line in lines:
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("cell"), str):
            out.add(rec["cell"])
    return out


def dump_yaml(data: dict) -> str:
    """YAML without anchors and aliases (a sweep repeats the same settings), which readers refuse."""
    class Plain(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

    return yaml.dump(data, Dumper=Plain, sort_keys=False, allow_unicode=True)


def fitting(rows: Iterable[dict[str, Any]]) -> set[tuple[str, str]]:
    """(scenario, window) of the sessions that fit the window: the oracle's largest request, its reply included,
    is within it (`needs_compaction` 0), so no strategy needs to compact and every context could be the
    oracle's. The session decides, for every strategy alike (the oracle too): what a strategy reports about
    its own compactions never matters. A summary from before the column falls back on its oracle's cells
    (a session fits when the oracle sent nothing over the window); without either, every session counts."""
    out: set[tuple[str, str]] = set()
    needs: set[tuple[str, str]] = set()
    for r in rows:
        key = (str(r.get("scenario")), _window(r.get("window")))
        n = number(r.get(NEEDS))
        if n is None and number(r.get("oracle")) and number(r.get("overflow_requests")) is not None:
            n = 1.0 if number(r.get("overflow_requests")) else 0.0
        if n == 0:
            out.add(key)
        elif n is not None:
            needs.add(key)
    return out - needs


def in_headline(row: dict[str, Any], fit: set[tuple[str, str]]) -> bool:
    """A cell of a session that needs compaction (`fitting` gives the sessions that do not)."""
    return (str(row.get("scenario")), _window(row.get("window"))) not in fit


def _window(v: Any) -> str:
    x = number(v)
    return str(int(x)) if x is not None and x.is_integer() else str(v)


def not_measurable(rows: Iterable[dict[str, Any]]) -> list[str]:
    """One sentence per scenario and metric the oracle cannot score (`unmeasured`), in first-seen order:
    "not measurable on S: METRIC (the oracle scores X: below 1 at N of M requests)"."""
    seen: dict[tuple[str, str], str] = {}
    for r in rows:
        for x in decode(r.get(UNMEASURED)):
            key = (str(r.get("scenario")), x.column)
            if key not in seen:
                seen[key] = sentence(key[0], x.column, x.mean, x.short, x.requests) if x.requests else \
                    f"not measurable on {key[0]}: {x.column}"
    return list(seen.values())


def number(v) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x
