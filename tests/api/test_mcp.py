"""The MCP tools through the SDK's in-memory client: each one a thin call into `memory`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import replace
from datetime import timedelta

import pytest
from mcp import Client
from mcp.server import MCPServer
from mcp.types import Tool
from mcp_support import call, fails, ok, run

from memory import banks, entries
from memory.api.mcp import build_server
from memory.api.mcp.state import own_state
from memory.clock import FixedClock
from memory.config import Mode
from memory.context import Context
from memory.models import BankCreate, EntryIn
from memory.ports import Embedder

BANK_TOOLS = {
    "list_memory_banks",
    "list_memory_bank_templates",
    "get_memory_bank",
    "create_memory_bank",
    "update_memory_bank",
    "delete_memory_bank",
    "delete_memory_bank_source",
    "get_memory_bank_stats",
}
ENTRY_TOOLS = {
    "write_memory_bank_entry",
    "search_memory_bank",
    "load_memory_bank_thread",
    "forget_memory_bank_entry",
    "compact_memory_bank_now",
}


Servers = Callable[[Context], MCPServer]


@pytest.fixture
def servers() -> Iterator[Servers]:
    """Returns a server on a context (with its own job pool, stopped after the test)."""
    with ExitStack() as stack:

        def make(on: Context) -> MCPServer:
            return build_server(stack.enter_context(own_state(on)))

        yield make


@pytest.fixture
def server(ctx: Context, servers: Servers) -> MCPServer:
    return servers(ctx)


def test_every_tool_is_listed_with_a_strict_described_schema(server: MCPServer) -> None:
    async def work() -> list[Tool]:
        async with Client(server) as client:
            return (await client.list_tools()).tools

    tools = {t.name: t for t in run(work)}
    assert set(tools) >= BANK_TOOLS | ENTRY_TOOLS
    for tool in tools.values():
        assert tool.description, tool.name
        assert tool.input_schema["additionalProperties"] is False, tool.name
        for name, field in tool.input_schema.get("properties", {}).items():
            assert field.get("description"), f"{tool.name}.{name} has no description"
    hints = {name: t.annotations for name, t in tools.items()}
    assert hints["delete_memory_bank"].destructive_hint is True
    assert hints["search_memory_bank"].read_only_hint is True
    assert hints["write_memory_bank_entry"].read_only_hint is False
    assert tools["write_memory_bank_entry"].input_schema["required"] == [
        "memory_bank_id",
        "key",
        "content",
    ]


def test_create_get_update_list_delete_are_the_core_records(
    server: MCPServer, ctx: Context, clock: FixedClock
) -> None:
    made = ok(server, "create_memory_bank", {"name": "support", "type": "conversation"})
    stored = banks.get(ctx, made["id"])
    assert made == stored.model_dump(mode="json")
    assert made["account"] == "acme" and made["retention_days"] == 90  # current default
    assert ok(server, "get_memory_bank", {"memory_bank_id": made["id"]}) == made

    changed = ok(
        server,
        "update_memory_bank",
        {"memory_bank_id": made["id"], "name": "renamed", "max_turns": 0, "retention_days": 7},
    )
    assert changed == banks.get(ctx, made["id"]).model_dump(mode="json")
    assert (changed["name"], changed["max_turns"], changed["retention_days"]) == (
        "renamed",
        None,
        7,
    )

    clock.advance(timedelta(minutes=1))
    ok(server, "create_memory_bank", {"name": "notes", "type": "general"})
    listed = ok(server, "list_memory_banks", {})["data"]
    assert [b["name"] for b in listed] == ["renamed", "notes"]
    assert [b["name"] for b in ok(server, "list_memory_banks", {"type": "general"})["data"]] == [
        "notes"
    ]

    gone = ok(server, "delete_memory_bank", {"memory_bank_id": "renamed"})
    assert gone == {"id": made["id"], "deleted": True}
    assert [b.name for b in banks.list_banks(ctx)] == ["notes"]


def test_an_omitted_retention_is_the_default_and_an_explicit_null_is_indefinite(
    server: MCPServer,
) -> None:
    omitted = ok(server, "create_memory_bank", {"name": "a", "type": "conversation"})
    forever = ok(
        server, "create_memory_bank", {"name": "b", "type": "conversation", "retention_days": None}
    )
    assert (omitted["retention_days"], forever["retention_days"]) == (90, None)


def test_templates_are_listed_and_prefill_a_new_bank(server: MCPServer) -> None:
    templates = ok(server, "list_memory_bank_templates", {})["data"]
    assert templates, "no templates"
    first = templates[0]
    made = ok(server, "create_memory_bank", {"name": "t", "template": first["name"]})
    assert (made["type"], made["mode"]) == (first["type"], first["mode"])
    assert made["compaction_prompt"] == first["compaction_prompt"]


def test_write_search_load_forget(server: MCPServer, ctx: Context) -> None:
    bank = ok(server, "create_memory_bank", {"name": "support", "type": "conversation"})
    ref = {"memory_bank_id": bank["id"]}
    written = ok(
        server,
        "write_memory_bank_entry",
        {
            **ref,
            "key": "customer-1",
            "speaker": "Dana",
            "role": "user",
            "content": "My order #88213 arrived with a cracked tank.",
            "tags": ["order"],
        },
    )
    ok(
        server,
        "write_memory_bank_entry",
        {**ref, "key": "customer-1", "speaker": "Agent", "content": "A new tank ships today."},
    )
    stored = entries.load(ctx, banks.get(ctx, bank["id"]), "customer-1")
    assert [e.model_dump(mode="json") for e in stored] == ok(
        server, "load_memory_bank_thread", {**ref, "key": "customer-1"}
    )["data"]
    hits = ok(server, "search_memory_bank", {**ref, "text": "cracked tank", "k": 1})["data"]
    assert [h["entry"]["id"] for h in hits] == [written["id"]]
    tagged = ok(server, "search_memory_bank", {**ref, "text": "tank", "tags": ["order"]})["data"]
    assert [h["entry"]["id"] for h in tagged] == [written["id"]]

    forgotten = ok(server, "forget_memory_bank_entry", {**ref, "entry_id": written["id"]})
    assert forgotten["id"] == written["id"] and forgotten["forgotten"] is True
    assert forgotten["final_at"] is not None  # the tool answers after the prune
    thread = ok(server, "load_memory_bank_thread", {**ref, "key": "customer-1"})["data"]
    assert [e["speaker"] for e in thread] == ["Agent"]
    assert "not found" in fails(
        server, "forget_memory_bank_entry", {**ref, "entry_id": written["id"]}
    )


def test_compact_now_summarizes_a_partition_over_its_threshold(
    ctx: Context, servers: Servers
) -> None:
    quiet = ctx  # memory.entries.write only appends: the partition grows over
    bank = banks.create(
        quiet,
        BankCreate(name="s", type="conversation", max_turns=3, compaction_prompt="Keep the facts."),
    )
    entries.write(
        quiet,
        bank,
        [
            EntryIn(key="k", speaker="Dana", content=f"fact number {i} about tanks")
            for i in range(6)
        ],
    )
    server = servers(quiet)
    results = ok(server, "compact_memory_bank_now", {"memory_bank_id": bank.id})
    assert [(r["key"], r["status"]) for r in results] == [("k", "compacted")]
    assert results[0]["entries_before"] == 6 and results[0]["entries_after"] <= 3
    thread = entries.load(quiet, bank, "k")
    assert len(thread) == results[0]["entries_after"]
    assert [e.id for e in thread if e.kind == "summary"] == [results[0]["summary_id"]]


def test_stats_and_delete_source(server: MCPServer, ctx: Context) -> None:
    bank = ok(server, "create_memory_bank", {"name": "g", "type": "general"})
    ref = {"memory_bank_id": bank["id"]}
    for key in ("a", "b", "b"):
        ok(server, "write_memory_bank_entry", {**ref, "key": key, "content": f"note for {key}"})
    figures = ok(server, "get_memory_bank_stats", {**ref, "days": 7})
    assert (figures["total_entries"], figures["unique_keys"]) == (3, 2)
    assert figures["unique_speakers"] is None

    reset = ok(server, "delete_memory_bank_source", ref)
    assert reset == {"id": bank["id"], "source_reset": True}
    assert ok(server, "get_memory_bank_stats", ref)["total_entries"] == 0
    assert ok(server, "get_memory_bank", ref)["name"] == "g"  # the configuration stays


def test_bad_arguments_are_tool_errors_naming_the_field(server: MCPServer, ctx: Context) -> None:
    unknown = fails(server, "create_memory_bank", {"name": "x", "type": "general", "colour": "red"})
    assert "colour" in unknown and "not permitted" in unknown and "this tool takes" in unknown
    wrong_type = fails(server, "create_memory_bank", {"name": "x", "type": "diary"})
    assert "type" in wrong_type and "conversation" in wrong_type
    missing = fails(server, "get_memory_bank", {})
    assert "memory_bank_id" in missing and "required" in missing.lower()
    assert banks.list_banks(ctx) == []  # nothing was written


def test_core_errors_come_back_as_tool_errors_and_change_nothing(
    server: MCPServer, ctx: Context
) -> None:
    bank = ok(server, "create_memory_bank", {"name": "c", "type": "conversation"})
    ref = {"memory_bank_id": bank["id"]}
    assert fails(server, "create_memory_bank", {"name": "c", "type": "general"}).startswith(
        "Error executing tool create_memory_bank: conflict: a bank named 'c' already exists"
    )
    refused = fails(server, "update_memory_bank", {**ref, "type": "general", "name": "new"})
    assert "conflict" in refused and "type cannot change" in refused
    assert banks.get(ctx, bank["id"]).name == "c"
    no_speaker = fails(server, "write_memory_bank_entry", {**ref, "key": "k", "content": "hi"})
    assert "invalid input" in no_speaker and "speaker" in no_speaker
    empty = fails(server, "search_memory_bank", {**ref, "text": "  "})
    assert "invalid input" in empty and "empty" in empty
    too_many = fails(server, "search_memory_bank", {**ref, "text": "x", "k": 5000})
    assert "k must be between 1 and 1000" in too_many
    assert ok(server, "load_memory_bank_thread", {**ref, "key": "k"})["data"] == []


def test_another_accounts_bank_is_not_found_like_a_missing_one(
    server: MCPServer, ctx: Context
) -> None:
    other = replace(ctx, account="globex")
    theirs = banks.create(other, BankCreate(name="secret", type="general"))
    entries.write(other, theirs, [EntryIn(key="k", content="globex plans")])
    missing = fails(server, "get_memory_bank", {"memory_bank_id": "no-such-bank"})
    for tool, extra in [
        ("get_memory_bank", {}),
        ("load_memory_bank_thread", {"key": "k"}),
        ("search_memory_bank", {"text": "plans"}),
        ("write_memory_bank_entry", {"key": "k", "content": "overwrite"}),
        ("delete_memory_bank", {}),
    ]:
        message = fails(server, tool, {"memory_bank_id": theirs.id, **extra})
        assert (
            message.replace(theirs.id, "no-such-bank").split(": ", 1)[1]
            == missing.split(": ", 1)[1]
        ), tool
    assert ok(server, "list_memory_banks", {})["total"] == 0
    assert [e.content for e in entries.load(other, theirs, "k")] == ["globex plans"]


def test_a_crash_is_a_generic_tool_error_not_a_dropped_connection(
    ctx: Context, servers: Servers
) -> None:
    def broken(mode: Mode) -> Embedder:
        raise RuntimeError("embedder exploded at /secret/path")

    server = servers(replace(ctx, embedder=broken))
    bank = ok(server, "create_memory_bank", {"name": "g", "type": "general"})
    result = call(
        server,
        "write_memory_bank_entry",
        {"memory_bank_id": bank["id"], "key": "k", "content": "x"},
    )
    assert result.is_error
    text = result.content[0].text
    assert text == "Error executing tool write_memory_bank_entry"
    assert ok(server, "get_memory_bank", {"memory_bank_id": bank["id"]})["name"] == "g"


def test_long_term_memory_tools_keep_users_and_agents_apart(server: MCPServer) -> None:
    shared = ok(
        server,
        "memory_remember",
        {"user": "u1", "content": "Prefers concise answers.", "type": "preference"},
    )
    own = ok(
        server,
        "memory_remember",
        {"user": "u1", "agent": "support", "scope": "agent", "content": "Ticket 42 is open."},
    )
    ok(server, "memory_remember", {"user": "u2", "content": "Prefers long answers."})

    def recalled(**who: str) -> list[str]:
        found = ok(server, "memory_recall", {**who, "query": "answers and tickets", "k": 10})
        return sorted(m["memory"]["content"] for m in found["data"])

    assert recalled(user="u1", agent="support") == [
        "Prefers concise answers.",
        "Ticket 42 is open.",
    ]
    assert recalled(user="u1", agent="billing") == ["Prefers concise answers."]
    assert recalled(user="u2") == ["Prefers long answers."]
    assert (shared["type"], own["scope"]) == ("preference", "agent")

    hidden = fails(
        server, "memory_forget", {"user": "u1", "agent": "billing", "memory_id": own["id"]}
    )
    assert "not found" in hidden
    gone = ok(server, "memory_forget", {"user": "u1", "agent": "support", "memory_id": own["id"]})
    assert gone["id"] == own["id"]
    assert recalled(user="u1") == ["Prefers concise answers."]
    bad = fails(server, "memory_remember", {"user": "u1", "content": "x", "type": "mood"})
    assert "type" in bad and "preference" in bad


def test_an_export_runs_as_a_job_and_reads_back(server: MCPServer, ctx: Context) -> None:
    bank = ok(server, "create_memory_bank", {"name": "g", "type": "general"})
    for key in ("a", "b"):
        ok(server, "write_memory_bank_entry", {"memory_bank_id": "g", "key": key, "content": key})
    started = ok(
        server,
        "create_resource_export",
        {"resource_type": "memory_bank", "resource_id": "g", "filters": {"key": "b"}},
    )
    assert (started["status"], started["resource_id"], started["entries"]) == (
        "succeeded",
        bank["id"],
        1,
    )
    assert ok(server, "get_resource_export", {"export_id": started["id"]}) == started
    content = ok(server, "read_resource_export", {"export_id": started["id"]})
    document = json.loads(content["content"])
    assert content["bytes"] == len(content["content"].encode())
    assert document["bank"]["id"] == bank["id"]
    assert [e["key"] for e in document["entries"]] == ["b"]
    assert "not permitted" in fails(
        server,
        "create_resource_export",
        {"resource_type": "memory_bank", "resource_id": "g", "x": 1},
    )
    assert "resource_type" in fails(
        server, "create_resource_export", {"resource_type": "agent", "resource_id": "g"}
    )
    assert "not found" in fails(server, "get_resource_export", {"export_id": "nope"})


def test_the_assistant_proposes_and_accept_applies_exactly_the_proposal(
    server: MCPServer, ctx: Context
) -> None:
    bank = ok(server, "create_memory_bank", {"name": "support", "type": "conversation"})
    before = banks.get(ctx, bank["id"])
    described = "customer support, about 50 messages per day per customer"
    proposal = ok(
        server,
        "generate_memory_bank_config",
        {"description": described, "memory_bank_id": bank["id"]},
    )
    assert proposal["bank_type"] == "conversation" and proposal["rationale"]
    assert banks.get(ctx, bank["id"]) == before  # proposing changes nothing
    applied = ok(
        server, "accept_memory_bank_config", {"memory_bank_id": bank["id"], "proposal": proposal}
    )
    fields = ("compaction_prompt", "max_tokens", "max_turns", "retention_days")
    assert {f: applied[f] for f in fields} == {f: proposal[f] for f in fields}
    mismatch = fails(
        server,
        "generate_memory_bank_config",
        {"description": described, "memory_bank_id": bank["id"], "type": "general"},
    )
    assert "conversation bank, not general" in mismatch
    empty = fails(server, "generate_memory_bank_config", {"description": " "})
    assert "description is empty" in empty


def test_test_compaction_runs_on_a_bank_or_pasted_entries_and_changes_nothing(
    server: MCPServer, ctx: Context
) -> None:
    bank = ok(server, "create_memory_bank", {"name": "s", "type": "conversation"})
    for i in range(4):
        ok(
            server,
            "write_memory_bank_entry",
            {"memory_bank_id": "s", "key": "k", "speaker": "Dana", "content": f"Fact {i}: tanks."},
        )
    stored = entries.load(ctx, banks.get(ctx, bank["id"]), "k")
    prompt = "Keep every fact."
    run_on_bank = ok(
        server,
        "test_memory_bank_compaction",
        {"memory_bank_id": "s", "compaction_prompt": prompt, "max_turns": 2},
    )
    assert run_on_bank["bank"] == bank["id"] and run_on_bank["summary"]
    assert len(run_on_bank["original"]) == 4 and run_on_bank["evaluation"]
    assert entries.load(ctx, banks.get(ctx, bank["id"]), "k") == stored
    pasted = ok(
        server,
        "test_memory_bank_compaction",
        {
            "compaction_prompt": prompt,
            "source": {"kind": "pasted", "text": "Dana: my tank cracked\nAgent: a new one ships"},
        },
    )
    assert pasted["bank"] is None and [e["speaker"] for e in pasted["original"]] == [
        "Dana",
        "Agent",
    ]
    both = fails(
        server,
        "test_memory_bank_compaction",
        {
            "compaction_prompt": prompt,
            "memory_bank_id": "s",
            "source": {"kind": "pasted", "text": "a: b"},
        },
    )
    assert "exactly one of memory_bank_id or source" in both
