"""ETags of banks and entries, and `If-Match` honoured: a change sent with a stale ETag is a
412 and changes nothing (optimistic concurrency for two clients editing one bank)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from fastapi import Request, Response
from pydantic import BaseModel

from memory.api.errors import ApiError, ErrorResponse

IF_MATCH = "If-Match"
MAX_IF_MATCH = 200
"""Longest If-Match looked at (a few ETags); longer is a 400."""


def etag_of(record: BaseModel) -> str:
    """Return the strong ETag of a record: a digest of its JSON (any change moves it)."""
    digest = hashlib.sha256(record.model_dump_json().encode("utf-8")).hexdigest()
    return f'"{digest[:32]}"'


def tagged(response: Response, record: BaseModel) -> None:
    """Put the record's ETag on the response."""
    response.headers["ETag"] = etag_of(record)


def check_if_match(request: Request, current: Callable[[], BaseModel]) -> None:
    """Raise a 412 when the request's `If-Match` names neither `*` nor the ETag of the
    record `current` returns (no header: no condition, and `current` is not called).

    Raises:
        ApiError: 412, the resource changed since the client read it; 400, an If-Match
            over `MAX_IF_MATCH` characters.
    """
    sent = request.headers.get(IF_MATCH)
    if sent is None:
        return
    if len(sent) > MAX_IF_MATCH:
        raise ApiError(
            400,
            "invalid_input",
            f"{IF_MATCH} is over {MAX_IF_MATCH} characters: send the ETag the resource gave",
        )
    wanted = {value.strip().removeprefix("W/") for value in sent.split(",")}
    if "*" in wanted or etag_of(current()) in wanted:
        return
    raise ApiError(
        412,
        "precondition_failed",
        f"{IF_MATCH} does not match the current ETag (the resource changed since you read "
        "it, or the value is not one of its ETags): GET it again and retry with its ETag",
    )


_ETAG_HEADER = {
    "ETag": {"description": "the record's ETag (send it as If-Match)", "schema": {"type": "string"}}
}
ETAG_RESPONSES: dict[int | str, dict[str, object]] = {200: {"headers": _ETAG_HEADER}}
"""What the OpenAPI document says of a read that carries an ETag."""
IF_MATCH_RESPONSES: dict[int | str, dict[str, object]] = {
    412: {"model": ErrorResponse, "description": "If-Match names another ETag: nothing changed"},
}
"""What the OpenAPI document says of a change that honours If-Match."""
