"""What the background sweeps share: every bank of every account, and per-account contexts."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from memory import banks
from memory.models import Bank

if TYPE_CHECKING:
    from memory.context import Context


def every_bank(ctx: Context) -> list[Bank]:
    """Return every bank of every account, oldest first (legacy records migrated on the fly)."""
    found = [Bank.model_validate(banks.migrate_legacy(raw)) for raw in ctx.store.all_bank_rows()]
    return sorted(found, key=lambda b: (b.created_at, b.id))


def scoped(ctx: Context, account: str) -> Context:
    """Return `ctx` acting for `account` (a sweep works on each account's banks in turn)."""
    return ctx if ctx.account == account else dataclasses.replace(ctx, account=account)
