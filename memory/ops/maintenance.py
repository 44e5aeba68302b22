"""Maintenance use cases: verify that deletion is final and counters are right, and maintain
(finish interrupted deletions, upgrade indices, repair counters), for one bank or all."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory import verify as checks
from memory.models import Bank
from memory.ops.banks import get, list_banks
from memory.verify import BankHealth, Progress

if TYPE_CHECKING:
    from collections.abc import Iterable

    from memory.context import Context

__all__ = ["BankHealth", "MaintenanceRequest", "maintain", "verify"]


@dataclass(frozen=True)
class MaintenanceRequest:
    """The bank `bank` (id or name) to check or maintain, or every bank of the account (None)."""

    bank: str | None = None


def verify(
    ctx: Context, request: MaintenanceRequest, progress: Progress | None = None
) -> list[BankHealth]:
    """Return each bank's health: deleted rows or old versions left, counters off
    (`progress`: called with (1, banks in all) after each bank of an all-banks run).

    Raises:
        NotFound: an unknown bank (over every bank, a failing one is reported instead).
    """
    return _each(ctx, request, checks.verify_bank, checks.verify_all, progress)


def maintain(
    ctx: Context, request: MaintenanceRequest, progress: Progress | None = None
) -> list[BankHealth]:
    """Finish pending deletions, upgrade old indices, repair counters; returns what is left
    (`progress` as for `verify`).

    Raises:
        NotFound: an unknown bank.
        PrunePending: one bank's prune failed (over every bank, it is reported instead).
    """
    return _each(ctx, request, checks.maintain_bank, checks.maintain_all, progress)


def _each(
    ctx: Context,
    request: MaintenanceRequest,
    one: Callable[[Context, Bank], BankHealth],
    every: Callable[[Context, Iterable[Bank], Progress | None], list[BankHealth]],
    progress: Progress | None,
) -> list[BankHealth]:
    if request.bank is None:
        return every(ctx, list_banks(ctx), progress)
    return [one(ctx, get(ctx, request.bank))]
