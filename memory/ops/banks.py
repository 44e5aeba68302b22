"""Bank use cases: create, update, delete, reset-source, get, list, stats (and one entry of
a bank by id, until `memory.ops.entries` has it)."""

from __future__ import annotations

import base64
import binascii
import bisect
import json
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from memory import banks
from memory.errors import Invalid, InvalidInput
from memory.models import Bank, BankCreate, BankType, BankUpdate, Entry
from memory.types.api_version import CURRENT_API_VERSION, LEGACY_API_VERSION, ApiVersion
from memory.types.fields import as_utc

if TYPE_CHECKING:
    from memory.context import Context
    from memory.stats import Stats

__all__ = [
    "CURRENT_API_VERSION",
    "LEGACY_API_VERSION",
    "ApiVersion",
    "BankPage",
    "BankPageRequest",
    "CreateBank",
    "StatsRequest",
    "StatsResult",
    "UpdateBank",
]


@dataclass(frozen=True)
class CreateBank:
    """Create a bank from `spec`, under the rules of `api_version` (default: the current)."""

    spec: BankCreate
    api_version: ApiVersion = CURRENT_API_VERSION


@dataclass(frozen=True)
class UpdateBank:
    """Change the settings `changes` names on bank `bank` (id or name)."""

    bank: str
    changes: BankUpdate
    api_version: ApiVersion = CURRENT_API_VERSION


@dataclass(frozen=True)
class StatsRequest:
    """The statistics of bank `bank` over the last `days` days, or over [since, until)
    (default: the last 30 days); `top` rows of each breakdown."""

    bank: str
    since: datetime | None = None
    until: datetime | None = None
    top: int | None = None
    days: int | None = None


@dataclass(frozen=True)
class StatsResult:
    bank: Bank
    stats: Stats


def create(ctx: Context, request: CreateBank) -> Bank:
    """Create a bank and provision its storage; Conflict if the name is taken."""
    return banks.create(ctx, request.spec, api_version=request.api_version)


def update(ctx: Context, request: UpdateBank) -> Bank:
    """Apply an update and store it; nothing changes if any rule rejects it."""
    return banks.update(ctx, request.bank, request.changes, api_version=request.api_version)


def get(ctx: Context, ref: str) -> Bank:
    """Return the bank with id or name `ref` in the account; NotFound otherwise."""
    return banks.get(ctx, ref)


def list_banks(ctx: Context, bank_type: BankType | None = None) -> list[Bank]:
    """Return the account's banks (optionally of one type), oldest first."""
    return banks.list_banks(ctx, bank_type)


@dataclass(frozen=True)
class BankPageRequest:
    """One page of the account's banks, oldest first: `limit` after `cursor` (a next_cursor
    given out before), else from `offset`; only banks of `type` and, when `only` is given,
    those ids (a key limited to some banks)."""

    type: BankType | None = None
    limit: int = 100
    offset: int = 0
    cursor: str | None = None
    only: Collection[str] | None = None


@dataclass(frozen=True)
class BankPage:
    """A page of banks, the total listed, and where the next page starts (None: the last)."""

    banks: list[Bank]
    total: int
    next_cursor: str | None


def bank_page(ctx: Context, request: BankPageRequest) -> BankPage:
    """Return one page of the account's banks, oldest first (by creation time, then name).

    A cursor names the last bank shown (its creation time and name), so the page after it
    stays right while banks are created (they come last) or deleted; an offset shifts.

    Raises:
        Invalid: a cursor this API did not give out.
    """
    found = banks.list_banks(ctx, request.type)
    if request.only is not None:
        found = [bank for bank in found if bank.id in request.only]
    start = request.offset
    if request.cursor is not None:
        start = bisect.bisect_right([_position(bank) for bank in found], _parse(request.cursor))
    shown = found[start : start + request.limit]
    more = start + len(shown) < len(found)
    following = _cursor(shown[-1]) if shown and more else None
    return BankPage(banks=shown, total=len(found), next_cursor=following)


def _position(bank: Bank) -> tuple[datetime, str]:
    return (as_utc(bank.created_at), bank.name)


def _cursor(bank: Bank) -> str:
    data = json.dumps([as_utc(bank.created_at).isoformat(), bank.name]).encode()
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _parse(cursor: str) -> tuple[datetime, str]:
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        when, name = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        moment = datetime.fromisoformat(when)
        if moment.tzinfo is None or not isinstance(name, str):
            raise ValueError(cursor)
        return (as_utc(moment), name)
    except (ValueError, TypeError, UnicodeError, binascii.Error):
        raise Invalid(
            "cursor is not one this API gave out: send the next_cursor of the page before"
        ) from None


def delete(ctx: Context, ref: str) -> Bank:
    """Delete a bank, its entries, its test runs and their files; returns the deleted bank."""
    return banks.delete(ctx, ref)


def reset_source(ctx: Context, ref: str) -> Bank:
    """Remove every entry of a bank and its storage; returns the bank with counters reset."""
    return banks.reset_source(ctx, ref)


def stats(ctx: Context, request: StatsRequest) -> StatsResult:
    """Return the bank's statistics over the request's time frame."""
    from memory import stats as bank_stats  # polars: only when asked
    from memory.validation import as_utc

    bank = banks.get(ctx, request.bank)
    since, until = bank_stats.time_frame(
        ctx.clock.now(),
        days=request.days,
        since=as_utc(request.since, "since") if request.since is not None else None,
        until=as_utc(request.until, "until") if request.until is not None else None,
    )
    top = bank_stats.TOP if request.top is None else request.top
    found = bank_stats.compute(ctx, bank, since=since, until=until, top=top)
    return StatsResult(bank=bank, stats=found)


MIN_TEST_ENTRIES = 2
"""Entries a compaction test needs in its partition (the newest is always kept verbatim)."""


def check_testable(ctx: Context, bank: Bank, key: str | None) -> None:
    """Raise InvalidInput when a compaction test of `bank` (its partition `key`, or its
    largest) could only fail for want of entries: told when the request arrives, from one
    count of the partitions, never as a job that fails later.

    Raises:
        InvalidInput: the partition has fewer than two entries.
    """
    from memory.types.entry_filter import EntryFilter

    sizes = ctx.store.partition_sizes(bank.id, EntryFilter.key(key) if key else None)
    found = max((size.entries for size in sizes), default=0)
    if found >= MIN_TEST_ENTRIES:
        return
    where = f"key {key!r} of bank {bank.name!r}" if key else f"bank {bank.name!r}"
    raise InvalidInput(
        f"{where} has {found} entries: a compaction test needs at least {MIN_TEST_ENTRIES} "
        "(write some entries first, or test on pasted entries: POST "
        "/memory_banks/test-compaction)"
    )


def get_entry(ctx: Context, bank_ref: str, entry_id: str) -> Entry:
    """Return entry `entry_id` of bank `bank_ref`; NotFound when either is missing."""
    from memory import entries

    return entries.get_entry(ctx, banks.get(ctx, bank_ref), entry_id)
