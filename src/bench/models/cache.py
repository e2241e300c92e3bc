"""The on-disk response cache: a repeated request to a real model costs nothing the second time.

One sqlite file per directory, WAL mode with a busy timeout so several runs
(or processes of one run) can write at once. The key is a hash of everything
that changes the answer — model, api_base, wire messages, tools, generation
parameters, repeat index — and the value is the reply as it first came
(text, tool calls, usage, finish), so a cached answer keeps its original
usage. Nothing else is stored: no request text, no headers, no keys.

Only answers worth repeating stay: an answer cut off at max_tokens is never
stored, and the run forgets the answers of a compaction the strategy rejected
(`forget`), so a later run asks again instead of replaying a failure as good.
`compaction-bench cache stats|clear` looks at and empties it.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import time
from contextlib import closing
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from bench.errors import BadInput

DEFAULT_DIR = "~/.cache/compaction-bench/responses"
SCHEMA = "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, value TEXT, created REAL)"
# The (cache, key) of every call a cell's writer answers, in order, when the cell sets it (each cell runs in
# its own asyncio task, so cells running at once keep separate lists): how the run finds the answers of a
# compaction the strategy rejected, to forget them.
ANSWERED: ContextVar[list[tuple["ResponseCache | None", str]] | None] = ContextVar("answered", default=None)


def responses_dir(enabled: bool = True, directory: str | None = None) -> str | None:
    """The cache directory the `responses:` config block names; None when disabled."""
    if not enabled:
        return None
    return str(Path(os.path.expanduser(directory or DEFAULT_DIR)))


def cache_key(payload: dict[str, Any]) -> str:
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ResponseCache:
    """Opening fails loudly (BadInput: the config names a bad place); a read or write that
    fails later only costs the saving, so it warns once and the call goes on uncached."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.path = Path(directory) / "responses.sqlite"
        self.warned = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._init()
        except (OSError, sqlite3.Error) as exc:
            raise BadInput(f"responses.dir: cannot use {self.path} as the response cache: {exc}") from None

    def _init(self, tries: int = 50) -> None:
        # Switching a new file to WAL takes an exclusive lock that sqlite's busy timeout does
        # not wait for, so caches opened at the same moment (parallel runs) retry briefly.
        for attempt in range(tries):
            try:
                with closing(self._connect()) as db:
                    db.execute("PRAGMA journal_mode=WAL")
                    db.execute(SCHEMA)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc) or attempt == tries - 1:
                    raise
                time.sleep(0.02 * (attempt + 1))

    def _warn(self, exc: Exception) -> None:
        if not self.warned:
            self.warned = True
            print(f"warning: response cache {self.path}: {exc}; going on without it", file=sys.stderr)

    def _connect(self) -> sqlite3.Connection:
        # A connection per operation: calls come from one event loop, and this keeps
        # the object safe to share between threads and to fork.
        return sqlite3.connect(self.path, timeout=30.0, isolation_level=None)

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            with closing(self._connect()) as db:
                row = db.execute("SELECT value FROM responses WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            self._warn(exc)
            return None
        try:
            return json.loads(row[0]) if row else None
        except ValueError:        # a hand-edited or damaged row: ask the model again
            return None

    def put(self, key: str, model: str, value: dict[str, Any]) -> None:
        try:
            with closing(self._connect()) as db:
                db.execute("INSERT OR REPLACE INTO responses (key, model, value, created) VALUES (?, ?, ?, ?)",
                           (key, model, json.dumps(value, ensure_ascii=False), time.time()))
        except sqlite3.Error as exc:
            self._warn(exc)

    def forget(self, keys: list[str]) -> int:
        """Drop these answers (a compaction the strategy rejected); returns how many were there."""
        try:
            with closing(self._connect()) as db:
                return sum(db.execute("DELETE FROM responses WHERE key = ?", (k,)).rowcount for k in set(keys))
        except sqlite3.Error as exc:
            self._warn(exc)
            return 0

    def models(self) -> list[tuple[str, int, float, float]]:
        """(model, answers, oldest, newest) per model."""
        with closing(self._connect()) as db:
            return db.execute("SELECT model, COUNT(*), MIN(created), MAX(created) FROM responses GROUP BY model "
                              "ORDER BY model").fetchall()

    def clear(self, model: str | None = None) -> int:
        with closing(self._connect()) as db:
            cur = db.execute("DELETE FROM responses" + (" WHERE model = ?" if model else ""), (model,) if model else ())
            count = cur.rowcount
            db.execute("VACUUM")
        return count

    def __len__(self) -> int:
        with closing(self._connect()) as db:
            return db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
