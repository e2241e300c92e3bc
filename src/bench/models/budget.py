"""One account's budget of calls in flight shared by every process that sees a folder (`limits.shared`).

Why a file: shards of one sweep run on several machines (a Kubernetes Indexed Job, a SLURM array)
that share a filesystem and nothing else, and they spend one key's limit together. The file
`<folder>/<account hash>.json`, read and written under an exclusive lock (the filesystem must
support `flock`, as local disks and NFSv4 do), lists the leases in use and the time (wall clock)
before which no process may send: a 429 in one shard holds all of them. A lease carries its host
and process, so one left by a process that died is dropped at once on its host, and by every host
after `LEASE_S`.
"""
from __future__ import annotations

import fcntl
import hashlib
import itertools
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

from bench.errors import BadInput

LEASE_S = 900.0       # longer than any one request may take (timeout x 1.5 + 5 s, retries wait outside)
_COUNTER = itertools.count()


class SharedBudget:
    poll = 0.05       # seconds between looks at a full budget

    def __init__(self, folder: str, account: str, total: int):
        self.total = total
        path = Path(folder).expanduser()
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput(f"limits.shared: cannot use {folder}: {exc.strerror or exc}") from None
        self.path = path / f"{hashlib.sha256(account.encode()).hexdigest()[:16]}.json"
        self.host = socket.gethostname()

    def _locked(self, change) -> Any:
        """Run `change(state)` on the file's state under its lock, write it back, return what it returns."""
        with open(self.path, "a+", encoding="utf-8") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                fh.seek(0)
                try:
                    state = json.loads(fh.read() or "{}")
                except ValueError:      # a torn write of a process killed mid-way: start afresh
                    state = {}
                if not isinstance(state, dict):
                    state = {}
                state.setdefault("leases", {})
                state.setdefault("until", 0.0)
                out = change(state)
                fh.seek(0)
                fh.truncate()
                fh.write(json.dumps(state))
                fh.flush()
                return out
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _alive(self, lease: dict[str, Any], now: float) -> bool:
        if now > lease.get("expires", 0):
            return False
        if lease.get("host") == self.host:
            try:
                os.kill(int(lease.get("pid", 0)), 0)
            except (ProcessLookupError, ValueError):
                return False
            except PermissionError:
                return True
        return True

    def take(self) -> str | float | None:
        """A lease id; or the seconds still to wait when the account is held after a 429; or None when
        every lease is in use."""
        def change(state: dict[str, Any]) -> str | float | None:
            now = time.time()
            state["leases"] = {k: v for k, v in state["leases"].items() if isinstance(v, dict) and self._alive(v, now)}
            if now < float(state["until"]):
                return float(state["until"]) - now
            if len(state["leases"]) >= self.total:
                return None
            lease = f"{self.host}:{os.getpid()}:{next(_COUNTER)}"
            state["leases"][lease] = {"host": self.host, "pid": os.getpid(), "expires": now + LEASE_S}
            return lease
        return self._locked(change)

    def give(self, lease: str | None, hold: float = 0.0) -> None:
        """Return a lease; `hold` > 0 (a 429) holds every process of the account that long from now."""
        def change(state: dict[str, Any]) -> None:
            state["leases"].pop(lease, None)
            if hold > 0:
                state["until"] = max(float(state["until"]), time.time() + hold)
        self._locked(change)


__all__ = ["SharedBudget", "LEASE_S"]
