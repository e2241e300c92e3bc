"""The results folder (DESIGN §7): summary.csv written one finished cell at a time.

A column that does not apply to a cell, or that nothing computed, stays empty,
never zero. Finished cells are known by their summary row, which is what lets
an interrupted run be resumed: a row is written in one write and synced, and a
row that is not whole (a full disk, a power cut) is dropped on resume, so its
cell runs again instead of counting as done with empty scores.
"""
from __future__ import annotations

import csv
import io
import os
import re
from pathlib import Path
from typing import Any, Iterable

SUMMARY_COLUMNS = [
    "scenario", "strategy", "writer", "window", "seed", "oracle", "events", "requests", "compactions",
    "compaction_failures", "overflow_requests", "goal_retention", "constraint_fidelity", "provenance_leakage",
    "stale_constraints", "fact_retention", "decision_retention", "rejected_revived", "user_words_retained",
    "input_tokens", "cached_input_tokens", "output_tokens", "compaction_input_tokens", "compaction_output_tokens",
    "cost_usd", "cache_hit_rate", "overflow_input_tokens", "overflow_cost_usd", "probe_pass_rate",
    "probes_answerable", "wall_s",
]
KEY_COLUMNS = ["scenario", "strategy", "writer", "window", "seed"]


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
    from .errors import BadInput

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


def summary_rows(path: Path) -> tuple[list[dict[str, str]], list[str]]:
    """(whole rows, one note per row that is not): a whole row has every column, ends with a newline (the
    write finished), names its cell and holds numbers where numbers go. A row cut by an interrupted write,
    or two rows glued into one line, is not whole."""
    if not path.exists():
        return [], []
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    records = _records(text)
    if not records:
        return [], []
    (_, header), rows, notes = records[0], [], []
    if header is None or any("\ufffd" in h for h in header):   # the columns themselves cannot be read
        return [], [f"{path} line 1: the header is not UTF-8 CSV, so no row can be trusted; every cell runs again"]
    for i, (n, values) in enumerate(records[1:], 1):
        if values is None or not any(v.strip() for v in values):
            if values is None:
                notes.append(f"{path} line {n}: not CSV, dropped")
            continue
        row = dict(zip(header, values))
        why = ("cut short (no end of line)" if i == len(records) - 1 and not text.endswith(("\n", "\r")) else
               "not UTF-8" if any("\ufffd" in v for v in values) else
               f"{len(values)} fields, the header has {len(header)}" if len(values) != len(header) else
               "no cell key" if any(not row.get(c) for c in KEY_COLUMNS) else _not_numbers(row))
        if why:
            notes.append(f"{path} line {n}: incomplete summary row ({why})")
        else:
            rows.append(row)
    return rows, notes


def _records(text: str) -> list[tuple[int, list[str] | None]]:
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


def _not_numbers(row: dict[str, str]) -> str:
    for c in NUMERIC["summary"]:
        v = row.get(c, "")
        try:
            if v not in ("", "nan"):
                float(v)
        except ValueError:
            return f"column '{c}' holds {v[:20]!r}, not a number"
    return ""


def repair_summary(out: Path) -> list[str]:
    """Drop summary rows that are not whole, rewriting the file in one replace (a file left with no whole
    row is emptied, so the next row writes a fresh header); one note per row dropped."""
    path = out / "summary.csv"
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    rows, notes = summary_rows(path)
    damaged = damaged_cells(out, {cell_key(r) for r in rows})
    if not notes and not damaged and (not text or text.endswith(("\n", "\r"))):
        return []
    notes = [n if n.endswith("again") else f"{n}, dropped: its cell runs again" for n in notes]
    notes += [f"{where}: not whole, so cell {cell} runs again" for cell, where in damaged.items()]
    rows = [r for r in rows if "/".join(cell_key(r)) not in damaged]
    tmp = path.with_name(".summary.csv.tmp")
    tmp.write_bytes(b"")
    if rows:
        append_csv(tmp, list(rows[0]), rows, durable=True)
    os.replace(tmp, path)
    return notes


def done_cells(out: Path) -> set[tuple[str, ...]]:
    return {cell_key(r) for r in summary_rows(out / "summary.csv")[0]}


def _fmt(v: Any) -> Any:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return v


# What `load` insists on per table: columns that must be there, and columns that must hold numbers.
REQUIRED = {"summary": KEY_COLUMNS, "checks": ["strategy", "point", "check_point", "metric", "item", "score"]}
NUMERIC = {"summary": [c for c in SUMMARY_COLUMNS if c not in ("scenario", "strategy", "writer")],
           "checks": ["check_point", "request", "score", "oracle"]}


def load(run_dir: str | Path, table: str = "summary"):
    """summary.csv (or checks.csv with table="checks") of a run as a pandas DataFrame; empty cells are NaN.
    BadInput, one line per problem, when the file is not UTF-8 CSV, lacks a required column or holds
    a non-number in a numeric column."""
    import pandas as pd

    from .errors import BadInput

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
    records = _records(text)
    width = len(records[0][1] or ()) if records else 0
    notes = [f"{path} line {n}: incomplete row ({'not CSV' if v is None else f'{len(v)} fields, the header has {width}'})"
             for n, v in records[1:] if v is None or (len(v) != width and any(x.strip() for x in v))]
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


def prune_unfinished(out: Path) -> int:
    """Drop log and check lines of cells that have no summary row (a run interrupted mid-cell),
    so resuming does not append them twice. A line that does not parse (the half-written last line
    of an interrupted run) belongs to no finished cell and is dropped too. Returns the number of
    lines dropped."""
    done = {"/".join(k) for k in done_cells(out)}
    dropped = 0
    for name in ("requests.jsonl", "compactions.jsonl"):
        path = out / name
        if not path.exists():
            continue
        lines = _lines(path.read_text(encoding="utf-8", errors="surrogateescape"))
        keep = [ln for ln in lines if not ln.strip() or _cell_of(ln) in done]
        if len(keep) != len(lines):
            dropped += len(lines) - len(keep)
            path.write_text("".join(keep), encoding="utf-8", errors="surrogateescape")
    checks = out / "checks.csv"
    records = _records(checks.read_text(encoding="utf-8-sig", errors="replace")) if checks.exists() else []
    if records and records[0][1]:
        header = records[0][1]
        keep_rows = [dict(zip(header, v)) for _, v in records[1:]
                     if v is not None and len(v) == len(header) and "/".join(v[:len(KEY_COLUMNS)]) in done]
        if len(keep_rows) != len(records) - 1:
            dropped += len(records) - 1 - len(keep_rows)
            tmp = checks.with_name(".checks.csv.tmp")
            tmp.write_bytes(b"")
            append_csv(tmp, header, keep_rows)
            os.replace(tmp, checks)
    return dropped


def _lines(text: str) -> list[str]:
    """Lines ending in \\n only: a record's text may hold U+2028 or \\x85, which str.splitlines splits on."""
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def damaged_cells(out: Path, done: set[tuple[str, ...]]) -> dict[str, str]:
    """Finished cells (by name) with a log line or a check row that is not whole (cut, glued, not UTF-8),
    and where: their rows would read as complete cells with part of their data gone, so they run again.
    A damaged line whose cell name is itself cut or garbled reruns every cell it could belong to."""
    names = {"/".join(k): k for k in done}
    found: dict[str, str] = {}
    for name in ("requests.jsonl", "compactions.jsonl"):
        path = out / name
        if not path.exists():
            continue
        for n, raw in enumerate(path.read_bytes().split(b"\n"), 1):
            try:
                whole = not raw.strip() or _cell_of(raw.decode("utf-8")) is not None
            except UnicodeDecodeError:
                whole = False
            m = None if whole else re.match(rb'\{"cell":\s*"([^"]*)', raw)
            if m and m.group(1):
                shape = re.escape(m.group(1).decode("utf-8", "replace")).replace("\ufffd", ".*")
                for cell in names:
                    if re.match(shape, cell):
                        found.setdefault(cell, f"{path} line {n}")
    checks = out / "checks.csv"
    if not checks.exists():
        return found
    raw = checks.read_bytes()
    bad_lines = [i for i, line in enumerate(raw.split(b"\n"), 1) if not _utf8(line)]
    records = _records(raw.decode("utf-8-sig", errors="replace"))
    width = len(records[0][1] or ()) if records else 0
    start = 1
    for n, values in records:
        broken = values is None or len(values) != width or any(start <= b <= n for b in bad_lines)
        start = n + 1
        fields = list(values[:len(KEY_COLUMNS)]) if broken and values else []
        while fields and not fields[-1]:
            fields.pop()
        for key in done if fields else ():
            if all(f == k or "\ufffd" in f or (i == len(fields) - 1 and k.startswith(f))
                   for i, (f, k) in enumerate(zip(fields, key))):
                found.setdefault("/".join(key), f"{checks} line {n}")
    return found


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _cell_of(line: str) -> str | None:
    """The cell a log line belongs to; None when the line is not a whole JSON record."""
    import json

    try:
        rec = json.loads(line)
    except ValueError:
        return None
    return rec.get("cell") if isinstance(rec, dict) else None


TABLE_COLUMNS = ["scenario", "strategy", "writer", "window", "seed", "compactions", "compaction_failures",
                 "overflow_requests", "goal_retention", "constraint_fidelity", "provenance_leakage", "fact_retention",
                 "decision_retention", "rejected_revived", "user_words_retained", "probe_pass_rate", "input_tokens",
                 "cost_usd", "cache_hit_rate"]
# Shown only when they tell rows apart or report trouble.
WHEN_VARYING = ("window", "seed")
WHEN_NONZERO = ("compaction_failures", "overflow_requests")


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
