"""What each key may do: the scope a route needs (read, write, admin) and the banks a
limited key may touch. Out of scope is a 403 that says which scope or bank is missing; a
bank of another account is still a 404, exactly as a missing one."""

from __future__ import annotations

from fastapi import Request

from memory.accounts import ApiKey, Scope
from memory.api.errors import ApiError
from memory.context import Context
from memory.ops import banks

READS_BY_POST = (
    "/search",
    "/recall",
    "/estimate",
    "/test-compaction",
    "/generate_memory_bank_config",
)
"""POST routes that change nothing (a search, an estimate, a test): the read scope is enough."""
ADMIN_PREFIXES = ("/keys", "/audit")
"""The account's keys and audit log: admin keys only."""
ANY_BANK_ROUTES = {
    ("GET", "/memory_banks"),
    ("GET", "/memory_banks/templates"),
    ("GET", "/jobs/{job_id}"),
    ("POST", "/memory_banks/test-compaction"),
    ("POST", "/memory_banks/generate_memory_bank_config"),
    ("POST", "/authenticated/resource-exports"),
    ("POST", "/authenticated/resource-exports/estimate"),
    ("GET", "/authenticated/resource-exports/{export_id}"),
    ("GET", "/authenticated/resource-exports/{export_id}/download"),
}
"""Routes with no bank in their path that a bank-limited key may still call (a list shows
only its banks; an export checks its `resource_id`)."""


def _template(request: Request) -> str:
    route = request.scope.get("route")
    return str(getattr(route, "path", request.url.path))


def needed(method: str, path: str) -> Scope:
    """Return the scope a route needs."""
    if path.startswith(ADMIN_PREFIXES):
        return "admin"
    if method in ("GET", "HEAD") or (method == "POST" and path.endswith(READS_BY_POST)):
        return "read"
    return "write"


def check(request: Request, key: ApiKey) -> None:
    """Raise a 403 when the request's route needs a scope `key` lacks, or names no bank
    while the key is limited to some (creating banks, users' memories, ...).

    Raises:
        ApiError: 403, naming the scope or the limit.
    """
    path = _template(request)
    scope = needed(request.method, path)
    if not key.allows(scope):
        raise ApiError(
            403,
            "forbidden",
            f"key {key.key_id} has scopes {', '.join(key.scopes)}: {request.method} {path} needs "
            f"the {scope} scope (an admin of the account can make such a key: POST /keys)",
        )
    limited = key.banks is not None and "bank_id" not in request.path_params
    if limited and (request.method, path) not in ANY_BANK_ROUTES:
        raise ApiError(
            403,
            "forbidden",
            f"key {key.key_id} is limited to some banks: {request.method} {path} is for "
            "keys of the whole account",
        )


def check_bank(request: Request, key: ApiKey, ctx: Context) -> None:
    """Raise a 403 when `key` is limited to some banks and the path's bank is another of the
    account's (NotFound, a 404, for a bank the account does not have)."""
    ref = request.path_params.get("bank_id")
    if key.banks is None or ref is None:
        return
    allow_bank(key, ctx, str(ref))


def allow_bank(key: ApiKey, ctx: Context, ref: str) -> None:
    """Raise a 403 unless `key` may touch bank `ref` (an id or name of the account).

    Raises:
        NotFound: no such bank in the account (a 404, as for any key).
        ApiError: 403, the key is limited to other banks.
    """
    if key.banks is None:
        return
    bank = banks.get(ctx, ref)
    if bank.id not in key.banks:
        raise ApiError(
            403,
            "forbidden",
            f"key {key.key_id} is limited to other banks than {bank.name!r}: use a key of "
            "this bank or of the whole account",
        )
