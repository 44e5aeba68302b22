"""What the store answers about deletions and partitions: plain records, no engine."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memory.errors import StorageError


class PrunePending(StorageError):
    """The rows are deleted (no read returns them) but their prune failed; it is due."""


@dataclass(frozen=True)
class DeletionReceipt:
    """What a final deletion (`EntryStore.delete_final`, `prune_bank`) did.

    Attributes:
        entries: entries deleted (0 for a prune alone).
        pruned: True when the prune finished: nothing deleted is left on disk. False when it
            failed (`prune_error`) or was deferred (`delete_final(..., prune_now=False)`).
        prune_error: why the prune failed (None: it did not fail). The deletion stays marked
            and the next write, sweep or `membank maintain` finishes it.
        deleted_at: when the delete committed: from then on no read returns the entries
            (None for a prune alone).
        final_at: when the prune finished and nothing deleted was left on disk; None until
            then (a deferred or failed prune: `membank verify` says when it is final).
    """

    entries: int
    pruned: bool
    prune_error: str | None = None
    deleted_at: datetime | None = None
    final_at: datetime | None = None

    @property
    def pending(self) -> bool:
        """True when the prune failed and is due."""
        return self.prune_error is not None

    def raise_if_pending(self, bank_name: str) -> None:
        """Raise PrunePending when the prune failed (the message names the bank)."""
        if self.prune_error is not None:
            raise PrunePending(
                f"the rows are deleted, but pruning them from disk failed: {self.prune_error}; "
                f"the prune is due and the next write, sweep or `membank maintain {bank_name}` "
                "finishes it"
            )


@dataclass(frozen=True)
class PartitionSize:
    """One partition's size: its key, entry count and token total (`partition_sizes`)."""

    key: str
    entries: int
    tokens: int
