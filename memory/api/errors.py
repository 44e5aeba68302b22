"""Errors as JSON: `{"error": {"code", "message"}}` with the status that fits, mapped once.

The core's exceptions (`memory.errors`) map to 400 (InvalidInput), 404 (NotFound), 409
(Conflict), 429 (TooManyJobs), 502 (ProviderError) and 503 (StorageError), in one table
(`KINDS`, in `memory.api.models.errors`, free of FastAPI) that the REST handlers, failed
jobs and the MCP tool errors all read; request-shape errors are a 422 that names the
field and what to send, never pydantic's internals; anything unexpected is a 500 with no
detail (the request id ties it to the server's log), answered by the request guard only
(`memory.api.middleware.Guard`).
"""

from __future__ import annotations

import logging
import math
import os
import re
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from memory.api.models.errors import KINDS as KINDS
from memory.api.models.errors import STATUS_CODES as STATUS_CODES
from memory.api.models.errors import ErrorBody as ErrorBody
from memory.api.models.errors import ErrorResponse as ErrorResponse
from memory.api.models.errors import code_of as code_of
from memory.api.models.errors import kind_of
from memory.api.models.errors import status_of as status_of
from memory.errors import BankNotFound, MembankError
from memory.ops.jobs import TooManyJobs

log = logging.getLogger("membank.api")
DEFAULT_RETRY_AFTER = 5
"""Seconds a 429 for too many jobs asks a client to wait, when nothing better is known."""
_PATH = re.compile(
    r"(?<![\w/.])(?:/(?:tmp|home|root|var|etc|srv|opt|work|Users|mnt)|~)(?:/[^\s'\"),;]+)+"
)
"""An absolute file path under a usual root (a request path such as /memory_banks is not)."""


class ApiError(Exception):
    """An error the API answers with `status` and `{"error": {"code", "message"}}`."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


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


def retry_after_of(request: Request, exc: TooManyJobs) -> int:
    """Return the seconds a client should wait after a 429 for too many jobs: the pool's
    own estimate when it gives one, else the server's `job_retry_after` limit."""
    given = getattr(exc, "retry_after", None)
    if isinstance(given, int | float) and given > 0:
        return max(1, math.ceil(given))
    limits = getattr(getattr(request.app.state, "membank", None), "limits", None)
    return int(getattr(limits, "job_retry_after", DEFAULT_RETRY_AFTER))


def redact(message: str) -> str:
    """Return `message` without the server's own folders (its config folder, its home):
    a remote caller is told what to change, never where the server keeps its files."""
    where = os.environ.get("MEMBANK_CONFIG_DIR", "").strip().rstrip("/")
    if len(where) > 1:
        message = message.replace(where, "set on the server")
    return _PATH.sub("(a server path)", message)


def told(exc: MembankError) -> str:
    """Return a core exception's message as a remote caller sees it (a missing bank's names
    no storage location, and is the same for another account's bank; no server paths)."""
    return redact(exc.public if isinstance(exc, BankNotFound) else str(exc))


def tool_message(exc: MembankError) -> str:
    """Return a core exception as an MCP tool error's text (what to change, in its words)."""
    return kind_of(exc)[1].format(told(exc))


def unexpected_message(request_id: str) -> str:
    """Return the message of a 500: the request id, nothing of the failure."""
    return (
        f"the server failed on this request (request id {request_id}); nothing more is shown here"
    )


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


Authenticate = Callable[[Request], "ApiError | None"]


def install(app: FastAPI, authenticate: Authenticate | None = None) -> None:
    """Register the handlers that turn every error into the JSON error body.

    Args:
        app: the application.
        authenticate: returns why a request is not authenticated (None: it is); a request
            whose shape is wrong gets that error first (a 401 before any 422).
    """

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_json(exc.status, exc.code, exc.message)

    @app.exception_handler(MembankError)
    async def _core_error(request: Request, exc: MembankError) -> JSONResponse:
        status = status_of(exc)
        if status >= 500:
            log.warning("request %s failed: %s", _rid(request), exc)
        headers = None
        if isinstance(exc, TooManyJobs):
            headers = {"Retry-After": str(retry_after_of(request, exc))}
        return error_json(status, code_of(exc), told(exc), headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _shape_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        problem = authenticate(request) if authenticate is not None else None
        if problem is not None:
            return error_json(problem.status, problem.code, problem.message)
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


def allowed_methods(app: FastAPI, path: str) -> list[str]:
    """Return the methods the API documents for `path` (a 405's Allow): those of the most
    specific path template matching it (`/memory_banks/templates`, not `/{bank_id}`)."""
    best: tuple[int, list[str]] | None = None
    for template, operations in app.openapi().get("paths", {}).items():
        pattern = re.sub(r"\\{[^/]+?\\}", "[^/]+", re.escape(template))
        if re.fullmatch(pattern, path):
            params = template.count("{")
            if best is None or params < best[0]:
                best = (params, sorted(m.upper() for m in operations))
    return [] if best is None else best[1]


def _rid(request: Request) -> str:
    return str(getattr(request.state, "request_id", "-"))
