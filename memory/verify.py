"""Verify and maintain banks: deletion finality and the counters a bank record derives.

`verify_bank` reports (changes nothing): deleted rows still in a table's files, old table
versions holding a row the latest version deleted, and counters of the bank record that
disagree with its entries. `maintain_bank` finishes any pending deletion (a prune) and
rewrites those counters from the data; compaction re-runs repair them the same way.

Derived counters:
- `summary_count`: the compaction summaries stored now.
- `last_compaction_at`: never older than the newest summary's `compacted_at` (summaries
  record when they were made, so a compaction killed before it saved the bank record is
  still seen). A compaction that stored no summary (no prompt) leaves no trace in the data.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from memory import banks, purge
from memory.errors import MembankError
from memory.models import Bank
from memory.types.entry_filter import EntryFilter

if TYPE_CHECKING:
    from memory.context import Context

COMPACTED_AT = "compacted_at"
"""Summary metadata key: when the compaction that wrote the summary ran (ISO 8601)."""
SUMMARIES = EntryFilter(kind="summary")


class Counters(BaseModel):
    """The bank record's derived counters: as stored, or as the data says they should be."""

    summary_count: int
    last_compaction_at: datetime | None


class BankHealth(BaseModel):
    """What `verify` found in one bank (or what `maintain` left)."""

    bank_id: str
    bank_name: str
    account: str
    deleted_rows: int = 0
    """Rows deleted but still in the table's data files."""
    stale_versions: int = 0
    """Old table versions that hold a row the latest version deleted."""
    old_versions: int = 0
    """Old table versions kept (clean ones too: writes keep them for 7 days)."""
    stale_segments: int = 0
    """Index segments still holding keys and words of a fragment a delete removed whole."""
    pending_since: datetime | None = None
    """When the deletion that is not final yet was made (None: final, or not recorded). A
    forget answers before its prune, which runs right after it; a crash leaves it to the next
    write, sweep or `membank maintain`."""
    stored: Counters | None = None
    derived: Counters | None = None
    problems: list[str] = Field(default_factory=list)
    """One line per finding; empty when the bank is clean."""
    pruned: bool = False
    """`maintain` only: a pending deletion was finished."""
    repaired: list[str] = Field(default_factory=list)
    """`maintain` only: counters rewritten from the data."""
    error: str | None = None
    """Why the bank could not be checked or maintained."""

    @property
    def clean(self) -> bool:
        """True when nothing deleted is left on disk and every counter matches the data."""
        return not self.problems and self.error is None


def derived_counters(ctx: Context, bank: Bank) -> Counters:
    """Return the counters as the bank's entries say they should be (one projected scan)."""
    rows = ctx.store.entry_table(bank.id, SUMMARIES, fields=["metadata"])
    made = [_compacted_at(text) for text in rows.column("metadata").to_pylist()]
    known = [when for when in made if when is not None]
    return Counters(summary_count=rows.num_rows, last_compaction_at=max(known, default=None))


def _compacted_at(metadata: str | None) -> datetime | None:
    try:
        value = json.loads(metadata or "{}").get(COMPACTED_AT)
        when = None if value is None else datetime.fromisoformat(value)
        return None if when is None else when if when.tzinfo else when.replace(tzinfo=UTC)
    except (ValueError, TypeError, AttributeError):  # a summary written before the key existed
        return None


def counter_problems(stored: Bank, derived: Counters) -> list[str]:
    """Return one line per counter of `stored` that disagrees with `derived`."""
    found: list[str] = []
    if stored.summary_count != derived.summary_count:
        found.append(
            f"summary_count is {stored.summary_count}, the bank holds {derived.summary_count}"
        )
    newest = derived.last_compaction_at
    if _later(newest, stored.last_compaction_at):
        found.append(
            f"last_compaction_at is {_when(stored.last_compaction_at)}, older than the newest "
            f"summary ({_when(newest)})"
        )
    return found


def _later(newest: datetime | None, recorded: datetime | None) -> bool:
    """Return True when the data knows of a compaction after the recorded one."""
    return newest is not None and (recorded is None or recorded < newest)


def _when(value: datetime | None) -> str:
    return "unset" if value is None else value.isoformat(timespec="seconds")


def repair_counters(ctx: Context, bank: Bank) -> list[str]:
    """Rewrite the bank record's counters that disagree with the data; returns what was wrong."""
    account_ctx = ctx.for_account(bank.account)
    fresh = banks.get(account_ctx, bank.id)
    derived = derived_counters(ctx, fresh)
    wrong = counter_problems(fresh, derived)
    if wrong:
        last = fresh.last_compaction_at
        if _later(derived.last_compaction_at, last):
            last = derived.last_compaction_at
        banks.save(
            account_ctx,
            fresh.model_copy(
                update={"summary_count": derived.summary_count, "last_compaction_at": last}
            ),
        )
    return wrong


def verify_bank(ctx: Context, bank: Bank) -> BankHealth:
    """Return what is wrong with one bank: deleted data left on disk, counters off."""
    health = _health(bank)
    if not ctx.store.has_entries_table(bank.id):
        return _with_counters(ctx, bank, health)
    found = purge.audit(ctx, bank)
    health = health.model_copy(
        update={
            "deleted_rows": found.deleted_rows,
            "stale_versions": found.stale_versions,
            "old_versions": found.old_versions,
            "stale_segments": found.stale_segments,
            "pending_since": found.pending_since,
        }
    )
    problems: list[str] = []
    twice = ctx.store.duplicate_entry_ids(bank.id)
    if twice:
        shown = ", ".join(twice[:_SHOWN_IDS]) + (", ..." if len(twice) > _SHOWN_IDS else "")
        problems.append(
            f"{len(twice)} entry ids are stored more than once: {shown} "
            f"(`membank maintain {bank.name}` keeps one copy of each)"
        )
    if found.pending_since is not None:
        problems.append(
            f"a deletion made at {_when(found.pending_since)} is not final yet: its prune is "
            f"running, or is due (the next write, sweep or `membank maintain {bank.name}`)"
        )
    if found.deleted_rows:
        problems.append(f"{found.deleted_rows} deleted rows are still in the data files")
    if found.stale_versions:
        problems.append(f"{found.stale_versions} old table versions hold deleted rows")
    if found.stale_segments:
        problems.append(
            f"{found.stale_segments} index segments still hold keys and words of deleted rows"
        )
    problems += _layer_problems(ctx, bank)
    return _with_counters(ctx, bank, health, problems)


def _layer_problems(ctx: Context, bank: Bank) -> list[str]:
    """Return what the agent layers find wrong with their own bank (two live summaries)."""
    from memory.agents import checks  # the layers own their banks' rules

    return checks.problems(ctx, bank)


_SHOWN_IDS = 10


def remove_duplicates(ctx: Context, bank: Bank) -> list[str]:
    """Keep one copy of each entry stored more than once; returns the ids repaired."""
    twice = ctx.store.duplicate_entry_ids(bank.id)
    ctx.store.keep_one_copy(bank.id, twice)
    return twice


def _with_counters(
    ctx: Context, bank: Bank, health: BankHealth, problems: list[str] | None = None
) -> BankHealth:
    stored = banks.get(ctx.for_account(bank.account), bank.id)
    derived = derived_counters(ctx, stored)
    found = [*(problems or []), *counter_problems(stored, derived)]
    return health.model_copy(
        update={
            "stored": Counters(
                summary_count=stored.summary_count, last_compaction_at=stored.last_compaction_at
            ),
            "derived": derived,
            "problems": found,
        }
    )


def maintain_bank(ctx: Context, bank: Bank) -> BankHealth:
    """Finish the bank's pending deletion, upgrade old indices, repair its counters; returns
    what is left.

    Raises:
        PrunePending: the prune failed (e.g. the disk is full); the deletion stays due.
    """
    from memory.agents import checks

    twice = remove_duplicates(ctx, bank)
    pruned = purge.finish(ctx, bank, wait=None, full=True)
    ctx.store.upgrade_indices(bank.id)
    repaired = [*checks.repair(ctx, bank), *repair_counters(ctx, bank)]
    after = verify_bank(ctx, bank)
    if twice:
        repaired = [f"{len(twice)} entry ids stored more than once kept once", *repaired]
    return after.model_copy(update={"pruned": pruned, "repaired": repaired})


Progress = Callable[[int, int], None]
"""Called with (banks just done, banks in all) as a run over every bank goes."""


def verify_all(
    ctx: Context, selected: Iterable[Bank], progress: Progress | None = None
) -> list[BankHealth]:
    """Verify each bank in turn; a bank that cannot be read is reported with its error."""
    return _every(ctx, list(selected), verify_bank, progress)


def maintain_all(
    ctx: Context, selected: Iterable[Bank], progress: Progress | None = None
) -> list[BankHealth]:
    """Maintain each bank in turn; one that fails is reported and the others still run."""
    return _every(ctx, list(selected), maintain_bank, progress)


def _every(
    ctx: Context,
    chosen: list[Bank],
    action: Callable[[Context, Bank], BankHealth],
    progress: Progress | None,
) -> list[BankHealth]:
    results = []
    for bank in chosen:
        results.append(_each(ctx, bank, action))
        if progress is not None:
            progress(1, len(chosen))
    return results


def _each(ctx: Context, bank: Bank, action: Callable[[Context, Bank], BankHealth]) -> BankHealth:
    try:
        return action(ctx, bank)
    except MembankError as exc:
        return _health(bank).model_copy(update={"error": str(exc), "problems": [str(exc)]})


def _health(bank: Bank) -> BankHealth:
    return BankHealth(bank_id=bank.id, bank_name=bank.name, account=bank.account)
