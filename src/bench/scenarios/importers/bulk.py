"""`compaction-bench import FORMAT FOLDER --out DIR`: a library of real sessions in one go.

Every file under the folder with a suffix the format reads is imported, every session of it (as `--all`
does), and sessions shorter than `--min-tokens` are left out: a team builds a library of long sessions, the
ones that need compaction, from hundreds of logs. Ids are made unique across the whole folder. A file that
cannot be read is reported, one line per problem, after the others are written: one broken log does not
cost the rest.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bench.errors import BadInput
from bench.scenarios.importers import Imported, build, read_sessions, unique_ids
from bench.scenarios.importers.common import dump, session_tokens

SUFFIXES = {"claude-code": (".jsonl",), "codex": (".jsonl",), "openhands": (".jsonl", ".json"),
            "openai-chat": (".json", ".jsonl"), "swe-agent": (".traj", ".json"), "atif": (".json", ".jsonl")}


@dataclass
class Bulk:
    written: list[Imported] = field(default_factory=list)
    files: int = 0
    short: int = 0                      # sessions under --min-tokens, left out
    renamed: int = 0
    problems: list[str] = field(default_factory=list)


def import_folder(fmt: str, folder: Path, out: Path, *, min_tokens: int = 0, **kw) -> Bulk:
    """`kw`: user, window, licence, as for one file."""
    if out.suffix in (".json", ".yaml", ".yml"):
        raise BadInput(f"--out: importing a folder writes a directory, got the file name {out}")
    files = sorted(f for f in folder.rglob("*") if f.is_file() and f.suffix in SUFFIXES[fmt])
    if not files:
        raise BadInput(f"{folder}: no {fmt} files in it ({', '.join(SUFFIXES[fmt])})")
    done = Bulk(files=len(files))
    kept = []
    for f in files:
        try:
            transcripts, digest = read_sessions(fmt, str(f))
            for tr in transcripts:
                data, notes = build(fmt, tr, digest, "train", **kw)
                if session_tokens(data) < min_tokens:
                    done.short += 1
                    continue
                kept.append((tr, data, notes))
        except BadInput as exc:
            done.problems.extend(exc.problems)
    done.renamed = unique_ids([data for _, data, _ in kept])
    for tr, data, notes in kept:
        target = out / f"{data['id']}.json"
        dump(data, target)
        done.written.append(Imported(target, data, tr.origin, notes))
    return done

