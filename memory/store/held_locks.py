"""The store's locks as methods (the `Locks` part of `memory.ports`): the domain holds a
partition, a bank or an account's names by id, never by storage path (`locks` takes them)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from memory.store import locks


class Locks:
    """Lock methods of `LanceStore` over `memory.store.locks` on its storage URI."""

    uri: str

    @property
    def partitions_exclusive(self) -> bool:
        """True on a local folder: the partition lock is an `flock` the kernel holds for its
        holder until it lets go or dies, whatever other process asks."""
        return locks.is_local(self.uri)

    @contextmanager
    def partition_lock(
        self, bank_id: str, key: str, *, timeout: float | None = None
    ) -> Iterator[bool]:
        """Hold the partition's lock (one compaction or merge at a time); yields False when
        not acquired within `timeout` seconds (0: try once; None: wait)."""
        with locks.partition_lock(self.uri, bank_id, key, timeout=timeout) as held:
            yield held

    @contextmanager
    def bank_lock(self, bank_id: str, *, timeout: float | None = None) -> Iterator[bool]:
        """Hold the bank's lock (one delete-and-prune at a time); yields False when not
        acquired within `timeout` seconds."""
        with locks.bank_lock(self.uri, bank_id, timeout=timeout) as held:
            yield held

    @contextmanager
    def names_lock(self, account: str) -> Iterator[None]:
        """Hold the account's bank-name lock (one name claim at a time)."""
        with locks.names_lock(self.uri, account):
            yield
