"""Accounts and their API keys: create (shown once, only a hash stored), list, revoke, resolve."""

from __future__ import annotations

from memory.accounts.keys import (
    ApiKey,
    CreatedKey,
    KeyResolver,
    KeyStore,
    account_for_key,
    create_key,
    hash_key,
    list_keys,
    revoke_key,
)

__all__ = [
    "ApiKey",
    "CreatedKey",
    "KeyResolver",
    "KeyStore",
    "account_for_key",
    "create_key",
    "hash_key",
    "list_keys",
    "revoke_key",
]
