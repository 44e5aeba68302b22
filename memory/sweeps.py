"""What the background sweeps share: every bank of every account, and per-account contexts."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from memory import banks

if TYPE_CHECKING:
    from memory.context import Context


every_bank = banks.every_bank
"""Every bank of every account, oldest first (read, and migrated, as `banks.get` does)."""


def scoped(ctx: Context, account: str) -> Context:
    """Return `ctx` acting for `account` (a sweep works on each account's banks in turn)."""
    return ctx if ctx.account == account else dataclasses.replace(ctx, account=account)
