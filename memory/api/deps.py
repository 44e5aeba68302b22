"""Request dependencies: the API key (401 without a valid one), the key's account, the
request's Context, and the resolved API version."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader

from memory.accounts import ApiKey
from memory.api import scopes
from memory.api.errors import ApiError
from memory.api.state import ApiState
from memory.api.versioning import ApiVersion
from memory.context import Context
from memory.ops.banks import LEGACY_API_VERSION

KEY_HEADER = "X-API-Key"
api_key = APIKeyHeader(
    name=KEY_HEADER,
    auto_error=False,
    description="An API key from `membank keys create --account A`; every request is scoped "
    "to its account.",
)


def state(request: Request) -> ApiState:
    """Return the app's state."""
    found: ApiState = request.app.state.membank
    return found


def key_problem(request: Request) -> ApiError | None:
    """Return why the request is not authenticated (None: its one API key is valid); the
    key's account is put in `request.state.account`. Checked before a body is parsed, so a
    request with no valid key learns nothing about its body's shape.

    A second `X-API-Key` header is a 400: which one counts would depend on the proxy."""
    sent = request.headers.getlist(KEY_HEADER)
    if len(sent) > 1:
        return ApiError(
            400,
            "invalid_input",
            f"send one {KEY_HEADER} header, not {len(sent)}: a request acts for one key",
        )
    if not sent or not sent[0]:
        return ApiError(401, "unauthorized", f"send an API key in the {KEY_HEADER} header")
    found = state(request).key_for(sent[0])
    if found is None:
        return ApiError(
            401,
            "unauthorized",
            f"the {KEY_HEADER} is not valid (unknown or revoked): create one with "
            "`membank keys create --account A`",
        )
    request.state.account = found.account
    request.state.api_key = found
    return None


def account(request: Request, key: Annotated[str | None, Security(api_key)] = None) -> str:
    """Return the account of the request's API key.

    Raises:
        ApiError: 401, with no key, or a malformed, unknown or revoked one; 400 for two keys;
            403 for a route outside the key's scopes.
    """
    problem = key_problem(request)
    if problem is not None:
        raise problem
    scopes.check(request, request.state.api_key)
    found: str = request.state.account
    return found


Account = Annotated[str, Depends(account)]


def context(request: Request, owner: Account) -> Context:
    """Return the request's Context: the app's store, scoped to the key's account; a key
    limited to some banks gets a 403 for any other bank of the account (another account's
    bank stays a 404)."""
    ctx = state(request).context_for(owner)
    scopes.check_bank(request, request.state.api_key, ctx)
    return ctx


def api_key_of(request: Request) -> ApiKey:
    """Return the record of the request's API key (after `account` accepted it)."""
    found: ApiKey = request.state.api_key
    return found


def api_version(request: Request) -> ApiVersion:
    """Return the request's API version, as the request guard parsed it (none: legacy)."""
    resolved: ApiVersion = getattr(request.state, "api_version", LEGACY_API_VERSION)
    return resolved


Ctx = Annotated[Context, Depends(context)]
Key = Annotated[ApiKey, Depends(api_key_of)]
Version = Annotated[ApiVersion, Depends(api_version)]
State = Annotated[ApiState, Depends(state)]
