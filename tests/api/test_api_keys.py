"""API keys: shown once, stored only as a hash, listed without secrets, revoked for good."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory import accounts
from memory.accounts import account_for_key, create_key, list_keys, revoke_key
from memory.clock import FixedClock
from memory.context import Context
from memory.errors import InvalidInput, NotFound
from memory.store.lance import LanceStore


def test_a_key_resolves_to_its_account_and_only_its_hash_is_stored(ctx: Context) -> None:
    made = create_key(ctx, "acme")
    assert made.key.startswith("mbk_") and made.key_id in made.key
    assert account_for_key(ctx.store, made.key) == "acme"  # type: ignore[arg-type]
    rows = LanceStore(ctx.store.uri).key_rows()
    assert [r["key_hash"] for r in rows] == [accounts.hash_key(made.key)]
    assert made.key not in repr(rows)


def test_wrong_malformed_and_unknown_keys_resolve_to_nothing(ctx: Context) -> None:
    made = create_key(ctx, "acme")
    store = LanceStore(ctx.store.uri)
    tampered = made.key[:-1] + ("A" if made.key[-1] != "A" else "B")
    unknown = "mbk_" + "0" * 12 + made.key[len("mbk_") + 12 :]
    for raw in (None, "", "nonsense", tampered, unknown, made.key + "x", "x" * 10_000):
        assert account_for_key(store, raw) is None


def test_revoked_key_resolves_to_nothing_and_stays_listed(ctx: Context, clock: FixedClock) -> None:
    made = create_key(ctx, "acme")
    other = create_key(ctx, "beta")
    clock.advance(timedelta(minutes=5))
    revoked = revoke_key(ctx, made.key_id)
    assert revoked.revoked_at == clock.now() and not revoked.active
    assert account_for_key(LanceStore(ctx.store.uri), made.key) is None
    assert account_for_key(LanceStore(ctx.store.uri), other.key) == "beta"
    assert revoke_key(ctx, made.key_id).revoked_at == revoked.revoked_at  # twice: a no-op
    assert [k.key_id for k in list_keys(ctx, "acme")] == [made.key_id]
    assert {k.account for k in list_keys(ctx)} == {"acme", "beta"}


def test_revoking_checks_the_id_and_the_account(ctx: Context) -> None:
    made = create_key(ctx, "acme")
    with pytest.raises(InvalidInput, match="12 hex"):
        revoke_key(ctx, "x' OR '1'='1")
    with pytest.raises(NotFound):
        revoke_key(ctx, "0123456789ab")
    with pytest.raises(NotFound):
        revoke_key(ctx, made.key_id, account="beta")
    assert account_for_key(LanceStore(ctx.store.uri), made.key) == "acme"


def test_an_account_must_be_one_line(ctx: Context) -> None:
    with pytest.raises(InvalidInput):
        create_key(ctx, "  ")
    with pytest.raises(InvalidInput):
        create_key(ctx, "a\nb")
    assert list_keys(ctx) == []


def test_the_resolver_remembers_until_the_keys_change(ctx: Context) -> None:
    made = create_key(ctx, "acme")
    store = LanceStore(ctx.store.uri)
    resolver = accounts.KeyResolver(store)
    assert resolver.account(made.key) == "acme"
    assert resolver.account(made.key) == "acme"
    assert resolver.account("mbk_" + made.key_id + "_" + "A" * 43) is None
    revoke_key(LanceStore(ctx.store.uri), made.key_id)  # another handle, as another process
    assert resolver.account(made.key) is None
    fresh = create_key(LanceStore(ctx.store.uri), "beta")
    assert resolver.account(fresh.key) == "beta"
