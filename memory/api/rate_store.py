"""The rate limits' token buckets, kept in a small SQLite file every API process of a machine
shares, so a key's limit holds across `membank api --workers N` and across API processes
over the same local storage (each process counting its own would allow N times the limit).

One row per key id: the tokens left and when they were counted (wall-clock seconds, the
same in every process). A request takes a token in one UPSERT statement (atomic in SQLite:
no read-then-write race between processes); WAL journaling and `synchronous=NORMAL` keep
it at tens of microseconds (no fsync per request: a crash may forget the last counts, which
only refills buckets). A LanceDB table is not used: a commit per request costs milliseconds,
adds a table version each time and races other processes' commits (`bench/api_rates.py`).

Where the file is (`rate_file`): beside local storage (`<folder>/_api/ratelimits.sqlite`),
so every process over that folder counts together; on object storage, in the machine's
temporary folder (one file per storage URI), so the workers and processes of one machine
count together and each machine counts its own (N machines allow N times the limit).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

from memory.ops.keys import rate_file

__all__ = ["SharedBuckets", "rate_file"]

_TAKE = """
INSERT INTO buckets (key_id, tokens, counted_at, allowed) VALUES (:key, :limit - 1, :now, 1)
ON CONFLICT (key_id) DO UPDATE SET
    tokens = min(:limit, tokens + max(0.0, :now - counted_at) * :rate)
        - (min(:limit, tokens + max(0.0, :now - counted_at) * :rate) >= 1.0),
    allowed = min(:limit, tokens + max(0.0, :now - counted_at) * :rate) >= 1.0,
    counted_at = max(counted_at, :now)
RETURNING tokens, allowed
"""
"""Refill the key's bucket for the time since it was counted, take a token if one is whole,
return what is left and whether the request may go (every SET reads the row before it)."""

PRUNE_EVERY = 1000
"""Takes of one process between two deletions of idle buckets."""


class SharedBuckets:
    """Token buckets by key id in a SQLite file (thread-safe; shared by processes).

    Args:
        path: the SQLite file (made with its folder when missing).
        limit: tokens of a full bucket (requests per window).
        window: seconds a bucket takes to refill from empty.
        now: wall-clock seconds (the same clock in every process).
    """

    def __init__(
        self, path: Path, limit: int, window: float, now: Callable[[], float] = time.time
    ) -> None:
        self.path = path
        self.limit = limit
        self.window = window
        self.rate = limit / window
        self.now = now
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            path, timeout=10.0, isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS buckets (key_id TEXT PRIMARY KEY, tokens REAL NOT NULL, "
            "counted_at REAL NOT NULL, allowed INTEGER NOT NULL)"
        )
        self._lock = threading.Lock()
        self._takes = 0

    def take(self, key_id: str) -> tuple[bool, int, float]:
        """Take one token of `key_id`'s bucket; returns (allowed, remaining, seconds until a
        token is back when refused, or until the bucket is full when allowed)."""
        moment = self.now()
        values = {"key": key_id, "limit": float(self.limit), "now": moment, "rate": self.rate}
        with self._lock:
            tokens, allowed = self._db.execute(_TAKE, values).fetchone()
            self._takes += 1
            if self._takes % PRUNE_EVERY == 0:  # a bucket idle for a window is full: forget it
                self._db.execute(
                    "DELETE FROM buckets WHERE counted_at < ?", (moment - self.window,)
                )
        wait = (self.limit - tokens) / self.rate if allowed else (1.0 - tokens) / self.rate
        return bool(allowed), int(tokens), wait

    def close(self) -> None:
        """Close the file (the buckets stay in it)."""
        with self._lock:
            self._db.close()
