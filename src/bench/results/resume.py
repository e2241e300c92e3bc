"""Resuming a results folder: what of it is whole. A cell's summary row is its commit (its logs and checks
are written first, the row last, in one synced write); a row that is not whole, and a finished cell
with a log line or check row that is not whole, are dropped so the cell runs again, and the lines of
cells without a row are pruned so a resume does not append them twice."""
from __future__ import annotations

import os
import re
from pathlib import Path

from bench.harness.logs import CELL_LOGS
from bench.results.store import KEY_COLUMNS, NUMERIC, append_csv, cell_key, cell_of, lines, records


def summary_rows(path: Path) -> tuple[list[dict[str, str]], list[str]]:
    """(whole rows, one note per row that is not): a whole row has every column, ends with a newline (the
    write finished), names its cell and holds numbers where numbers go. A row cut by an interrupted write,
    or two rows glued into one line, is not whole."""
    if not path.exists():
        return [], []
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    recs = records(text)
    if not recs:
        return [], []
    (_, header), rows, notes = recs[0], [], []
    if header is None or any("\ufffd" in h for h in header):   # the columns themselves cannot be read
        return [], [f"{path} line 1: the header is not UTF-8 CSV, so no row can be trusted; every cell runs again"]
    for i, (n, values) in enumerate(recs[1:], 1):
        if values is None or not any(v.strip() for v in values):
            if values is None:
                notes.append(f"{path} line {n}: not CSV, dropped")
            continue
        row = dict(zip(header, values))
        why = ("cut short (no end of line)" if i == len(recs) - 1 and not text.endswith(("\n", "\r")) else
               "not UTF-8" if any("\ufffd" in v for v in values) else
               f"{len(values)} fields, the header has {len(header)}" if len(values) != len(header) else
               "no cell key" if any(not row.get(c) for c in KEY_COLUMNS) else _not_numbers(row))
        if why:
            notes.append(f"{path} line {n}: incomplete summary row ({why})")
        else:
            rows.append(row)
    return rows, notes


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


def prune_unfinished(out: Path) -> int:
    """Drop log and check lines of cells that have no summary row (a run interrupted mid-cell),
    so resuming does not append them twice. A line that does not parse (the half-written last line
    of an interrupted run) belongs to no finished cell and is dropped too. Returns the number of
    lines dropped."""
    done = {"/".join(k) for k in done_cells(out)}
    dropped = 0
    for name in CELL_LOGS:
        path = out / name
        if not path.exists():
            continue
        every = lines(path.read_text(encoding="utf-8", errors="surrogateescape"))
        keep = [ln for ln in every if not ln.strip() or cell_of(ln) in done]
        if len(keep) != len(every):
            dropped += len(every) - len(keep)
            path.write_text("".join(keep), encoding="utf-8", errors="surrogateescape")
    checks = out / "checks.csv"
    recs = records(checks.read_text(encoding="utf-8-sig", errors="replace")) if checks.exists() else []
    if recs and recs[0][1]:
        header = recs[0][1]
        keep_rows = [dict(zip(header, v)) for _, v in recs[1:]
                     if v is not None and len(v) == len(header) and "/".join(v[:len(KEY_COLUMNS)]) in done]
        if len(keep_rows) != len(recs) - 1:
            dropped += len(recs) - 1 - len(keep_rows)
            tmp = checks.with_name(".checks.csv.tmp")
            tmp.write_bytes(b"")
            append_csv(tmp, header, keep_rows)
            os.replace(tmp, checks)
    return dropped


def damaged_cells(out: Path, done: set[tuple[str, ...]]) -> dict[str, str]:
    """Finished cells (by name) with a log line or a check row that is not whole (cut, glued, not UTF-8),
    and where: their rows would read as complete cells with part of their data gone, so they run again.
    A damaged line whose cell name is itself cut or garbled reruns every cell it could belong to."""
    names = {"/".join(k): k for k in done}
    found: dict[str, str] = {}
    for name in CELL_LOGS:
        path = out / name
        if not path.exists():
            continue
        for n, raw in enumerate(path.read_bytes().split(b"\n"), 1):
            try:
                whole = not raw.strip() or cell_of(raw.decode("utf-8")) is not None
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
    recs = records(raw.decode("utf-8-sig", errors="replace"))
    width = len(recs[0][1] or ()) if recs else 0
    start = 1
    for n, values in recs:
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


def done_cells(out: Path) -> set[tuple[str, ...]]:
    """The cells whose summary row is whole (bench.results.resume says what whole is)."""
    return {cell_key(r) for r in summary_rows(out / "summary.csv")[0]}
