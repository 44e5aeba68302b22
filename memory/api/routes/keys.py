"""The account's API keys, for its administrators (admin scope): make one (shown once, with
scopes and optionally limited to named banks), list them, revoke one."""

from __future__ import annotations

from fastapi import APIRouter

from memory.accounts import ApiKey, CreatedKey
from memory.api.deps import Ctx
from memory.api.models.keys import KeyCreate, KeyOut
from memory.api.routes.common import Limit, Offset
from memory.api.schemas import Page, page
from memory.ops import keys

router = APIRouter(prefix="/keys", tags=["keys"])


def _out(key: ApiKey) -> KeyOut:
    return KeyOut(**key.model_dump(), active=key.active)


@router.post("", status_code=201, summary="Create an API key")
def create_key(ctx: Ctx, body: KeyCreate) -> CreatedKey:
    """Make a key of this account; `key` is shown only in this answer (its hash is stored)."""
    return keys.create(ctx, keys.CreateKey(scopes=body.scopes, banks=body.banks))


@router.get("", summary="List API keys")
def list_keys(ctx: Ctx, limit: Limit = 100, offset: Offset = 0) -> Page[KeyOut]:
    """The account's keys, oldest first, with their scopes; never a secret."""
    return page([_out(k) for k in keys.list_keys(ctx)], limit, offset)


@router.delete("/{key_id}", summary="Revoke an API key")
def revoke_key(ctx: Ctx, key_id: str) -> KeyOut:
    """Revoke a key of this account: every request with it is a 401 from now on."""
    return _out(keys.revoke(ctx, key_id))
