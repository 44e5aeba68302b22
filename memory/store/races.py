"""Storage races with other processes: how LanceDB reports them, and the store's one retry policy.

Two races are expected on a table shared by several processes (CLI calls, workers, sweeps):
- a commit conflict: another process committed a change this one's commit cannot be
  rebased over (a prune's rewrite of fragments that a concurrent delete touched). Lance
  raises `lance.commit.CommitConflictError` from some paths, but a compaction's commit
  (`compact_files`) raises a plain `OSError` ("Retryable commit conflict for version N ..."),
  and two config commits at once say one "is incompatible with concurrent transaction".
- a version gone: another process pruned the version this one started from, so a data,
  deletion or transaction file is missing. Lance raises `OSError`, `RuntimeError` ("lance
  error: Not found: ...") or `pyarrow.ArrowInvalid` ("External error: Not found: ...")
  depending on the call; no distinct type.
So, measured on pylance 14.0 / lancedb 0.40, only the message tells the second race and most
cases of the first apart from other failures: `race_of` is the one place that reads it.
Either race is retried from the latest version; every other storage error goes up at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

from lance.commit import CommitConflictError

T = TypeVar("T")

Race = Literal["conflict", "gone"]

STORAGE_ERRORS = (OSError, RuntimeError, ValueError)
"""What LanceDB raises for storage failures (pyarrow's ArrowInvalid is a ValueError)."""


def race_of(exc: BaseException) -> Race | None:
    """Return which race with another process `exc` reports, or None for any other error."""
    if isinstance(exc, CommitConflictError):
        return "conflict" if exc.retryable else None
    if not isinstance(exc, STORAGE_ERRORS):
        return None
    message = str(exc).lower()
    if "commit conflict" in message or "write contention" in message or "incompatible" in message:
        return "conflict"
    if "not found" in message:
        return "gone"
    return None


@dataclass(frozen=True)
class RetryPolicy:
    """How often a storage step that lost a race is run again, and how long to wait between.

    Attributes:
        attempts: runs in all (1 = no retry).
        backoff_seconds: wait before the first rerun; doubled before each further one (the
            defaults wait up to 3.1 s in all: two processes pruning one table on object
            storage settle within that here).
    """

    attempts: int = 6
    backoff_seconds: float = 0.1

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.backoff_seconds < 0:
            raise ValueError("RetryPolicy needs attempts >= 1 and backoff_seconds >= 0")

    def run(
        self,
        action: Callable[[], T],
        *,
        reset: Callable[[], None],
        races: tuple[Race, ...] = ("conflict", "gone"),
    ) -> T:
        """Return `action()`, rerun after `reset()` while it fails with one of `races`.

        Raises:
            OSError, RuntimeError, ValueError: any other storage error at once, or the last
                race once the attempts are used up.
        """
        for attempt in range(self.attempts):
            try:
                return action()
            except STORAGE_ERRORS as exc:
                if race_of(exc) not in races or attempt == self.attempts - 1:
                    raise
            time.sleep(self.backoff_seconds * 2**attempt)
            reset()
        raise AssertionError("unreachable")  # pragma: no cover
