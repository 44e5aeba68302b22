"""Accounts and their API keys: create (shown once, only a hash stored; scoped read, write,
admin, optionally to named banks), list, revoke, resolve."""

from __future__ import annotations

from memory.accounts.keys import (
    SCOPES,
    ApiKey,
    CreatedKey,
    KeyResolver,
    KeyStore,
    Scope,
    account_for_key,
    checked_scopes,
    create_key,
    hash_key,
    key_for,
    list_keys,
    revoke_key,
)

__all__ = [
    "SCOPES",
    "ApiKey",
    "CreatedKey",
    "KeyResolver",
    "KeyStore",
    "Scope",
    "account_for_key",
    "checked_scopes",
    "create_key",
    "hash_key",
    "key_for",
    "list_keys",
    "revoke_key",
]
