"""API keys: made with a high-entropy secret, shown once, stored only as a sha256 hash.

A key reads `mbk_<key_id>_<secret>`: `key_id` (12 hex characters) is its public name in
listings and for revoking; `secret` is 32 random bytes (URL-safe base64). The store keeps
the key id, the account and the hex sha256 of the whole key. Resolving a key looks its id
up and compares hashes in constant time, so an unknown, malformed or revoked key resolves to
nothing and no timing tells them apart from a wrong secret.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

from pydantic import BaseModel, Field

from memory.clock import as_utc
from memory.errors import InvalidInput, NotFound
from memory.settings import Settings, checked_account

if TYPE_CHECKING:
    from memory.context import Context

PREFIX = "mbk_"
_KEY_ID = re.compile(r"^[0-9a-f]{12}$")
_RAW_KEY = re.compile(r"^mbk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")
MAX_RAW_KEY = 200
"""Longest key text looked at; anything longer is not a key."""


class KeyStore(Protocol):
    """Where key rows live (`memory.store.LanceStore` through `memory.store.api_keys.KeyTable`)."""

    def put_key_row(self, row: dict[str, Any]) -> None:
        """Insert or replace a key row."""
        ...

    def key_rows(
        self, *, account: str | None = None, key_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Return the matching key rows."""
        ...

    def key_table_version(self) -> int | None:
        """Return the keys table's latest version (None: no table)."""
        ...


Scope = Literal["read", "write", "admin"]
SCOPES: tuple[Scope, ...] = ("read", "write", "admin")
"""read: every read (lists, loads, search, stats, exports); write: every change of banks and
entries; admin: both, plus the account's keys and audit log. A key made before scopes (or by
`membank keys create` with none given) is an admin key."""


def admin_only() -> list[Scope]:
    """Return the scopes of a key made with none given: admin."""
    return ["admin"]


class ApiKey(BaseModel):
    """A key as listings show it: never the key itself."""

    key_id: str
    account: str
    created_at: datetime
    revoked_at: datetime | None = None
    scopes: list[Scope] = Field(default_factory=admin_only)
    """What the key may do (admin implies read and write)."""
    banks: list[str] | None = None
    """The ids of the only banks the key may touch (None: every bank of the account)."""

    def allows(self, scope: Scope) -> bool:
        """Return True when the key has `scope` (admin has every scope)."""
        return scope in self.scopes or "admin" in self.scopes

    @property
    def active(self) -> bool:
        """Return True while the key is not revoked."""
        return self.revoked_at is None


class CreatedKey(BaseModel):
    """A new key: `key` is the only time the plaintext exists outside the caller."""

    key_id: str
    key: str
    account: str
    created_at: datetime
    scopes: list[Scope] = Field(default_factory=admin_only)
    banks: list[str] | None = None


def checked_scopes(scopes: Sequence[str] | None) -> list[Scope]:
    """Return the scopes, checked and in order (None or empty: admin).

    Raises:
        InvalidInput: an unknown scope.
    """
    if not scopes:
        return ["admin"]
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown:
        raise InvalidInput(
            f"unknown scope {unknown[0]!r}: choose from {', '.join(SCOPES)} (admin: every scope)"
        )
    return [s for s in SCOPES if s in scopes]


def _store_and_now(source: Context | KeyStore, now: datetime | None) -> tuple[KeyStore, datetime]:
    store = cast(KeyStore, getattr(source, "store", source))
    clock = getattr(source, "clock", None)
    when = now or (clock.now() if clock is not None else datetime.now(UTC))
    return store, as_utc(when)


def hash_key(raw_key: str) -> str:
    """Return the hex sha256 the store keeps for a key."""
    return hashlib.sha256(raw_key.encode("utf-8", "surrogatepass")).hexdigest()


def create_key(
    source: Context | KeyStore,
    account: str,
    *,
    now: datetime | None = None,
    scopes: Sequence[str] | None = None,
    banks: Sequence[str] | None = None,
) -> CreatedKey:
    """Make a key for `account` and store its hash; returns the key (shown this once).

    Args:
        source: a Context (its store and clock) or a store.
        account: the account every request with the key is scoped to.
        now: the creation time (default: the context's clock, else the system's).
        scopes: read, write and/or admin (default: admin).
        banks: bank ids the key is limited to (default: every bank); the caller resolves
            names to ids (`memory.ops.keys`).

    Raises:
        InvalidInput: a blank, too long or multi-line account, or an unknown scope.
    """
    checked = checked_account(account, Settings(account="local"))
    granted = checked_scopes(scopes)
    limited = sorted(set(banks)) if banks is not None else None
    store, when = _store_and_now(source, now)
    key_id = secrets.token_hex(6)
    raw = f"{PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
    store.put_key_row(
        {
            "key_id": key_id,
            "account": checked,
            "key_hash": hash_key(raw),
            "created_at": when,
            "revoked_at": None,
            "scopes": ",".join(granted),
            "banks": json.dumps(limited) if limited is not None else None,
        }
    )
    return CreatedKey(
        key_id=key_id, key=raw, account=checked, created_at=when, scopes=granted, banks=limited
    )


def _listed(row: dict[str, Any]) -> ApiKey:
    revoked = row.get("revoked_at")
    scopes = row.get("scopes")
    banks = row.get("banks")
    return ApiKey(
        key_id=row["key_id"],
        account=row["account"],
        created_at=as_utc(row["created_at"]),
        revoked_at=as_utc(revoked) if revoked is not None else None,
        scopes=checked_scopes(scopes.split(",") if scopes else None),
        banks=json.loads(banks) if banks is not None else None,
    )


def list_keys(source: Context | KeyStore, account: str | None = None) -> list[ApiKey]:
    """Return the keys (of `account`, or of every account), oldest first; never a secret."""
    store, _ = _store_and_now(source, None)
    keys = [_listed(row) for row in store.key_rows(account=account)]
    return sorted(keys, key=lambda k: (k.created_at, k.key_id))


def revoke_key(
    source: Context | KeyStore,
    key_id: str,
    *,
    account: str | None = None,
    now: datetime | None = None,
) -> ApiKey:
    """Revoke a key by its id: from now on it resolves to nothing. Revoking twice is a no-op.

    Args:
        source: a Context or a store.
        key_id: the key's public id (as `list_keys` shows it).
        account: when given, only a key of this account may be revoked.
        now: the revocation time (default: the context's clock, else the system's).

    Raises:
        InvalidInput: `key_id` is not 12 hex characters.
        NotFound: no such key (in `account`).
    """
    if not _KEY_ID.match(key_id):
        raise InvalidInput(
            f"{key_id!r} is not a key id: give the 12 hex characters `membank keys list` shows"
        )
    store, when = _store_and_now(source, now)
    rows = store.key_rows(key_id=key_id, account=account)
    if not rows:
        raise NotFound(f"no API key {key_id!r}: see `membank keys list`")
    row = rows[0]
    if row.get("revoked_at") is None:
        row = {**row, "revoked_at": when}
        store.put_key_row(row)
    return _listed(row)


def account_for_key(store: KeyStore, raw_key: str | None) -> str | None:
    """Return the account of a valid key; None for a missing, malformed, unknown or revoked one."""
    found = key_for(store, raw_key)
    return found.account if found is not None else None


def key_for(store: KeyStore, raw_key: str | None) -> ApiKey | None:
    """Return a valid key's record; None for a missing, malformed, unknown or revoked one."""
    if not raw_key or len(raw_key) > MAX_RAW_KEY:
        return None
    match = _RAW_KEY.match(raw_key)
    if match is None:
        return None
    rows = store.key_rows(key_id=match.group(1))
    if not rows:
        return None
    row = rows[0]
    if not hmac.compare_digest(row["key_hash"], hash_key(raw_key)):
        return None
    if row.get("revoked_at") is not None:
        return None
    return _listed(row)


class KeyResolver:
    """Resolves keys like `account_for_key`, remembering answers while the keys table stays at
    the same version: a create or a revoke (from any process) makes a new version, so a
    revoked key is refused on the very next request, at the cost of one manifest read.

    Args:
        store: where the keys live.
        size: answers remembered at most (the oldest are dropped first).
    """

    def __init__(self, store: KeyStore, size: int = 10_000) -> None:
        self._store = store
        self._size = size
        self._version: int | None = None
        self._known: dict[str, ApiKey | None] = {}
        self._lock = threading.Lock()

    def account(self, raw_key: str | None) -> str | None:
        """Return the account of a valid key; None for a missing, unknown or revoked one."""
        found = self.key(raw_key)
        return found.account if found is not None else None

    def key(self, raw_key: str | None) -> ApiKey | None:
        """Return a valid key's record (account, scopes, banks); None for a missing, unknown
        or revoked one."""
        if not raw_key or len(raw_key) > MAX_RAW_KEY or _RAW_KEY.match(raw_key) is None:
            return None
        version = self._store.key_table_version()
        digest = hash_key(raw_key)
        with self._lock:
            if version != self._version:
                self._known.clear()
                self._version = version
            elif digest in self._known:
                return self._known[digest]
        found = key_for(self._store, raw_key)
        with self._lock:
            if self._version == version:
                if len(self._known) >= self._size:
                    self._known.pop(next(iter(self._known)))
                self._known[digest] = found
        return found
