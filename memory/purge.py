"""Deletes that are final: one delete commit, then old versions pruned, one bank at a time.

Two prunes of one table at once make LanceDB reject the later commit ("retryable commit
conflict"), so delete-and-prune runs under the bank's lock and retries on such conflicts.
Appends (writes) are not blocked.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from memory import banks
from memory.context import Context
from memory.errors import StorageError
from memory.locks import bank_lock
from memory.models import Bank
from memory.store import filters
from memory.sweeps import scoped

ATTEMPTS = 4
BACKOFF_SECONDS = 0.2

T = TypeVar("T")


def _retry(action: Callable[[], T]) -> T:
    for attempt in range(ATTEMPTS):
        try:
            return action()
        except (StorageError, OSError):
            if attempt == ATTEMPTS - 1:
                raise
            time.sleep(BACKOFF_SECONDS * 2**attempt)
    raise AssertionError("unreachable")  # pragma: no cover


def delete_for_good(
    ctx: Context,
    bank: Bank,
    predicate: str,
    *,
    prune_now: bool = True,
    after_delete: Callable[[], None] | None = None,
) -> None:
    """Delete the rows matching `predicate` in one commit, then prune the old versions.

    With `prune_now=False` the caller prunes later (a sweep prunes each bank once, after all
    its partitions); until then the rows are gone from every read but not yet from disk.
    `after_delete` runs between the delete and the prune (a fault-injection point).
    """
    dims = banks.vector_dims(ctx, bank)
    with bank_lock(ctx.store.uri, bank.id, timeout=None):
        _retry(lambda: ctx.store.delete_where(bank.id, dims, predicate, prune=False))
        if after_delete is not None:
            after_delete()
        if prune_now:
            _retry(lambda: ctx.store.prune(bank.id, dims))


def pending_deletions(ctx: Context, bank: Bank) -> bool:
    """Return True when deleted rows still sit in the bank's files (a prune is due)."""
    return ctx.store.has_deleted_rows(bank.id, banks.vector_dims(ctx, bank))


def prune(ctx: Context, bank: Bank) -> None:
    """Rewrite the files holding deleted rows and drop old versions, under the bank's lock."""
    dims = banks.vector_dims(ctx, bank)
    with bank_lock(ctx.store.uri, bank.id, timeout=None):
        _retry(lambda: ctx.store.prune(bank.id, dims))


def record_summary_count(ctx: Context, bank: Bank) -> None:
    """Store the bank's summary count after a deletion removed summaries (retention, forget)."""
    where = filters.conjoin("chunk_index = 0", filters.equals("kind", "summary"))
    count = ctx.store.count(bank.id, banks.vector_dims(ctx, bank), where)
    account_ctx = scoped(ctx, bank.account)
    fresh = banks.get(account_ctx, bank.id)
    banks.save(account_ctx, fresh.model_copy(update={"summary_count": count}))
