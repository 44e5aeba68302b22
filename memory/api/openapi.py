"""What the OpenAPI document adds to FastAPI's own: the headers every change takes
(`Idempotency-Key`) or answers (`RateLimit-*`, `Retry-After`), the 403 (scope), 412
(`If-Match`) and 429 answers, and links from what a create answers to the reads of it (so a
stateful test walks create -> read -> change -> delete)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

from memory.agents.memories import MAX_ID_LENGTH
from memory.types.fields import (
    MAX_KEY_LENGTH,
    MAX_NAME_LENGTH,
    MAX_RETENTION_DAYS,
    MAX_SPEAKER_LENGTH,
    MAX_TAG_LENGTH,
    MAX_THRESHOLD,
)

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
_EXPORT_BODY = {"resource_type": "memory_bank", "resource_id": "$response.body#/id"}
"""The export of the bank just made (merged into a generated body: format, filters)."""
Link = tuple[str, dict[str, str]] | tuple[str, dict[str, str], dict[str, str]]
"""A link: the target's operation id, its parameters[, the request body to merge]."""
_NEXT_ENTRY = {
    "key": "$response.body#/key",
    "speaker": "$response.body#/speaker",
    "role": "$response.body#/role",
}
"""The same partition, speaker and role (null on a general bank, as it must be)."""
_JOB: dict[str, Link] = {"GetJob": ("get_job_jobs__job_id__get", {"job_id": "$response.body#/id"})}
LINKS: dict[tuple[str, str], dict[str, Link]] = {
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
        "ExportBank": (
            "create_export_authenticated_resource_exports_post",
            {},
            _EXPORT_BODY,
        ),
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
        "WriteNext": (  # the next entry of the thread (a compaction test needs 2 or more)
            "write_entry_memory_banks__bank_id__entries_post",
            {"bank_id": "$response.body#/bank_id"},
            _NEXT_ENTRY,
        ),
        "TestCompaction": (  # the partition just written to: an empty one is a 400 at once
            "test_compaction_memory_banks__bank_id__test_compaction_post",
            {"bank_id": "$response.body#/bank_id"},
            {"key": "$response.body#/key"},
        ),
    },
    ("/users/{user_id}/memories", "post"): {
        "ListMemories": (
            "list_memories_users__user_id__memories_get",
            {"user_id": "$request.path.user_id"},
        ),
        "RecallMemories": (
            "recall_users__user_id__memories_recall_post",
            {"user_id": "$request.path.user_id"},
        ),
        "WipeUser": ("wipe_user_users__user_id__delete", {"user_id": "$request.path.user_id"}),
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
of reads and changes of what it made, each (operation id, parameters[, request body])."""


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


_ONE_LINE = "[^\\u0000-\\u001f\\u007f-\\u009f]"
"""A character a one-line label may hold (no C0 or C1 control character)."""
_SOLID = "[^\\s\\u0000-\\u001f\\u007f-\\u009f]"


def _label(limit: int) -> dict[str, Any]:
    """Return the schema of a one-line label (`memory.types.fields.check_label`): 1-`limit`
    characters, not blank, no control character."""
    pattern = f"^{_ONE_LINE}*{_SOLID}{_ONE_LINE}*$"
    return {"type": "string", "minLength": 1, "maxLength": limit, "pattern": pattern}


_TEXT = {"type": "string", "pattern": "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$"}
"""Text that is not blank and holds no NUL (entry content, a compaction prompt)."""


def _fields() -> dict[str, dict[str, dict[str, Any]]]:
    """Return, per request schema, the documented rules of fields that pydantic's schema
    leaves out (validators check them): the stateful phase then makes banks and entries
    it can follow links of, instead of 400s."""
    threshold = {"type": "integer", "minimum": 0, "maximum": MAX_THRESHOLD}
    retired = {
        "type": "integer",
        "enum": [0],
        "description": "retired: 0 clears it (a legacy API version accepts any number, with "
        "no effect)",
    }
    bank = {**_ranges(), "name": _label(MAX_NAME_LENGTH), "max_age_days": retired}
    return {
        "BankCreate": bank,
        "BankUpdate": bank,
        "EntryWrite": {
            "key": _label(MAX_KEY_LENGTH),
            "content": _TEXT,
            "speaker": _label(MAX_SPEAKER_LENGTH),
            "role": _label(MAX_SPEAKER_LENGTH),
            "tags": {"type": "array", "items": _label(MAX_TAG_LENGTH)},
        },
        "EndConversation": {"agent": _label(MAX_ID_LENGTH), "conversation": _label(MAX_KEY_LENGTH)},
        "RememberRequest": {"content": _TEXT, "agent": _label(MAX_ID_LENGTH)},
        "RecallRequest": {"query": _TEXT, "agent": _label(MAX_ID_LENGTH)},
        "TestCompactionRequest": {
            "compaction_prompt": _TEXT,
            "key": _label(MAX_KEY_LENGTH),
            "max_tokens": threshold,
            "max_turns": threshold,
        },
    }


TYPE_OR_TEMPLATE = [
    {"required": ["type"], "properties": {"type": {"type": "string"}}},
    {"required": ["template"], "properties": {"template": {"type": "string"}}},
]
"""A bank create names its type, or a template that does."""


def _document_bank_rules(schema: dict[str, Any]) -> None:
    components = schema.get("components", {}).get("schemas", {})
    if "BankCreate" in components:
        components["BankCreate"]["anyOf"] = TYPE_OR_TEMPLATE
    for name, rules in _fields().items():
        fields = components.get(name, {}).get("properties", {})
        for field, rule in rules.items():
            if field not in fields:
                continue
            if "anyOf" in fields[field]:
                fields[field]["anyOf"] = [rule, {"type": "null"}]
            else:
                fields[field].update(rule)


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
                    name: _link(*link) for name, link in links.items() if link[0] in operation_ids
                }


def _link(
    target: str, parameters: dict[str, str], body: dict[str, str] | None = None
) -> dict[str, Any]:
    found: dict[str, Any] = {"operationId": target, "parameters": parameters}
    if body is not None:
        found["requestBody"] = body
    return found


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ERROR}}}
