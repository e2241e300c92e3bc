"""`compaction-bench import FORMAT FOLDER --out DIR` and `import --dataset NAME --out DIR`: a library of real
sessions in one go.

Every file under the folder with a suffix the format reads is imported, every session of it (as `--all`
does), and sessions shorter than `--min-tokens` are left out: a team builds a library of long sessions, the
ones that need compaction, from hundreds of logs. A dataset (a Hugging Face id or a local dataset folder, read
with `datasets`) gives one session a row, each row's format told by its keys when no format is given. Ids are
made unique across the whole import. A file or row that cannot be read is reported, one line per problem, after
the others are written: one broken log does not cost the rest.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.errors import BadInput
from bench.scenarios.importers import Imported, build, read_hub, read_sessions, reader, unique_ids
from bench.scenarios.importers.common import Transcript, dump, session_tokens, slug
from bench.scenarios.importers.openai_chat import CONVERSATION_KEYS

SUFFIXES = {"claude-code": (".jsonl",), "codex": (".jsonl",), "openhands": (".jsonl", ".json"),
            "openai-chat": (".json", ".jsonl"), "swe-agent": (".traj", ".json"), "atif": (".json", ".jsonl")}
# The formats whose one session is one record, so a dataset row can hold it (Claude Code and Codex logs are a
# session a file, a record a line: a row would hold one line of a session).
ROW_FORMATS = ("openai-chat", "openhands", "swe-agent", "atif")
READS = ("openai-chat (a list of messages under messages, conversation or traj), openhands (a history of events), "
         "swe-agent (a history or trajectory of messages) or atif (steps)")


@dataclass
class Bulk:
    written: list[Imported] = field(default_factory=list)
    files: int = 0                      # files, or dataset rows
    short: int = 0                      # sessions under --min-tokens, left out
    renamed: int = 0
    problems: list[str] = field(default_factory=list)
    kept: list[tuple[Transcript, dict[str, Any], list[str]]] = field(default_factory=list, repr=False)

    def add(self, fmt: str, transcripts: list[Transcript], digest: str | None, split: str, min_tokens: int,
            kw: dict[str, Any]) -> None:
        for tr in transcripts:
            data, notes = build(fmt, tr, digest, split, **kw)
            if session_tokens(data) < min_tokens:
                self.short += 1
                continue
            self.kept.append((tr, data, notes))

    def write(self, out: Path) -> "Bulk":
        self.renamed = unique_ids([data for _, data, _ in self.kept])
        for tr, data, notes in self.kept:
            target = out / f"{data['id']}.json"
            dump(data, target)
            self.written.append(Imported(target, data, tr.origin, notes))
        return self


def import_folder(fmt: str, folder: Path, out: Path, *, min_tokens: int = 0, **kw) -> Bulk:
    """`kw`: user, window, licence, as for one file."""
    _directory(out)
    files = sorted(f for f in folder.rglob("*") if f.is_file() and f.suffix in SUFFIXES[fmt])
    if not files:
        raise BadInput(f"{folder}: no {fmt} files in it ({', '.join(SUFFIXES[fmt])})")
    done = Bulk(files=len(files))
    for f in files:
        try:
            transcripts, digest = read_sessions(fmt, str(f))
            done.add(fmt, transcripts, digest, "train", min_tokens, kw)
        except BadInput as exc:
            done.problems.extend(exc.problems)
    return done.write(out)


def import_dataset(name: str, out: Path, *, fmt: str | None = None, split: str = "train", min_tokens: int = 0,
                   **kw) -> Bulk:
    """Every row of a dataset of agent trajectories, one scenario each (`fmt`: every row's format; None: each row's
    own, told by its keys). A dataset none of whose rows is in a format a row can hold is one line."""
    _directory(out)
    if fmt is not None and fmt not in ROW_FORMATS:
        raise BadInput(f"--dataset: a row cannot hold a {fmt} session (a session a file, a record a line); "
                       f"rows are read as {', '.join(ROW_FORMATS)}")
    rows = read_hub(name, split)
    if not rows:
        raise BadInput(f"{name}: split '{split}' has no rows")
    formats = [fmt or detect(row) for row in rows]
    if not any(formats):
        columns = ", ".join(sorted(rows[0])) if isinstance(rows[0], dict) else type(rows[0]).__name__
        raise BadInput(f"{name}: its rows are in no supported format (columns: {columns}); a row is read as {READS}")
    done = Bulk(files=len(rows))
    stem = slug(Path(name).name or name)
    for i, (row, f) in enumerate(zip(rows, formats)):
        origin = f"{name} row {i}"
        if f is None:
            done.problems.append(f"{origin}: in no supported format (columns: {', '.join(sorted(row))}); "
                                 f"a row is read as {READS}")
            continue
        try:
            done.add(f, reader(f).read(row, origin, slug(f"{stem}-{i}")), None, split, min_tokens, kw)
        except BadInput as exc:
            done.problems.extend(exc.problems)
    return done.write(out)


def detect(row: Any) -> str | None:
    """The format of one dataset row, by its keys (openhands before swe-agent: both have a `history`)."""
    if not isinstance(row, dict):
        return None
    if isinstance(row.get("steps"), list):
        return "atif"
    for key in ("history", "trajectory"):
        seq = row.get(key)
        if isinstance(seq, list) and seq and all(isinstance(e, dict) for e in seq):
            if key == "history" and any("action" in e or "observation" in e for e in seq):
                return "openhands"
            if all("role" in e for e in seq):
                return "swe-agent"
    if any(isinstance(row.get(k), list) and row[k] and all(isinstance(m, dict) and "role" in m for m in row[k])
           for k in CONVERSATION_KEYS):
        return "openai-chat"
    return None


def _directory(out: Path) -> None:
    if out.suffix in (".json", ".yaml", ".yml"):
        raise BadInput(f"--out: a folder or a dataset imports into a directory, got the file name {out}")
