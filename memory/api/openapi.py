"""What the OpenAPI document adds to FastAPI's own: the headers every change takes
(`Idempotency-Key`) or answers (`RateLimit-*`, `Retry-After`), the 403 (scope), 412
(`If-Match`) and 429 answers, and links from what a create answers to the reads of it (so a
stateful test walks create -> read -> change -> delete)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from memory.types.fields import MAX_RETENTION_DAYS, MAX_THRESHOLD

CHANGES = ("post", "put", "patch", "delete")
PUBLIC = ("/openapi.json", "/docs", "/redoc")
_ERROR = {"$ref": "#/components/schemas/ErrorResponse"}
_INT = {"schema": {"type": "integer"}}
RATE_HEADERS = {
    "RateLimit-Policy": {
        "description": "the key's limit: N;w=seconds",
        "schema": {"type": "string"},
    },
    "RateLimit-Limit": {"description": "requests per window", **_INT},
    "RateLimit-Remaining": {"description": "requests left now", **_INT},
    "RateLimit-Reset": {"description": "seconds until the bucket is full", **_INT},
}
IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "Run this change once: a retry with the same key (held 24 h, per "
    "account) gets the first answer back (`Idempotent-Replayed: true`) and stores nothing "
    "twice. The same key with another request is a 422.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"},
}
IF_MATCH = {
    "name": "If-Match",
    "in": "header",
    "required": False,
    "description": "Change only if the resource still has this ETag (else 412).",
    "schema": {"type": "string", "maxLength": 200},
}
_BANK = {"bank_id": "$response.body#/id"}
_JOB = {"GetJob": ("get_job_jobs__job_id__get", {"job_id": "$response.body#/id"})}
LINKS = {
    ("/memory_banks", "post"): {
        "GetBank": ("get_bank_memory_banks__bank_id__get", _BANK),
        "UpdateBank": ("update_bank_memory_banks__bank_id__put", _BANK),
        "WriteEntry": ("write_entry_memory_banks__bank_id__entries_post", _BANK),
        "SearchBank": ("search_entries_memory_banks__bank_id__search_post", _BANK),
        "GetStats": ("get_stats_memory_banks__bank_id__stats_get", _BANK),
        "ListAgents": ("list_agents_memory_banks__bank_id__agents_get", _BANK),
        "CompactNow": ("compact_now_memory_banks__bank_id__compact_post", _BANK),
        "DeleteSource": ("delete_source_memory_banks__bank_id__source_delete", _BANK),
        "DeleteBank": ("delete_bank_memory_banks__bank_id__delete", _BANK),
    },
    ("/memory_banks/{bank_id}/entries", "post"): {
        "GetEntry": (
            "get_entry_memory_banks__bank_id__entries__entry_id__get",
            {"bank_id": "$response.body#/bank_id", "entry_id": "$response.body#/id"},
        ),
        "LoadThread": (
            "load_thread_memory_banks__bank_id__entries_get",
            {"bank_id": "$response.body#/bank_id", "key": "$response.body#/key"},
        ),
        "ForgetEntry": (
            "forget_entry_memory_banks__bank_id__entries__entry_id__delete",
            {"bank_id": "$response.body#/bank_id", "entry_id": "$response.body#/id"},
        ),
    },
    ("/users/{user_id}/memories", "post"): {
        "ListMemories": (
            "list_memories_users__user_id__memories_get",
            {"user_id": "$request.path.user_id"},
        ),
        "ForgetMemory": (
            "forget_users__user_id__memories__memory_id__delete",
            {"user_id": "$request.path.user_id", "memory_id": "$response.body#/id"},
        ),
    },
    ("/authenticated/resource-exports", "post"): {
        "GetExport": (
            "get_export_authenticated_resource_exports__export_id__get",
            {"export_id": "$response.body#/id"},
        ),
        "DownloadExport": (
            "download_export_authenticated_resource_exports__export_id__download_get",
            {"export_id": "$response.body#/id"},
        ),
    },
    ("/memory_banks/{bank_id}/compact", "post"): _JOB,
    ("/memory_banks/{bank_id}/test-compaction", "post"): _JOB,
    ("/memory_banks/test-compaction", "post"): _JOB,
    ("/users/{user_id}/conversations/end", "post"): _JOB,
    ("/keys", "post"): {
        "RevokeKey": (
            "revoke_key_keys__key_id__delete",
            {"key_id": "$response.body#/key_id"},
        ),
    },
}
"""(path, method) of a create (201) or a job start (202): links named to the operation ids
of reads and changes of what it made."""


def install(app: FastAPI) -> None:
    """Make `app.openapi()` return FastAPI's document with this module's additions."""

    def document() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            _add(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = document  # type: ignore[method-assign]


def _ranges() -> dict[str, dict[str, Any]]:
    """Return the documented rules of bank fields that pydantic's schema leaves out (they
    are checked by validators): the stateful phase then makes banks it can follow links of."""
    from memory.config import modes, templates

    threshold = {"type": "integer", "minimum": 0, "maximum": MAX_THRESHOLD}
    return {
        "mode": {"type": "string", "enum": sorted(modes())},
        "template": {"type": "string", "enum": sorted(templates())},
        "max_tokens": threshold,
        "max_turns": threshold,
        "retention_days": {"type": "integer", "minimum": 1, "maximum": MAX_RETENTION_DAYS},
    }


def _document_bank_rules(schema: dict[str, Any]) -> None:
    components = schema.get("components", {}).get("schemas", {})
    rules = _ranges()
    for name in ("BankCreate", "BankUpdate"):
        fields = components.get(name, {}).get("properties", {})
        for field, rule in rules.items():
            if field in fields and "anyOf" in fields[field]:
                fields[field]["anyOf"] = [rule, {"type": "null"}]


def _add(schema: dict[str, Any]) -> None:
    _document_bank_rules(schema)
    operation_ids = {
        op.get("operationId")
        for item in schema.get("paths", {}).values()
        for op in item.values()
        if isinstance(op, dict)
    }
    for path, item in schema.get("paths", {}).items():
        for method, operation in item.items():
            if method not in (*CHANGES, "get") or path in PUBLIC:
                continue
            responses = operation.setdefault("responses", {})
            responses.setdefault("403", _error("the key lacks the scope or the bank this needs"))
            responses.setdefault(
                "429",
                {
                    **_error("too many requests (or jobs): retry after Retry-After seconds"),
                    "headers": {"Retry-After": {"description": "seconds to wait", **_INT}},
                },
            )
            for answer in responses.values():
                answer.setdefault("headers", {}).update(RATE_HEADERS)
            if method in CHANGES:
                params = operation.setdefault("parameters", [])
                params.append(IDEMPOTENCY_KEY)
                responses.setdefault("422", _error("the request's shape is wrong"))
                responses.setdefault("409", _error("it conflicts with what is stored"))
                if "412" in responses:
                    params.append(IF_MATCH)
            links = LINKS.get((path, method), {})
            created = responses.get("201") or responses.get("202")
            if created is not None and links:
                created["links"] = {
                    name: {"operationId": target, "parameters": parameters}
                    for name, (target, parameters) in links.items()
                    if target in operation_ids
                }


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ERROR}}}
