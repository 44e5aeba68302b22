"""Locks: per partition (one compaction at a time), per bank (one delete-and-prune at a time),
per account (one bank-name claim at a time), and per table a shared/exclusive pair
(streaming reads and writes hold it shared, dropping old versions holds it exclusive, so a
long export never loses its files midway and no write in flight loses its new files).

On a local LanceDB folder the lock is an `flock` on a file under `<uri>/_locks/`: it holds
across processes and threads, and the kernel releases it when its holder dies (even by
`kill -9`), so a crash never leaves a partition locked. Keys hash onto LOCK_STRIPES files
per bank: two keys sharing a stripe only wait for each other.

On object storage the lock is a lease from the lease service when one is configured
(`memory.leases`, e.g. `MEMBANK_LEASES=prefect`): it holds across processes and machines, and
a holder that dies frees it when its lease lapses (60 s or more). The versions pair becomes a
limit of VERSION_SLOTS slots: reads and writes take one each, a prune takes them all. Then a
prune may also delete files no version references (`spans_machines`), so a rewrite that lost
a race leaves no copy of deleted rows behind. Without a service the lock on object storage is
in-process only: LanceDB's conditional commits and the store-level conflict check in `apply`
keep concurrent writers and compactions correct, but a prune deletes no unreferenced file
(another machine's write in flight may own it), so such a copy waits for LanceDB's 7-day
cleanup.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from pathlib import Path

from memory import leases
from memory.errors import StorageError
from memory.retry import RetryPolicy

LOCK_STRIPES = 1024
VERSION_SLOTS = 64
"""Slots of a table's versions lease: at most this many reads and writes at once across
machines, and a prune waits until it holds all of them."""
POLL_SECONDS = 0.05
POLL = RetryPolicy(
    attempts=None,
    backoff_seconds=POLL_SECONDS,
    max_wait_seconds=POLL_SECONDS,
    max_total_seconds=0,
)
"""A file lock another process holds is tried again every POLL_SECONDS until the timeout
(`max_total_seconds`, set per call)."""

_local_locks: dict[str, threading.Lock] = {}
_guard = threading.Lock()


def is_local(uri: str) -> bool:
    """Return True for a local folder (where these locks hold across processes)."""
    return "://" not in uri or uri.startswith("file://")


def spans_machines(uri: str) -> bool:
    """Return True when a lease service covers the storage `uri`: its locks then hold
    across machines, so a prune may delete files no version references (no other
    machine's write can be in flight meanwhile). False for local folders (their file locks
    hold across the processes of one machine) and for object storage without a service."""
    return not is_local(uri) and leases.configured() is not None


def _lease_name(uri: str, name: str) -> str:
    """Return the lease service's name of the lock `name` on storage `uri` (the same on
    every machine that opens the same URI)."""
    digest = hashlib.sha256(f"{uri.rstrip('/')}\x00{name}".encode()).hexdigest()[:32]
    return f"membank-{digest}"


def _stripe(bank_id: str, key: str) -> str:
    digest = hashlib.sha256(f"{bank_id}\x00{key}".encode()).digest()
    return f"{bank_id}.{int.from_bytes(digest[:4], 'little') % LOCK_STRIPES}"


@contextmanager
def partition_lock(
    uri: str, bank_id: str, key: str, *, timeout: float | None, poll: RetryPolicy = POLL
) -> Iterator[bool]:
    """Hold the partition's lock for the block; yields False if not acquired in `timeout`.

    `timeout=0` tries once; `None` waits as long as it takes. `poll` says how a local lock
    held elsewhere is tried again meanwhile (its time bound is replaced by `timeout`).
    """
    with _named_lock(uri, _stripe(bank_id, key), timeout, poll) as held:
        yield held


@contextmanager
def _file_lock(
    uri: str, name: str, timeout: float | None, *, shared: bool = False, poll: RetryPolicy = POLL
) -> Iterator[bool]:
    fd = _open_lock_file(uri, name, shared=shared)
    if fd is None:  # read-only storage without this lock file: nothing to share it with
        yield True
        return
    mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    try:
        if timeout is None:  # wait in the kernel: the waiter shows in /proc/locks meanwhile
            fcntl.flock(fd, mode)
            yield True
            return
        try:
            replace(poll, max_total_seconds=timeout).run(
                lambda: fcntl.flock(fd, mode | fcntl.LOCK_NB),
                when=lambda exc: isinstance(exc, BlockingIOError),
            )
            acquired = True
        except BlockingIOError:  # still held elsewhere when the timeout ran out
            acquired = False
        yield acquired
    finally:
        os.close(fd)


_READ_ONLY = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def _open_lock_file(uri: str, name: str, *, shared: bool) -> int | None:
    """Return an open descriptor of the lock file `name` under `<uri>/_locks/`, made if needed.

    Storage we may not write (a read-only mount, another user's folder) can still be read: a
    shared lock opens an existing lock file read-only (`flock` needs no write access), and
    without one it returns None, since no prune can run where the file cannot be made (on a
    folder another user writes, a prune that starts after this read began makes the read
    fail, as on object storage). An exclusive lock there is a StorageError.
    """
    path = Path(uri.removeprefix("file://")) / "_locks" / f"{name}.lock"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if shared and exc.errno in _READ_ONLY:
            try:
                return os.open(path, os.O_RDONLY)
            except OSError:
                return None
        raise StorageError(
            f"cannot use the storage folder {uri!r}: {exc.strerror or exc} "
            "(check --data / MEMBANK_URI, or its permissions)"
        ) from exc


@contextmanager
def bank_lock(
    uri: str, bank_id: str, *, timeout: float | None, poll: RetryPolicy = POLL
) -> Iterator[bool]:
    """Hold the bank-wide lock that serialises deletes and prunes of one bank's table."""
    with _named_lock(uri, f"{bank_id}.bank", timeout, poll) as held:
        yield held


@contextmanager
def names_lock(uri: str, account: str) -> Iterator[None]:
    """Hold the account's bank-name lock: a name check and the registry write that claims the
    name happen together, so two creates racing for one name make one bank."""
    digest = hashlib.sha256(account.encode()).hexdigest()[:16]
    with _named_lock(uri, f"names.{digest}", None):
        yield


@contextmanager
def creating(uri: str, table: str) -> Iterator[None]:
    """Hold the right to create `table`: one creator at a time, so a creation that would
    lose a race never commits (LanceDB commits the loser as an Overwrite of the winner's
    table, which fails or empties the winner's first writes)."""
    with _named_lock(uri, f"{table}.create", None):
        yield


def reading(uri: str, table: str) -> AbstractContextManager[None]:
    """Hold `table`'s version files in place for a streaming read (shared with other readers).

    Local folders only: on object storage a stream that loses a race with a prune fails
    and is run again (exports are written to a temporary file first). On a folder this
    process cannot write (a read-only mount) the read needs no lock file: see
    `_open_lock_file`.
    """
    return _versions_lock(uri, table, shared=True)


def writing(uri: str, table: str) -> AbstractContextManager[None]:
    """Hold `table` shared while a write's files are written and committed (local folders).

    A version cleanup that deletes files no version references (`pruning`) would otherwise
    take the files of a write in flight, which its commit then points at.
    """
    return _versions_lock(uri, table, shared=True)


def pruning(uri: str, table: str) -> AbstractContextManager[None]:
    """Hold `table` exclusively while old versions are dropped: waits for streaming reads and
    for writes in flight."""
    return _versions_lock(uri, table, shared=False)


@contextmanager
def _versions_lock(uri: str, table: str, *, shared: bool) -> Iterator[None]:
    if not is_local(uri):
        service = leases.configured()
        if service is None:
            yield
            return
        slots = 1 if shared else VERSION_SLOTS
        name = _lease_name(uri, f"{table}.versions")
        with service.hold(name, slots=slots, limit=VERSION_SLOTS, timeout=None):
            yield
        return
    with _file_lock(uri, f"{table}.versions", None, shared=shared):
        yield


@contextmanager
def _named_lock(
    uri: str, name: str, timeout: float | None, poll: RetryPolicy = POLL
) -> Iterator[bool]:
    if is_local(uri):
        with _file_lock(uri, name, timeout, poll=poll) as held:
            yield held
        return
    service = leases.configured()
    if service is not None:
        with service.hold(_lease_name(uri, name), slots=1, limit=1, timeout=timeout) as held:
            yield held
        return
    with _guard:
        lock = _local_locks.setdefault(f"{uri}\x00{name}", threading.Lock())
    acquired = lock.acquire(timeout=-1 if timeout is None else timeout)
    try:
        yield acquired
    finally:
        if acquired:
            lock.release()
