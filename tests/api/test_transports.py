"""REST and MCP are two transports over the same operations: one table of operations, each
called over REST (account acme) and over MCP (account beta) on one server, answering alike.

The answers must match field for field, except those that differ by nature (ids the store
made, the account, URLs holding a job id); every tool is in the table; an error has the same
kind and reason over both.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_support import serve
from mcp_support import error_text, http_client, run, structured

from memory.accounts import create_key
from memory.api.mcp.http import create_app_with_mcp
from memory.clock import FixedClock
from memory.context import Context
from memory.store.lance import LanceStore
from memory.testing import hashing_embedder

VOLATILE = {"id", "bank_id", "bank", "account", "summary_id", "resource_id", "status_url"}
VOLATILE |= {"download_url"}
WHEN = {"final_at"}
"""A forget over REST answers before its prune (null), the MCP tool after it (a time)."""
CURRENT = {"Seclai-Version": "2026-08-03"}
EXPORT = {"resource_type": "memory_bank", "resource_id": "{bank}", "filters": {"key": "c1"}}
FACT = {"content": "Dana prefers e-mail.", "type": "preference", "tags": ["contact"]}


@dataclass(frozen=True)
class Op:
    """One operation: a tool and its endpoint. `{name}` in the path, or a value that is
    exactly `"{name}"`, is what an earlier operation kept on the same side."""

    tool: str
    method: str
    path: str
    body: dict[str, Any] | None = None
    params: dict[str, Any] = field(default_factory=dict)
    """REST query parameters (tool arguments too)."""
    tool_args: dict[str, Any] = field(default_factory=dict)
    """Arguments only the tool takes (REST has them in the path)."""
    keep: tuple[str, str | None] | None = None
    """(name, field of the result; None: the whole result) to keep for later operations."""
    job: bool = False
    """REST answers a job: compare its result (after waiting for it)."""


BANK = {"memory_bank_id": "{bank}"}
OPS = [
    Op("create_memory_bank", "POST", "/memory_banks",
       {"name": "support", "type": "conversation", "compaction_prompt": "Keep facts."},
       keep=("bank", "id")),
    Op("get_memory_bank", "GET", "/memory_banks/{bank}", tool_args=BANK),
    Op("update_memory_bank", "PUT", "/memory_banks/{bank}",
       {"description": "Customer threads", "max_turns": 0, "retention_days": 7}, tool_args=BANK),
    Op("list_memory_banks", "GET", "/memory_banks", params={"type": "conversation"}),
    Op("list_memory_bank_templates", "GET", "/memory_banks/templates", params={"limit": 3}),
    *(
        Op("write_memory_bank_entry", "POST", "/memory_banks/{bank}/entries",
           {"key": "c1", "speaker": who, "content": text, "tags": [f"t{i}"]}, tool_args=BANK,
           keep=("entry", "id"))
        for i, (who, text) in enumerate(
            [("Agent", "Thanks, Dana here."), ("Dana", "Order 88213 has a cracked tank."),
             ("Agent", "We ship a new one.")]
        )
    ),
    Op("search_memory_bank", "POST", "/memory_banks/{bank}/search",
       {"text": "cracked tank order", "k": 1}, tool_args=BANK),  # k=1: ties order by id
    Op("load_memory_bank_thread", "GET", "/memory_banks/{bank}/entries", params={"key": "c1"},
       tool_args=BANK),
    Op("get_memory_bank_stats", "GET", "/memory_banks/{bank}/stats", params={"days": 7},
       tool_args=BANK),
    Op("get_memory_bank_entry", "GET", "/memory_banks/{bank}/entries/{entry}",
       tool_args={**BANK, "entry_id": "{entry}"}),
    Op("list_memory_bank_agents", "GET", "/memory_banks/{bank}/agents", tool_args=BANK),
    Op("forget_memory_bank_entry", "DELETE", "/memory_banks/{bank}/entries/{entry}",
       tool_args={**BANK, "entry_id": "{entry}"}),
    Op("estimate_resource_export", "POST", "/authenticated/resource-exports/estimate", EXPORT),
    Op("create_resource_export", "POST", "/authenticated/resource-exports", EXPORT,
       params={"wait": 30}, keep=("export", "id")),
    Op("get_resource_export", "GET", "/authenticated/resource-exports/{export}",
       tool_args={"export_id": "{export}"}),
    Op("read_resource_export", "GET", "/authenticated/resource-exports/{export}/download",
       tool_args={"export_id": "{export}"}),
    Op("read_resource_export_bytes", "GET", "/authenticated/resource-exports/{export}/download",
       tool_args={"export_id": "{export}"}),
    Op("test_memory_bank_compaction", "POST", "/memory_banks/{bank}/test-compaction",
       {"compaction_prompt": "Keep order numbers.", "key": "c1", "max_turns": 1},
       tool_args=BANK, job=True),
    Op("update_memory_bank", "PUT", "/memory_banks/{bank}", {"max_turns": 1}, tool_args=BANK),
    Op("compact_memory_bank_now", "POST", "/memory_banks/{bank}/compact", tool_args=BANK,
       job=True),
    Op("generate_memory_bank_config", "POST", "/memory_banks/generate_memory_bank_config",
       {"description": "meeting notes, about 10 a week", "type": "conversation"},
       keep=("proposal", None)),
    Op("accept_memory_bank_config", "POST",
       "/memory_banks/{bank}/generate_memory_bank_config/accept", {"proposal": "{proposal}"},
       tool_args=BANK),
    Op("memory_remember", "POST", "/users/dana/memories", FACT, tool_args={"user": "dana"},
       keep=("memory", "id")),
    Op("memory_recall", "POST", "/users/dana/memories/recall",
       {"query": "how to contact Dana", "k": 3}, tool_args={"user": "dana"}),
    Op("list_user_memories", "GET", "/users/dana/memories", tool_args={"user": "dana"}),
    Op("memory_forget", "DELETE", "/users/dana/memories/{memory}",
       tool_args={"user": "dana", "memory_id": "{memory}"}),
    Op("delete_memory_bank_source", "DELETE", "/memory_banks/{bank}/source", tool_args=BANK),
    Op("delete_memory_bank", "DELETE", "/memory_banks/{bank}", tool_args=BANK),
]  # fmt: skip


def filled(value: Any, kept: dict[str, Any]) -> Any:
    """Return `value` with each `"{name}"` replaced by what this side kept as `name`."""
    if isinstance(value, dict):
        return {k: filled(v, kept) for k, v in value.items()}
    if isinstance(value, str) and value.startswith("{") and value.strip("{}") in kept:
        return kept[value.strip("{}")]
    return value


def normalised(value: Any) -> Any:
    """Return `value` with the fields that differ by nature replaced by a placeholder."""
    if isinstance(value, dict):
        return {
            k: "<volatile>" if (k in VOLATILE and v is not None) or k in WHEN else normalised(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [normalised(v) for v in value]
    return value


@pytest.fixture
def urls(tmp_path: Path, clock: FixedClock) -> Iterator[tuple[str, str, str]]:
    base = Context(
        store=LanceStore(str(tmp_path / "db")), account="x", clock=clock, embedder=hashing_embedder
    )
    acme, beta = create_key(base, "acme").key, create_key(base, "beta").key
    with serve(create_app_with_mcp(base, exports_dir=tmp_path / "exports")) as running:
        yield running.url, acme, beta


def test_every_operation_answers_alike_over_rest_and_mcp(urls: tuple[str, str, str]) -> None:
    url, acme, beta = urls
    rest = httpx.Client(base_url=url, headers={"X-API-Key": acme, **CURRENT}, timeout=60)
    over_rest: dict[str, Any] = {}
    over_mcp: dict[str, Any] = {}

    async def work() -> set[str]:
        async with http_client(f"{url}/mcp", **{"X-API-Key": beta}) as mcp:
            for op in OPS:
                params = {**op.params, **({"wait": 30} if op.job else {})}
                path = op.path.format(**over_rest)
                body = filled(op.body, over_rest)
                answer = rest.request(op.method, path, params=params, json=body)
                assert answer.status_code < 300, (op.tool, answer.text)
                got_rest = answer.json()["result"] if op.job else answer.json()
                args = filled({**op.tool_args, **(op.body or {}), **op.params}, over_mcp)
                got_mcp = structured(await mcp.call_tool(op.tool, args))
                if op.tool == "read_resource_export":  # the file's JSON, inline
                    got_mcp = json.loads(got_mcp["content"])
                if op.tool == "read_resource_export_bytes":  # the file, base64 (one range)
                    got_mcp = json.loads(base64.b64decode(got_mcp["data"]))
                assert normalised(got_mcp) == normalised(got_rest), op.tool
                if op.keep is not None:
                    name, key = op.keep
                    over_rest[name] = got_rest[key] if key else got_rest
                    over_mcp[name] = got_mcp[key] if key else got_mcp
            return {t.name for t in (await mcp.list_tools()).tools}

    assert run(work) == {op.tool for op in OPS}


def test_errors_have_the_same_kind_and_reason_over_both(urls: tuple[str, str, str]) -> None:
    url, acme, _ = urls
    rest = httpx.Client(base_url=url, headers={"X-API-Key": acme, **CURRENT})
    bank = rest.post("/memory_banks", json={"name": "g", "type": "general"}).json()["id"]
    kinds = {400: "invalid input", 404: "not found", 409: "conflict"}
    cases = [
        ("update_memory_bank", {"type": "conversation"}, "PUT", f"/memory_banks/{bank}"),
        (
            "write_memory_bank_entry",
            {"key": "k", "content": "x", "speaker": "Al"},
            "POST",
            f"/memory_banks/{bank}/entries",
        ),
        ("search_memory_bank", {"text": "x", "k": 5000}, "POST", f"/memory_banks/{bank}/search"),
        ("create_memory_bank", {"name": "g", "type": "general"}, "POST", "/memory_banks"),
        ("get_memory_bank", {}, "GET", "/memory_banks/nope"),
        (
            "test_memory_bank_compaction",
            {"compaction_prompt": " "},
            "POST",
            f"/memory_banks/{bank}/test-compaction",
        ),
    ]

    async def work() -> list[str]:
        async with http_client(f"{url}/mcp", **{"X-API-Key": acme}) as mcp:
            messages = []
            for tool, args, _, path in cases:
                ref = path.split("/")[2] if path.count("/") >= 2 else None
                extra = {"memory_bank_id": ref} if ref else {}
                messages.append(error_text(await mcp.call_tool(tool, {**extra, **args})))
            return messages

    for (tool, args, method, path), message in zip(cases, run(work), strict=True):
        answer = rest.request(method, path, json=args or None)
        kind = kinds[answer.status_code]
        assert message.startswith(f"Error executing tool {tool}: {kind}: "), (tool, message)
        assert message.endswith(answer.json()["error"]["message"]), tool
