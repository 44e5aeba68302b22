"""Key use cases of an account's administrators: make a key (scopes, optionally limited to
named banks), list the account's keys, revoke one. The CLI makes keys of any account; the
REST API only of the caller's own."""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from memory import accounts
from memory.accounts import ApiKey, CreatedKey, KeyStore
from memory.ops import banks
from memory.store.locks import is_local

if TYPE_CHECKING:
    from memory.context import Context


@dataclass(frozen=True)
class CreateKey:
    """A key for the context's account with `scopes` (default admin), limited to `banks`
    (ids or names of the account's banks; None: every bank)."""

    scopes: Sequence[str] | None = None
    banks: Sequence[str] | None = None


def _keys(ctx: Context) -> KeyStore:
    return cast(KeyStore, ctx.store)


def create(ctx: Context, request: CreateKey) -> CreatedKey:
    """Make a key of the context's account (shown once; only its hash is stored).

    Raises:
        InvalidInput: an unknown scope, or an empty list of banks.
        NotFound: a bank the account does not have.
    """
    from memory.errors import InvalidInput

    limited: list[str] | None = None
    if request.banks is not None:
        if not request.banks:
            raise InvalidInput("banks is empty: name at least one bank, or leave it out (all)")
        limited = [banks.get(ctx, ref).id for ref in request.banks]
    return accounts.create_key(ctx, ctx.account, scopes=request.scopes, banks=limited)


def list_keys(ctx: Context) -> list[ApiKey]:
    """Return the account's keys, oldest first (never a secret)."""
    return accounts.list_keys(_keys(ctx), ctx.account)


def revoke(ctx: Context, key_id: str) -> ApiKey:
    """Revoke a key of the account (another account's key is NotFound, like a missing one)."""
    return accounts.revoke_key(ctx, key_id, account=ctx.account)


def rate_file(uri: str) -> Path:
    """Return the SQLite file of storage `uri`'s API rate limits (`memory.api.rate_store`):
    beside a local folder, else one per machine in its temporary folder."""
    if is_local(uri):
        folder = Path(uri.removeprefix("file://")).expanduser().resolve()
        return folder / "_api" / "ratelimits.sqlite"
    digest = hashlib.sha256(uri.rstrip("/").encode()).hexdigest()[:24]
    return Path(tempfile.gettempdir()) / "membank-ratelimits" / f"{digest}.sqlite"
