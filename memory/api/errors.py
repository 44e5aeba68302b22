"""Errors as JSON: `{"error": {"code", "message"}}` with the status that fits, mapped once.

The core's exceptions (`memory.errors`) map to 400 (InvalidInput), 404 (NotFound), 409
(Conflict), 502 (ProviderError) and 503 (StorageError); request-shape errors are a 422 that
names the field and what to send, never pydantic's internals; anything unexpected is a 500
with no detail (the request id ties it to the server's log).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from memory.errors import (
    Conflict,
    InvalidInput,
    MembankError,
    NotFound,
    ProviderError,
    StorageError,
)

log = logging.getLogger("membank.api")


class ErrorBody(BaseModel):
    """What went wrong: a stable code and a message saying how to fix it."""

    code: str
    message: str


class ErrorResponse(BaseModel):
    """Every error response."""

    error: ErrorBody


class ApiError(Exception):
    """An error the API answers with `status` and `{"error": {"code", "message"}}`."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


STATUS_CODES = {
    400: "invalid_input",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "too_many_requests",
    500: "internal_error",
    502: "provider_error",
    503: "storage_error",
}

_CORE: list[tuple[type[MembankError], int]] = [
    (InvalidInput, 400),
    (NotFound, 404),
    (Conflict, 409),
    (ProviderError, 502),
    (StorageError, 503),
]

ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorResponse, "description": code.replace("_", " ")}
    for status, code in STATUS_CODES.items()
    if status in (400, 401, 404, 413, 422, 500)
}
"""The error statuses every route may answer, for the OpenAPI document."""


def error_json(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """Return the JSON error response."""
    body = ErrorResponse(error=ErrorBody(code=code, message=message))
    return JSONResponse(body.model_dump(), status_code=status, headers=headers)


def status_of(exc: MembankError) -> int:
    """Return the HTTP status of a core exception."""
    for kind, status in _CORE:
        if isinstance(exc, kind):
            return status
    return 500


def _field(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    where = loc[0] if loc and loc[0] in ("body", "query", "path", "header") else "body"
    name = ".".join(parts)
    return f"{where} field {name!r}" if name else f"the request {where}"


def _problem(error: dict[str, Any]) -> str:
    kind = str(error.get("type", ""))
    where = _field(tuple(error.get("loc", ())))
    if kind == "missing":
        return f"{where} is required"
    if kind == "extra_forbidden":
        return f"{where} is not a field here: remove it"
    if kind in ("json_invalid", "json_type"):
        return "the request body is not valid JSON: send a JSON object"
    if kind == "model_attributes_type" or kind == "dict_type":
        return f"{where} must be a JSON object"
    message = str(error.get("msg", "is not valid"))
    return f"{where}: {message[0].lower() + message[1:] if message else 'is not valid'}"


def validation_message(errors: Any) -> str:
    """Return one line naming each bad field and what to send instead."""
    problems = [_problem(e) for e in list(errors)[:5]]
    return "; ".join(dict.fromkeys(problems)) or "the request is not valid"


def install(app: FastAPI) -> None:
    """Register the handlers that turn every error into the JSON error body."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_json(exc.status, exc.code, exc.message)

    @app.exception_handler(MembankError)
    async def _core_error(request: Request, exc: MembankError) -> JSONResponse:
        status = status_of(exc)
        if status >= 500:
            log.warning("request %s failed: %s", _rid(request), exc)
        return error_json(status, STATUS_CODES.get(status, "internal_error"), str(exc))

    @app.exception_handler(RequestValidationError)
    async def _shape_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        return error_json(422, "invalid_request", validation_message(exc.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = STATUS_CODES.get(exc.status_code, "error")
        message = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
        if exc.status_code == 404 and message == "Not Found":
            message = f"no such endpoint: {request.method} {request.url.path} (see /docs)"
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            allowed = allowed_methods(app, request.url.path)
            headers["Allow"] = ", ".join(allowed)
            message = (
                f"{request.method} is not allowed on {request.url.path}: use "
                f"{' or '.join(allowed)} (see /docs)"
            )
        return error_json(exc.status_code, code, message, headers=headers)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("request %s failed", _rid(request))
        return error_json(
            500,
            "internal_error",
            f"the server failed on this request (request id {_rid(request)}); nothing "
            "more is shown here",
        )


def allowed_methods(app: FastAPI, path: str) -> list[str]:
    """Return every method some route of `app` serves at `path` (for a 405's Allow)."""
    found: set[str] = set()
    for route in app.routes:
        if isinstance(route, APIRoute) and route.path_regex.match(path):
            found.update(route.methods or ())
    return sorted(found)


def _rid(request: Request) -> str:
    return str(getattr(request.state, "request_id", "-"))
