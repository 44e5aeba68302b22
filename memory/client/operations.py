"""Every REST operation as a builder: its arguments, checked by the server's request model,
become a `Call` (or a `PageCall` for a list). The sync and async clients make methods of
these (`memory.client.calls`); the request and result models are the server's own.

Names follow the REST paths: `banks_*` for `/memory_banks`, `entries_*` for a bank's
entries, `users_*` for `/users/{user_id}`, `exports_*`, `jobs_*`, `keys_*`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote

from memory.accounts.keys import ApiKey, CreatedKey
from memory.agents.memories import Memory, RecalledMemory
from memory.agents.wipe import WipeReceipt
from memory.api.models.assistant import AcceptRequest, ConfigForBank, ConfigRequest
from memory.api.models.entries import ForgetReceipt, SearchResults
from memory.api.models.layers import EndConversation, Recalled, RecallRequest, RememberRequest
from memory.api.schemas import (
    EXPORTS_PATH,
    AgentRef,
    CompactRequest,
    Deleted,
    DraftTestRequest,
    EntryWrite,
    Job,
    PastedInput,
    ResourceExport,
    ResourceExportCreate,
    SourceReset,
    SyntheticInput,
    TemplateOut,
    TestCompactionRequest,
)
from memory.assistant.records import Proposal
from memory.client.calls import Call, PageCall, given, model
from memory.models import Bank, BankCreate, BankType, BankUpdate, Entry, SearchHit, SearchQuery
from memory.stats import Stats
from memory.transfer.export.records import ExportEstimate, ExportFilters, ExportFormat

BANKS = "/memory_banks"
IF_MATCH = "If-Match"
PAGE_SIZE = 100
"""Items asked for per page by the list iterators (the server allows 1-1000)."""


def seg(value: str) -> str:
    """Return one path segment, escaped (an id or name with `/` or spaces stays one)."""
    return quote(str(value), safe="")


def _bank(bank_id: str, tail: str = "") -> str:
    return f"{BANKS}/{seg(bank_id)}{tail}"


# --- banks ---------------------------------------------------------------------------------


def banks_list(type: BankType | None = None, *, page_size: int = PAGE_SIZE) -> PageCall[Bank]:  # noqa: A002
    """Every bank of the account, oldest first (`type`: only conversation or general banks)."""
    return PageCall(BANKS, Bank.model_validate, given(type=type), page_size)


def banks_templates(*, page_size: int = PAGE_SIZE) -> PageCall[TemplateOut]:
    """Every template (pre-built settings a create may name)."""
    return PageCall(f"{BANKS}/templates", TemplateOut.model_validate, {}, page_size)


def banks_create(name: str, **fields: Any) -> Call[Bank]:
    """Create a bank: `name` and any `BankCreate` field (`type`, `mode`, `template`,
    `description`, `compaction_prompt`, `max_tokens`, `max_turns`, `retention_days`: an
    explicit None is indefinite, not sending it takes the type's default)."""
    body = model(BankCreate, name=name, **fields)
    return Call("POST", BANKS, Bank.model_validate, body=body, write=True)


def banks_get(bank_id: str) -> Call[Bank]:
    """One bank, by id or name."""
    return Call("GET", _bank(bank_id), Bank.model_validate)


def _if_match(etag: str | None) -> dict[str, str]:
    return {} if etag is None else {IF_MATCH: etag}


def banks_update(bank_id: str, *, if_match: str | None = None, **fields: Any) -> Call[Bank]:
    """Apply the given `BankUpdate` fields (a `type` or `mode` change is a Conflict;
    `if_match`: the bank's ETag, so a bank changed since is a Conflict and stays as it is,
    where the server honours `If-Match`)."""
    body = model(BankUpdate, **fields)
    return Call(
        "PUT",
        _bank(bank_id),
        Bank.model_validate,
        body=body,
        write=True,
        headers=_if_match(if_match),
    )


def banks_delete(bank_id: str, *, if_match: str | None = None) -> Call[Deleted]:
    """Delete the bank, its entries and their files (`if_match`: only if unchanged)."""
    return Call(
        "DELETE", _bank(bank_id), Deleted.model_validate, write=True, headers=_if_match(if_match)
    )


def banks_delete_source(bank_id: str, *, if_match: str | None = None) -> Call[SourceReset]:
    """Remove every entry of the bank and reset its storage; the configuration stays."""
    path = _bank(bank_id, "/source")
    parse = SourceReset.model_validate
    return Call("DELETE", path, parse, write=True, headers=_if_match(if_match))


def banks_agents(bank_id: str, *, page_size: int = PAGE_SIZE) -> PageCall[AgentRef]:
    """The agents whose configuration uses the bank."""
    return PageCall(_bank(bank_id, "/agents"), AgentRef.model_validate, {}, page_size)


def banks_stats(
    bank_id: str,
    *,
    days: int | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    top: int | None = None,
) -> Call[Stats]:
    """Aggregates over the last `days` (default 30) or `since`/`until`; `top` rows a breakdown."""
    params = given(days=days, since=since, until=until, top=top)
    return Call("GET", _bank(bank_id, "/stats"), Stats.model_validate, params)


def banks_compact(bank_id: str, *, key: str | None = None, wait: float | None = None) -> Call[Job]:
    """Start compacting every partition over a threshold (or one `key`); returns the job
    (`client.jobs.wait` it; `wait`: the server waits up to that many seconds, at most 30)."""
    body = model(CompactRequest, **given(key=key))
    path = _bank(bank_id, "/compact")
    return Call("POST", path, Job.model_validate, given(wait=wait), body, write=True)


def banks_test_compaction(
    bank_id: str,
    compaction_prompt: str,
    *,
    key: str | None = None,
    max_tokens: int | None = None,
    max_turns: int | None = None,
    wait: float | None = None,
) -> Call[Job]:
    """Start a test of a compaction prompt on the bank's entries (one `key`, or its largest
    partition); the bank never changes. The job's result is the run and its evaluation."""
    fields = given(key=key, max_tokens=max_tokens, max_turns=max_turns)
    body = model(TestCompactionRequest, compaction_prompt=compaction_prompt, **fields)
    path = _bank(bank_id, "/test-compaction")
    return Call("POST", path, Job.model_validate, given(wait=wait), body, write=True)


def banks_test_compaction_draft(
    compaction_prompt: str,
    source: PastedInput | SyntheticInput | dict[str, Any],
    *,
    max_tokens: int | None = None,
    max_turns: int | None = None,
    wait: float | None = None,
) -> Call[Job]:
    """Start a test of a compaction prompt with no bank: `source` is pasted entries
    (`{"kind": "pasted", "text": ...}`) or synthetic ones (`{"kind": "synthetic",
    "description": ...}`)."""
    fields = given(max_tokens=max_tokens, max_turns=max_turns)
    body = model(DraftTestRequest, compaction_prompt=compaction_prompt, source=source, **fields)
    path = f"{BANKS}/test-compaction"
    return Call("POST", path, Job.model_validate, given(wait=wait), body, write=True)


# --- the config assistant -----------------------------------------------------------------


def assistant_propose(description: str, *, type: BankType | None = None) -> Call[Proposal]:  # noqa: A002
    """Propose a configuration for what a bank will hold (nothing is stored)."""
    body = model(ConfigRequest, description=description, **given(type=type))
    return Call("POST", f"{BANKS}/generate_memory_bank_config", Proposal.model_validate, body=body)


def assistant_propose_for_bank(bank_id: str, description: str) -> Call[Proposal]:
    """Propose a configuration for an existing bank (of its type); the bank does not change."""
    body = model(ConfigForBank, description=description)
    path = _bank(bank_id, "/generate_memory_bank_config")
    return Call("POST", path, Proposal.model_validate, body=body)


def assistant_accept(bank_id: str, proposal: Proposal) -> Call[Bank]:
    """Apply exactly the proposal to the bank (a proposal of another bank type: InvalidInput)."""
    body = model(AcceptRequest, proposal=proposal)
    path = _bank(bank_id, "/generate_memory_bank_config/accept")
    return Call("POST", path, Bank.model_validate, body=body, write=True)


# --- entries and search -------------------------------------------------------------------


def entries_write(
    bank_id: str,
    *,
    key: str,
    content: str,
    speaker: str | None = None,
    role: str | None = None,
    memory_type: str | None = None,
    tags: list[str] | None = None,
    metadata: dict[str, Any] | None = None,
) -> Call[Entry]:
    """Write one entry (a conversation bank needs `speaker`; a general bank has none)."""
    fields = given(
        speaker=speaker, role=role, memory_type=memory_type, tags=tags, metadata=metadata
    )
    body = model(EntryWrite, key=key, content=content, **fields)
    return Call("POST", _bank(bank_id, "/entries"), Entry.model_validate, body=body, write=True)


def entries_load(bank_id: str, key: str, *, page_size: int = PAGE_SIZE) -> PageCall[Entry]:
    """Every entry of `key` (a thread), oldest first."""
    return PageCall(_bank(bank_id, "/entries"), Entry.model_validate, {"key": key}, page_size)


def entries_tagged(
    bank_id: str, tag: str | None = None, *, page_size: int = PAGE_SIZE
) -> PageCall[Entry]:
    """Every entry carrying `tag` (None: every entry of the bank), oldest first."""
    path = _bank(bank_id, "/tagged_entries")
    return PageCall(path, Entry.model_validate, given(tag=tag), page_size)


def entries_get(bank_id: str, entry_id: str) -> Call[Entry]:
    """One entry by id."""
    return Call("GET", _bank(bank_id, f"/entries/{seg(entry_id)}"), Entry.model_validate)


def entries_forget(bank_id: str, entry_id: str) -> Call[ForgetReceipt]:
    """Delete an entry for good: text, vectors, attachments and the old versions holding them."""
    path = _bank(bank_id, f"/entries/{seg(entry_id)}")
    return Call("DELETE", path, ForgetReceipt.model_validate, write=True)


def search(
    bank_id: str,
    text: str,
    *,
    k: int | None = None,
    key: str | None = None,
    tags: list[str] | None = None,
    speaker: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    method: str | None = None,
    min_score: float | None = None,
) -> Call[list[SearchHit]]:
    """Search a bank (hybrid by default); hits best first, each with `.score` and `.entry`."""
    fields = given(
        k=k,
        key=key,
        tags=tags,
        speaker=speaker,
        since=since,
        until=until,
        method=method,
        min_score=min_score,
    )
    body = model(SearchQuery, text=text, **fields)
    return Call("POST", _bank(bank_id, "/search"), _hits, body=body)


def _hits(answer: Any) -> list[SearchHit]:
    return SearchResults.model_validate(answer).data


# --- exports ------------------------------------------------------------------------------


def _export(bank_id: str, format: ExportFormat, filters: Any) -> ResourceExportCreate:  # noqa: A002
    flt = ExportFilters() if filters is None else filters
    return model(
        ResourceExportCreate,
        resource_type="memory_bank",
        resource_id=bank_id,
        format=format,
        filters=flt,
    )


def exports_create(
    bank_id: str,
    *,
    format: ExportFormat = "json",  # noqa: A002
    filters: ExportFilters | dict[str, Any] | None = None,
    wait: float | None = None,
) -> Call[ResourceExport]:
    """Start an export of a bank (JSON: configuration + entries, or Parquet), optionally
    filtered (key, speaker, tags, since, until); `client.exports.wait` then `download`."""
    body = _export(bank_id, format, filters)
    parse = ResourceExport.model_validate
    return Call("POST", EXPORTS_PATH, parse, given(wait=wait), body, write=True)


def exports_estimate(
    bank_id: str,
    *,
    format: ExportFormat = "json",  # noqa: A002
    filters: ExportFilters | dict[str, Any] | None = None,
) -> Call[ExportEstimate]:
    """How many entries an export would hold and about how large its file would be."""
    body = _export(bank_id, format, filters)
    return Call("POST", f"{EXPORTS_PATH}/estimate", ExportEstimate.model_validate, body=body)


def exports_get(export_id: str) -> Call[ResourceExport]:
    """An export's status (`download_url` once it succeeded)."""
    return Call("GET", f"{EXPORTS_PATH}/{seg(export_id)}", ResourceExport.model_validate)


def export_download_path(export_id: str) -> str:
    """Return where an export's file is fetched."""
    return f"{EXPORTS_PATH}/{seg(export_id)}/download"


# --- jobs ---------------------------------------------------------------------------------


def jobs_get(job_id: str) -> Call[Job]:
    """A job: `queued`, `running`, then `succeeded` (with its result) or `failed`."""
    return Call("GET", f"/jobs/{seg(job_id)}", Job.model_validate)


# --- the memory layers of a user ----------------------------------------------------------


def _user(user_id: str, tail: str = "") -> str:
    return f"/users/{seg(user_id)}{tail}"


def users_remember(
    user_id: str,
    content: str,
    *,
    type: str | None = None,  # noqa: A002
    tags: list[str] | None = None,
    scope: str | None = None,
    agent: str | None = None,
) -> Call[Memory]:
    """Remember a long-term memory of the user (`type` fact, preference, relationship or
    instruction; `scope` user or agent)."""
    fields = given(type=type, tags=tags, scope=scope, agent=agent)
    body = model(RememberRequest, content=content, **fields)
    return Call("POST", _user(user_id, "/memories"), Memory.model_validate, body=body, write=True)


def users_recall(
    user_id: str, query: str, *, k: int | None = None, agent: str | None = None
) -> Call[list[RecalledMemory]]:
    """The user's memories the agent may see, closest to `query` first."""
    body = model(RecallRequest, query=query, **given(k=k, agent=agent))
    return Call("POST", _user(user_id, "/memories/recall"), _recalled, body=body)


def _recalled(answer: Any) -> list[RecalledMemory]:
    return Recalled.model_validate(answer).data


def users_memories(
    user_id: str, *, agent: str | None = None, page_size: int = PAGE_SIZE
) -> PageCall[Memory]:
    """Every memory of the user the agent may see, oldest first."""
    path = _user(user_id, "/memories")
    return PageCall(path, Memory.model_validate, given(agent=agent), page_size)


def users_forget(user_id: str, memory_id: str, *, agent: str | None = None) -> Call[Memory]:
    """Forget one memory for good; returns what was forgotten."""
    path = _user(user_id, f"/memories/{seg(memory_id)}")
    return Call("DELETE", path, Memory.model_validate, given(agent=agent), write=True)


def users_end_conversation(user_id: str, *, agent: str, conversation: str) -> Call[Job]:
    """End a conversation: its turns merge into the user x agent summary (a job)."""
    body = model(EndConversation, agent=agent, conversation=conversation)
    path = _user(user_id, "/conversations/end")
    return Call("POST", path, Job.model_validate, body=body, write=True)


def users_wipe(user_id: str) -> Call[WipeReceipt]:
    """Delete every trace of the user in every layer, for good; returns the receipt."""
    return Call("DELETE", _user(user_id), WipeReceipt.model_validate, write=True)


# --- API keys (an admin key of the account) -----------------------------------------------


def keys_create(**fields: Any) -> Call[CreatedKey]:
    """Create a key of the account (`fields`: what the server takes, e.g. `scopes`, `banks`);
    the answer holds the key itself, the only time it is shown."""
    return Call("POST", "/keys", CreatedKey.model_validate, body=fields, write=True)


def keys_list(*, page_size: int = PAGE_SIZE) -> PageCall[ApiKey]:
    """The account's keys (never the keys themselves)."""
    return PageCall("/keys", ApiKey.model_validate, {}, page_size)


def keys_revoke(key_id: str) -> Call[ApiKey]:
    """Revoke a key (requests with it are refused from then on)."""
    return Call("DELETE", f"/keys/{seg(key_id)}", ApiKey.model_validate, write=True)
