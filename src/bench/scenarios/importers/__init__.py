"""Turn a real transcript into a scenario (`compaction-bench import FORMAT PATH --out FILE`).

Formats: openai-chat (OpenAI chat messages, JSON or JSONL, incl. tau-bench
records), swe-agent (.traj), openhands (event-stream JSONL, one task a line),
claude-code (session log JSONL), codex (rollout JSONL), atif (Harbor's trajectory JSON). A file holding several sessions (tau-bench,
OpenHands) needs `--record N` (0-based) for one file or `--all` to write one
scenario per session into the directory `--out`. PATH may also be a Hugging Face
dataset id (`hf:owner/name`, with `--split`), read with `datasets` when online.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any

from bench.errors import BadInput
from bench.parsing import long_number_line, read_text
from bench.scenarios.importers.common import Transcript, dump, scenario, session_tokens, slug

FORMATS = {"openai-chat": "openai_chat", "swe-agent": "swe_agent", "openhands": "openhands", "claude-code": "claude_code",
           "codex": "codex", "atif": "atif"}
HF_PREFIX = "hf:"


def read_json(path: Path) -> Any:
    """A JSON document, or a JSONL file as a list of its lines' values; syntax errors name the line.

    Local files are read with the json module rather than `datasets`: Arrow's schema
    inference unifies nested records (adding null keys, turning tool arguments into
    structs), which would change the transcript we are trying to keep verbatim.
    """
    text = read_text(path)
    if path.suffix != ".jsonl":
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            if path.suffix == ".json" or exc.msg != "Extra data":
                raise BadInput(f"{path}:{exc.lineno}: not valid JSON: {exc.msg} (column {exc.colno})")
        except RecursionError:
            raise BadInput(f"{path}: not usable JSON: nested too deeply")
        except ValueError:   # a number over Python's 4,300-digit limit
            raise BadInput(f"{path}:{long_number_line(text)}: not usable JSON: a number has more than 4,300 digits")
        else:
            if (where := _lone_surrogate(value)) is not None:
                raise BadInput(f"{path}: {where}: text holds a lone UTF-16 surrogate (\\ud800-\\udfff), not a character")
            return value
    rows, problems = [], []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                problems.append(f"{path}:{n}: not valid JSON: {exc.msg} (column {exc.colno})")
                continue
            except RecursionError:
                problems.append(f"{path}:{n}: not usable JSON: nested too deeply")
                continue
            except ValueError:
                problems.append(f"{path}:{n}: not usable JSON: a number has more than 4,300 digits")
                continue
            if (where := _lone_surrogate(rows[-1])) is not None:
                problems.append(f"{path}:{n}: {where}: text holds a lone UTF-16 surrogate (\\ud800-\\udfff), not a character")
    if problems:
        raise BadInput(problems[:20] + ([f"{path}: ... and {len(problems) - 20} more bad lines"] if len(problems) > 20 else []))
    return rows


def _lone_surrogate(value: Any) -> str | None:
    """Where (a JSON path) the first string that UTF-8 cannot store is, if any: JSON may escape
    half a surrogate pair, and such a string would fail when the scenario is written."""
    stack: list[tuple[Any, str]] = [(value, "$")]
    while stack:
        v, where = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return where
        elif isinstance(v, dict):
            for k, item in reversed(list(v.items())):
                stack.append((k, f"{where} (a key)"))
                stack.append((item, f"{where}.{k}"))
        elif isinstance(v, list):
            stack.extend((item, f"{where}[{i}]") for i, item in reversed(list(enumerate(v))))
    return None


def read_hub(name: str, split: str) -> list[Any]:
    """Rows of a Hugging Face dataset: a Hub id (needs network or a local datasets cache), a folder written by
    `save_to_disk`, or a folder of data files `load_dataset` reads. `datasets` is imported here, when asked for:
    it is slow to import and most runs never need it. Arrow gives every record of a column every key any of them
    has, as null; those keys are dropped again (`pruned`), so a row reads as the record it was."""
    try:
        import datasets
    except ImportError:
        raise BadInput(f"{name}: the 'datasets' package is not installed")
    datasets.disable_progress_bars()   # only the CLI prints: its one line per problem, never a bar
    local = Path(name)
    try:
        if local.is_dir() and ((local / "state.json").exists() or (local / "dataset_dict.json").exists()):
            ds = datasets.load_from_disk(str(local))
            if isinstance(ds, datasets.DatasetDict):
                if split not in ds:
                    raise BadInput(f"{name}: no split '{split}' (it has: {', '.join(ds)}); pick one with --split")
                ds = ds[split]
        else:
            ds = datasets.load_dataset(name, split=split)
    except BadInput:
        raise
    except Exception as exc:  # datasets raises many kinds (connection, not found, config): all are bad input here
        raise BadInput(f"{name}: cannot load split '{split}': {' '.join(str(exc).split())[:300]}")
    return [pruned(dict(row)) for row in ds]


def pruned(value: Any) -> Any:
    """`value` without the null-valued keys of its mappings, at every depth."""
    if isinstance(value, dict):
        return {k: pruned(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [pruned(v) for v in value]
    return value


@dataclass
class Imported:
    """One scenario an import wrote: where, its data, and what the importer noticed."""
    target: Path
    data: dict[str, Any]
    origin: str
    notes: list[str]


def import_transcripts(fmt: str, path: str, out: Path, *, record: int | None = None, everything: bool = False,
                       window: int | None = None, user: str = "User", id: str | None = None,
                       split: str = "train", licence: str = "unknown", min_tokens: int = 0) -> tuple[list[Imported], int]:
    """Read a transcript file (or hf:OWNER/NAME dataset), write one scenario per chosen session; returns
    what was written and how many sessions were renamed because two shared an id."""
    if window is not None and window <= 0:
        raise BadInput(f"--window: must be a positive integer, got {window}")
    if fmt not in FORMATS:
        raise BadInput(f"import: unknown format '{fmt}' (one of {', '.join(FORMATS)})")
    transcripts, digest = read_sessions(fmt, path, split, id)
    chosen = _choose(transcripts, record, everything, path)
    if everything and out.suffix in (".json", ".yaml", ".yml"):
        raise BadInput(f"--out: with --all, --out is a directory, got the file name {out}")
    results = [build(fmt, tr, digest, split, user=user, window=window, licence=licence) for tr in chosen]
    if everything and min_tokens > 0:
        pairs = [(tr, r) for tr, r in zip(chosen, results) if session_tokens(r[0]) >= min_tokens]
        chosen, results = [tr for tr, _ in pairs], [r for _, r in pairs]
    renamed = unique_ids([data for data, _ in results]) if len(chosen) > 1 or everything else 0
    written = []
    for tr, (data, notes) in zip(chosen, results):
        if len(chosen) == 1 and not everything:
            if id:
                data["id"] = slug(id)
            target = out
        else:
            target = out / f"{data['id']}.json"
        dump(data, target)
        written.append(Imported(target, data, tr.origin, notes))
    return written, renamed


def read_sessions(fmt: str, path: str, split: str = "train", id: str | None = None) -> tuple[list[Transcript], str | None]:
    """The sessions of a transcript file (or hf: dataset) in neutral form, and the file's SHA-256 (None for hf:)."""
    if path.startswith(HF_PREFIX):
        raw, digest = read_hub(path[len(HF_PREFIX):], split), None
    else:
        raw, digest = read_json(Path(path)), hashlib.sha256(Path(path).read_bytes()).hexdigest()
    stem = slug(id or Path(path.removeprefix(HF_PREFIX)).stem.split(".")[0])
    return reader(fmt).read(raw, path, stem), digest


def reader(fmt: str):
    """The module that reads `fmt` (`read(raw, origin, stem)`), imported when a format is asked for."""
    return import_module(f"{__name__}.{FORMATS[fmt]}")


def build(fmt: str, tr: Transcript, digest: str | None, split: str, **kw: Any) -> tuple[dict[str, Any], list[str]]:
    """One session's scenario with its provenance (`kw`: user, window, licence)."""
    licence = kw.pop("licence", "unknown")
    return scenario(tr, tags=[fmt], provenance={
        "format": fmt, "source": tr.origin if digest else f"{tr.origin} (split {split})",
        **({"sha256": digest} if digest else {}), "licence": licence}, **kw)


def unique_ids(scenarios: list[dict[str, Any]]) -> int:
    """Give every scenario of one import its own id (and so its own file): tau-bench holds several
    trials of a task, OpenHands several records of an instance. Returns how many were renamed."""
    taken = {d["id"] for d in scenarios}
    seen: set[str] = set()
    renamed = 0
    for d in scenarios:
        if d["id"] in seen:
            n, stem = 2, d["id"][:55].rstrip("-")
            while f"{stem}-{n}" in taken:
                n += 1
            d["id"] = f"{stem}-{n}"
            taken.add(d["id"])
            renamed += 1
        seen.add(d["id"])
    return renamed


def _choose(transcripts: list[Transcript], record: int | None, everything: bool, origin: str) -> list[Transcript]:
    if not transcripts:
        raise BadInput(f"{origin}: no conversation found")
    if everything:
        return transcripts
    if record is not None:
        if not 0 <= record < len(transcripts):
            raise BadInput(f"--record: {origin} holds {len(transcripts)} sessions (0..{len(transcripts) - 1}), got {record}")
        return [transcripts[record]]
    if len(transcripts) > 1:
        raise BadInput(f"{origin}: holds {len(transcripts)} sessions; pick one with --record N (0-based) "
                       f"or write them all with --all --out DIR")
    return transcripts
