"""Storage races with other processes: how LanceDB reports them, and the store's retry policy.

Two races are expected on a table shared by several processes (CLI calls, workers, sweeps):
- a commit conflict: another process committed a change this one's commit cannot be
  rebased over (a prune's rewrite of fragments that a concurrent delete touched);
- a version gone: another process pruned the version this one started from, so a data,
  deletion or transaction file is missing.
Either race is rerun from the latest version (`STORE_RETRY`, `StoreTuning.retry`); every
other storage error goes up at once. This is the only layer that retries them
(`memory.retry` says which layer retries what).

`race_of` tells them apart by exception type first: `lance.commit.CommitConflictError`
(an `OSError`, with `retryable` False for a conflict no retry resolves). Measured on pylance
14.0.2 / lancedb 0.40.0 (two handles on one table, one committing under the other), only a
commit through `LanceDataset.commit` raises that type. The rest have no type of their own,
so the message is the documented fallback:
- a compaction's commit (`compact_files`, `Compaction.commit`) over a concurrent delete:
  plain `OSError` "Retryable commit conflict for version N: ... preempted ...";
- two config commits at once (`update_config`): plain `OSError` "Incompatible transaction:
  This UpdateConfig transaction is incompatible with concurrent transaction ...";
- a pruned version: `RuntimeError` ("lance error: Not found: ...") from lancedb reads and
  deletes, `pyarrow.ArrowInvalid` ("External error: Not found: ...") from lance scans, or
  `OSError`, depending on the call.
A plain delete, update or merge-insert over a concurrent commit is rebased by Lance itself;
when its own retries run out it says "Too many concurrent writers", which is not rerun here.
"""

from __future__ import annotations

from typing import Literal

from lance.commit import CommitConflictError

from memory.retry import RetryPolicy

__all__ = [
    "STORAGE_ERRORS",
    "STORE_RETRY",
    "Race",
    "RetryPolicy",
    "lost_race",
    "pruned_under",
    "race_of",
]

Race = Literal["conflict", "gone"]

STORAGE_ERRORS = (OSError, RuntimeError, ValueError)
"""What LanceDB raises for storage failures (pyarrow's ArrowInvalid is a ValueError)."""

STORE_RETRY = RetryPolicy(
    attempts=6, backoff_seconds=0.1, max_wait_seconds=1.6, jitter_seconds=0.05
)
"""Six runs in all, waiting 0.1 s doubled each time plus up to 0.05 s (at most 3.35 s in all:
two processes pruning one table on object storage settle within that here)."""

_CONFLICT_MESSAGES = ("commit conflict", "write contention", "incompatible")
_GONE_MESSAGES = ("not found",)


def race_of(exc: BaseException) -> Race | None:
    """Return which race with another process `exc` reports, or None for any other error."""
    if isinstance(exc, CommitConflictError):
        return "conflict" if exc.retryable else None
    if not isinstance(exc, STORAGE_ERRORS):
        return None
    message = str(exc).lower()  # no type for these: see the module docstring
    if any(words in message for words in _CONFLICT_MESSAGES):
        return "conflict"
    if any(words in message for words in _GONE_MESSAGES):
        return "gone"
    return None


def lost_race(exc: BaseException) -> bool:
    """Return whether `exc` reports either race (a step worth rerunning from the latest)."""
    return race_of(exc) is not None


def pruned_under(exc: BaseException) -> bool:
    """Return whether `exc` reports a version pruned under a read (the "gone" race only)."""
    return race_of(exc) == "gone"
