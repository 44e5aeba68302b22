"""Bank rules and the bank service: create, get, list, update, delete, reset source.

Rules (SPEC "Banks"): type and mode are fixed at creation; retention defaults depend on
type and, for REST clients, on the API version; `max_age_days` is retired; banks stored by
the legacy schema are migrated on read.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memory.config import Mode, get_mode, get_template
from memory.errors import BankNotFound, Conflict, InvalidInput
from memory.models import Bank, BankCreate, BankType, BankUpdate
from memory.types.api_version import CURRENT_API_VERSION, LEGACY_API_VERSION, ApiVersion
from memory.validation import check_bank_fields, check_text

if TYPE_CHECKING:
    from memory.context import Context

__all__ = ["CURRENT_API_VERSION", "LEGACY_API_VERSION", "ApiVersion"]  # re-exported for callers

LEGACY_DEFAULT_RETENTION = 30
"""The flat retention default of older API versions (and of the legacy schema)."""


def default_retention(bank_type: BankType, api_version: ApiVersion) -> int | None:
    """Return the retention used when a create request omits it."""
    if not api_version.current:
        return LEGACY_DEFAULT_RETENTION
    return 90 if bank_type == "conversation" else None


def check_max_age_days(value: int | None, api_version: ApiVersion) -> None:
    """Reject a non-zero `max_age_days` on current API versions; older ones may send it."""
    if value and api_version.current:
        raise InvalidInput(
            "max_age_days is retired: set retention_days to delete entries by age "
            "(max_age_days=0 is accepted and clears a stored value)"
        )


def migrate_legacy(raw: dict[str, Any]) -> dict[str, Any]:
    """Return a legacy bank record migrated to the current schema (max_age_days removed).

    - no retention set -> retention = max_age_days
    - on the old 30-day default with max_age_days > 30 -> raised to max_age_days
    - on the old 30-day default with no max_age_days -> indefinite
    - any other retention is left alone
    """
    record = dict(raw)
    if "max_age_days" not in record:
        return record
    max_age = record.pop("max_age_days") or None
    retention_set = "retention_days" in record and record["retention_days"] is not None
    retention = record.get("retention_days")
    if not retention_set:
        record["retention_days"] = max_age
    elif retention == LEGACY_DEFAULT_RETENTION:
        if max_age is None:
            record["retention_days"] = None
        elif max_age > LEGACY_DEFAULT_RETENTION:
            record["retention_days"] = max_age
    record.pop("schema_version", None)
    return record


def _nonzero(value: int | None) -> int | None:
    return value or None


def resolve_create(
    request: BankCreate, *, account: str, now: datetime, api_version: ApiVersion
) -> Bank:
    """Return the bank a create request describes: template, then explicit fields, then defaults."""
    sent = request.model_fields_set
    check_max_age_days(request.max_age_days, api_version)
    template = get_template(request.template) if request.template else None
    bank_type = request.type or (template.type if template else None)
    if bank_type is None:
        raise InvalidInput("bank type is required: --type conversation|general (or a template)")
    if template and request.type and request.type != template.type:
        raise InvalidInput(
            f"template {template.name!r} is for {template.type} banks, not {request.type}"
        )
    mode = get_mode(request.mode or (template.mode if template else "balanced")).name

    def pick(field: str) -> Any:
        if field in sent:
            return getattr(request, field)
        return getattr(template, field) if template else None

    if "retention_days" in sent:
        retention = request.retention_days
    elif template is not None:
        retention = template.retention_days
    else:
        retention = default_retention(bank_type, api_version)
    max_tokens, max_turns = pick("max_tokens"), pick("max_turns")
    description = pick("description") if "description" in sent else ""
    check_bank_fields(
        name=request.name,
        description=description,
        compaction_prompt=pick("compaction_prompt"),
        max_tokens=max_tokens,
        max_turns=max_turns,
        retention_days=retention,
    )
    return Bank(
        id=uuid.uuid4().hex,
        account=account,
        name=request.name.strip(),
        description=description or "",
        type=bank_type,
        mode=mode,
        compaction_prompt=pick("compaction_prompt") or None,
        max_tokens=_nonzero(max_tokens),
        max_turns=_nonzero(max_turns),
        retention_days=retention,
        created_at=now,
        updated_at=now,
    )


def apply_update(
    bank: Bank, request: BankUpdate, *, now: datetime, api_version: ApiVersion
) -> Bank:
    """Return `bank` with the sent fields applied; Conflict if type or mode would change."""
    sent = request.model_fields_set
    for field in ("type", "mode"):
        if field in sent and getattr(request, field) != getattr(bank, field):
            raise Conflict(
                f"a bank's {field} cannot change after creation (it is "
                f"{getattr(bank, field)!r}): create a new bank instead"
            )
    check_max_age_days(request.max_age_days, api_version)
    changes: dict[str, Any] = {}
    for field in ("name", "description", "compaction_prompt", "retention_days"):
        if field in sent:
            changes[field] = getattr(request, field)
    for field in ("max_tokens", "max_turns"):
        if field in sent:
            changes[field] = getattr(request, field)
    check_bank_fields(**changes)
    if "name" in changes:
        changes["name"] = changes["name"].strip()
    if "description" in changes:
        changes["description"] = changes["description"] or ""
    if "compaction_prompt" in changes:
        changes["compaction_prompt"] = changes["compaction_prompt"] or None
    for field in ("max_tokens", "max_turns"):
        if field in changes:
            changes[field] = _nonzero(changes[field])
    return bank.model_copy(update={**changes, "updated_at": now})


# service ------------------------------------------------------------------------------


def _load(ctx: Context, raw: dict[str, Any]) -> Bank:
    """Return the bank a registry row holds: the registry reader, the one place a legacy
    record is migrated (and the migrated record stored, so the next read finds it done)."""
    migrated = migrate_legacy(raw)
    bank = Bank.model_validate(migrated)
    if migrated != raw:
        ctx.store.put_bank(bank)
    return bank


def create(
    ctx: Context, request: BankCreate, *, api_version: ApiVersion = CURRENT_API_VERSION
) -> Bank:
    """Create a bank and provision its storage; Conflict if the name is taken."""
    bank = resolve_create(
        request, account=ctx.account, now=ctx.clock.now(), api_version=api_version
    )
    claim_name(ctx, bank)
    ctx.store.create_entries_table(bank.id, get_mode(bank.mode).dims)
    return bank


def claim_name(ctx: Context, bank: Bank) -> None:
    """Store `bank` under its name; Conflict when another bank of the account has that name
    (or that id). The check and the write hold the account's name lock together."""
    store = ctx.store
    with store.names_lock(ctx.account):
        taken = [
            *store.find_bank_rows(ctx.account, name=bank.name),
            *store.find_bank_rows(ctx.account, bank_id=bank.name),
        ]
        for raw in taken:
            if raw["id"] != bank.id:
                raise Conflict(f"a bank named {bank.name!r} already exists: pick another name")
        ctx.store.put_bank(bank)


def get(ctx: Context, ref: str) -> Bank:
    """Return the bank with id or name `ref` in this account; NotFound otherwise."""
    check_text("bank id or name", ref)
    rows = ctx.store.find_bank_rows(ctx.account, bank_id=ref)
    if not rows:
        rows = ctx.store.find_bank_rows(ctx.account, name=ref)
    if not rows:
        raise BankNotFound(
            f"no bank {ref!r} in account {ctx.account!r} at {ctx.store.location}: "
            "see `membank bank list`",
            ref,
        )
    return _load(ctx, rows[0])


def mode_of(bank: Bank) -> Mode:
    """Return the bank's mode (`config.get_mode`: InvalidInput says how to bring it back)."""
    return get_mode(bank.mode, bank=bank.name)


def vector_dims(ctx: Context, bank: Bank) -> int:
    """Return the width of the bank's vectors: the store's, from its entries table, or the
    mode's for a bank with no table yet (an export's schema needs one even when empty).

    Raises:
        InvalidInput: the bank has no entries table and its mode is not defined here.
    """
    dims = ctx.store.vector_dims(bank.id)
    return mode_of(bank).dims if dims is None else dims


def list_banks(ctx: Context, bank_type: BankType | None = None) -> list[Bank]:
    """Return this account's banks (optionally of one type), oldest first."""
    rows = ctx.store.find_bank_rows(ctx.account, bank_type=bank_type or None)
    banks = [_load(ctx, raw) for raw in rows]
    return sorted(banks, key=lambda b: (b.created_at, b.name))


def every_bank(ctx: Context) -> list[Bank]:
    """Return every bank of every account, oldest first (sweeps; legacy records migrated by
    the same reader as `get`)."""
    found = [_load(ctx, raw) for raw in ctx.store.all_bank_rows()]
    return sorted(found, key=lambda b: (b.created_at, b.id))


def update(
    ctx: Context, ref: str, request: BankUpdate, *, api_version: ApiVersion = CURRENT_API_VERSION
) -> Bank:
    """Apply an update to a bank and store it; nothing changes if any rule rejects it."""
    from memory.agents.storage import check_no_thresholds  # the layers own their banks' rules

    bank = get(ctx, ref)
    check_no_thresholds(bank, request)
    updated = apply_update(bank, request, now=ctx.clock.now(), api_version=api_version)
    if updated.model_copy(update={"updated_at": bank.updated_at}) == bank:
        return bank  # nothing changed: the record and its updated_at stay as they are
    if updated.name == bank.name:
        ctx.store.put_bank(updated)
    else:
        claim_name(ctx, updated)
    return updated


def save(ctx: Context, bank: Bank) -> None:
    """Store a bank record as is (compaction stats)."""
    ctx.store.put_bank(bank)


def update_counters(
    ctx: Context,
    bank_id: str,
    *,
    summary_count: int | None = None,
    last_compaction_at: datetime | None = None,
) -> Bank:
    """Store the bank's counters (the one read-modify-write of them): re-read the record, so
    a concurrent update of its other fields is kept; None leaves a counter as it is."""
    fresh = get(ctx, bank_id)
    changes: dict[str, object] = {}
    if summary_count is not None:
        changes["summary_count"] = summary_count
    if last_compaction_at is not None:
        changes["last_compaction_at"] = last_compaction_at
    if not changes:
        return fresh
    updated = fresh.model_copy(update=changes)
    ctx.store.put_bank(updated)
    return updated


def delete(ctx: Context, ref: str) -> Bank:
    """Delete a bank, its entries and their files; returns the deleted bank."""
    bank = get(ctx, ref)
    ctx.store.drop_entries_table(bank.id)
    ctx.store.delete_lab_runs(ctx.account, bank.id)  # test runs hold copies of its entries
    ctx.store.delete_bank_record(ctx.account, bank.id)
    return bank


def reset_source(ctx: Context, ref: str) -> Bank:
    """Remove every entry and the bank's storage; the next write provisions it again."""
    bank = get(ctx, ref)
    ctx.store.drop_entries_table(bank.id)
    ctx.store.delete_lab_runs(ctx.account, bank.id)  # test runs hold copies of its entries
    reset = bank.model_copy(
        update={"summary_count": 0, "last_compaction_at": None, "updated_at": ctx.clock.now()}
    )
    ctx.store.put_bank(reset)
    return reset
