"""Bank rules on a real LanceDB: CRUD, immutability, retention defaults, max_age_days, migration."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memory import banks, entries
from memory.clock import FixedClock
from memory.config import modes, templates
from memory.context import Context
from memory.errors import Conflict, InvalidInput, NotFound
from memory.models import Bank, BankCreate, BankUpdate, EntryIn
from memory.store import filters
from memory.store.lance import LanceStore
from memory.types.api_version import ApiVersion

LEGACY_DIR = Path(__file__).parent / "fixtures" / "legacy_banks"
LEGACY_FIXTURES = sorted(LEGACY_DIR.glob("*.json"))
OLD_VERSIONS = [ApiVersion.parse(v) for v in (None, "2024-01-01", "2026-08-02")]
NEW_VERSIONS = [ApiVersion.parse(v) for v in ("2026-08-03", "2027-05-01")]


def _create(ctx: Context, name: str = "b", **fields: Any) -> Bank:
    fields.setdefault("type", "general")
    return banks.create(ctx, BankCreate(name=name, **fields))


def _stored(ctx: Context, bank_id: str) -> dict[str, Any]:
    """Return the bank's raw registry body, read back from storage."""
    (row,) = ctx.store.bank_rows(ctx.account, filters.equals("id", bank_id))
    return row


def _other_account(ctx: Context, account: str = "globex") -> Context:
    return Context(store=ctx.store, account=account, clock=ctx.clock, embedder=ctx.embedder)


def _table_dir(tmp_path: Path, bank_id: str) -> Path:
    return tmp_path / "db" / f"entries_{bank_id}.lance"


# create / get / list / update / delete -----------------------------------------------


def test_create_then_get_by_id_and_by_name(ctx: Context) -> None:
    bank = _create(ctx, "support", type="conversation", description="help desk")
    assert bank.account == "acme"
    assert bank.mode == "balanced"
    assert bank.created_at == bank.updated_at == ctx.clock.now()
    assert banks.get(ctx, bank.id) == bank
    assert banks.get(ctx, "support") == bank
    # a fresh store on the same folder sees the same record (it is persisted)
    reopened = Context(store=LanceStore(ctx.store.uri), account="acme")
    assert banks.get(reopened, bank.id) == bank


def test_create_provisions_storage_with_the_mode_dims(ctx: Context, tmp_path: Path) -> None:
    bank = _create(ctx, mode="fast")
    assert ctx.store.has_entries_table(bank.id)
    assert _table_dir(tmp_path, bank.id).is_dir()
    assert ctx.store.scan(bank.id).num_rows == 0


def test_get_unknown_bank_is_not_found(ctx: Context) -> None:
    with pytest.raises(NotFound, match="nope"):
        banks.get(ctx, "nope")


def test_list_filters_by_type_oldest_first(ctx: Context, clock: FixedClock) -> None:
    first = _create(ctx, "c1", type="conversation")
    clock.advance(timedelta(minutes=1))
    second = _create(ctx, "g1", type="general")
    clock.advance(timedelta(minutes=1))
    third = _create(ctx, "c2", type="conversation")
    assert [b.id for b in banks.list_banks(ctx)] == [first.id, second.id, third.id]
    assert [b.id for b in banks.list_banks(ctx, "conversation")] == [first.id, third.id]
    assert [b.id for b in banks.list_banks(ctx, "general")] == [second.id]


def test_update_applies_sent_fields_only(ctx: Context, clock: FixedClock) -> None:
    bank = _create(ctx, "b", type="conversation", max_tokens=500, description="d")
    clock.advance(timedelta(hours=1))
    updated = banks.update(ctx, "b", BankUpdate(name="b2", max_turns=12, retention_days=7))
    assert (updated.name, updated.max_turns, updated.retention_days) == ("b2", 12, 7)
    assert updated.max_tokens == 500 and updated.description == "d"
    assert updated.created_at == bank.created_at
    assert updated.updated_at == bank.updated_at + timedelta(hours=1)
    assert banks.get(ctx, bank.id) == updated
    with pytest.raises(NotFound):
        banks.get(ctx, "b")


def test_update_that_changes_nothing_keeps_updated_at(ctx: Context, clock: FixedClock) -> None:
    bank = _create(ctx, "b", type="conversation", max_tokens=500, description="d")
    clock.advance(timedelta(hours=1))
    same = banks.update(ctx, "b", BankUpdate(max_tokens=500, description="d"))
    assert same == bank and banks.get(ctx, "b").updated_at == bank.updated_at
    assert banks.update(ctx, "b", BankUpdate()) == bank


def test_update_to_a_taken_name_is_conflict(ctx: Context) -> None:
    _create(ctx, "one")
    two = _create(ctx, "two")
    with pytest.raises(Conflict, match="one"):
        banks.update(ctx, "two", BankUpdate(name="one"))
    assert banks.get(ctx, two.id) == two


def test_duplicate_name_is_conflict(ctx: Context) -> None:
    _create(ctx, "dup")
    with pytest.raises(Conflict, match="dup"):
        _create(ctx, "dup", type="conversation")
    assert len(banks.list_banks(ctx)) == 1


@pytest.mark.parametrize("name", ["", "   ", "x" * 201])
def test_bad_name_is_invalid(ctx: Context, name: str) -> None:
    with pytest.raises(InvalidInput, match="name"):
        _create(ctx, name)
    assert banks.list_banks(ctx) == []


@pytest.mark.parametrize("name", ["a\nb", "tab\there", "0123456789abcdef0123456789abcdef"])
def test_names_with_control_characters_or_shaped_like_ids_are_invalid(
    ctx: Context, name: str
) -> None:
    with pytest.raises(InvalidInput, match="name"):
        _create(ctx, name)
    bank = _create(ctx, "fine")
    with pytest.raises(InvalidInput, match="name"):
        banks.update(ctx, bank.id, BankUpdate(name=name))
    assert [b.name for b in banks.list_banks(ctx)] == ["fine"]


def test_racing_creates_of_one_name_make_one_bank(ctx: Context) -> None:
    start = threading.Barrier(4)
    outcomes: list[str] = []

    def create() -> None:
        start.wait()
        try:
            _create(ctx, "race")
            outcomes.append("created")
        except Conflict:
            outcomes.append("conflict")

    threads = [threading.Thread(target=create) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict", "conflict", "conflict", "created"]
    assert [b.name for b in banks.list_banks(ctx)] == ["race"]


@pytest.mark.parametrize("field", ["name", "description", "compaction_prompt"])
@pytest.mark.parametrize("bad", ["bad \ud800 text", "nul \x00 text"], ids=["surrogate", "nul"])
def test_bank_text_must_be_utf8_without_nul(ctx: Context, field: str, bad: str) -> None:
    fields: dict[str, Any] = {"name": "b", field: bad}
    with pytest.raises(InvalidInput, match=field):
        banks.create(ctx, BankCreate(type="general", **fields))
    assert banks.list_banks(ctx) == []
    bank = _create(ctx, "ok", description="fine")
    with pytest.raises(InvalidInput, match=field):
        banks.update(ctx, bank.id, BankUpdate(**{field: bad}))
    assert banks.get(ctx, bank.id) == bank


@pytest.mark.parametrize("ref", ["a\x00b", "a\udc80b"])
def test_get_with_unstorable_ref_is_invalid(ctx: Context, ref: str) -> None:
    with pytest.raises(InvalidInput, match="bank"):
        banks.get(ctx, ref)


def test_type_is_required(ctx: Context) -> None:
    with pytest.raises(InvalidInput, match="type"):
        banks.create(ctx, BankCreate(name="b"))


def test_delete_removes_record_and_table_files(ctx: Context, tmp_path: Path) -> None:
    bank = _create(ctx, "gone", type="conversation")
    keep = _create(ctx, "keep")
    entries.write(ctx, bank, [EntryIn(key="k", speaker="ann", content="hello there")])
    assert _table_dir(tmp_path, bank.id).is_dir()
    deleted = banks.delete(ctx, "gone")
    assert deleted.id == bank.id
    assert not _table_dir(tmp_path, bank.id).exists()
    assert not ctx.store.has_entries_table(bank.id)
    with pytest.raises(NotFound):
        banks.get(ctx, bank.id)
    assert [b.id for b in banks.list_banks(ctx)] == [keep.id]
    assert _table_dir(tmp_path, keep.id).is_dir()
    with pytest.raises(NotFound):
        banks.delete(ctx, "gone")


def test_reset_source_removes_entries_keeps_config_and_reprovisions(
    ctx: Context, tmp_path: Path
) -> None:
    bank = _create(ctx, "src", type="conversation", max_turns=50, retention_days=7)
    entries.write(
        ctx, bank, [EntryIn(key="k", speaker="ann", content=f"message {i}") for i in range(3)]
    )
    reset = banks.reset_source(ctx, "src")
    assert not ctx.store.has_entries_table(bank.id)
    assert not _table_dir(tmp_path, bank.id).exists()
    assert entries.load(ctx, bank, "k") == []
    stored = banks.get(ctx, bank.id)
    assert stored == reset
    assert (stored.name, stored.type, stored.max_turns, stored.retention_days) == (
        "src",
        "conversation",
        50,
        7,
    )
    (entry,) = entries.write(ctx, stored, [EntryIn(key="k", speaker="bob", content="again")])
    assert ctx.store.has_entries_table(bank.id)
    assert [e.id for e in entries.load(ctx, stored, "k")] == [entry.id]


# type and mode are fixed --------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"type": "general"},
        {"mode": "fast"},
        {"mode": "no-such-mode"},
        {"type": "general", "name": "renamed", "max_turns": 3},
        {"mode": "accurate", "retention_days": 7, "description": "new"},
    ],
)
def test_type_and_mode_are_immutable(ctx: Context, change: dict[str, Any]) -> None:
    bank = _create(ctx, "fixed", type="conversation", mode="balanced", description="old")
    field = "type" if "type" in change else "mode"
    with pytest.raises(Conflict, match=field):
        banks.update(ctx, bank.id, BankUpdate(**change))
    assert banks.get(ctx, bank.id) == bank
    assert _stored(ctx, bank.id) == json.loads(bank.model_dump_json())


def test_update_resending_same_type_and_mode_is_fine(ctx: Context) -> None:
    bank = _create(ctx, "same", type="conversation", mode="fast")
    updated = banks.update(ctx, bank.id, BankUpdate(type="conversation", mode="fast", max_turns=4))
    assert (updated.type, updated.mode, updated.max_turns) == ("conversation", "fast", 4)


# modes and templates ------------------------------------------------------------------


def test_modes_exist_with_sane_chunking() -> None:
    found = modes()
    assert {"fast", "balanced", "accurate"} <= set(found)
    for mode in found.values():
        assert mode.dims > 0 and 0 <= mode.chunk_overlap < mode.chunk_size


def test_unknown_mode_lists_valid_names(ctx: Context) -> None:
    with pytest.raises(InvalidInput) as raised:
        _create(ctx, mode="turbo")
    assert "turbo" in str(raised.value)
    for name in modes():
        assert name in str(raised.value)
    assert banks.list_banks(ctx) == []


def test_unknown_template_lists_valid_names(ctx: Context) -> None:
    with pytest.raises(InvalidInput) as raised:
        banks.create(ctx, BankCreate(name="b", template="nope"))
    for name in templates():
        assert name in str(raised.value)
    assert banks.list_banks(ctx) == []


def test_at_least_six_templates() -> None:
    found = templates()
    assert len(found) >= 6
    assert {t.type for t in found.values()} == {"conversation", "general"}


def test_template_prompts_are_one_paragraph() -> None:
    # a YAML literal block kept the file's line breaks mid-sentence in every prompt
    prompts = [t.compaction_prompt for t in templates().values() if t.compaction_prompt]
    assert prompts and all("\n" not in p and p.endswith(".") for p in prompts)


@pytest.mark.parametrize("name", sorted(templates()))
def test_template_prefills_settings(ctx: Context, name: str) -> None:
    template = templates()[name]
    bank = banks.create(ctx, BankCreate(name="t", template=name))
    assert bank.type == template.type
    assert bank.mode == template.mode
    assert bank.compaction_prompt == (template.compaction_prompt or None)
    assert bank.max_tokens == (template.max_tokens or None)
    assert bank.max_turns == (template.max_turns or None)
    assert bank.retention_days == template.retention_days
    assert banks.get(ctx, bank.id) == bank


def test_explicit_fields_override_the_template(ctx: Context) -> None:
    bank = banks.create(
        ctx,
        BankCreate(
            name="t",
            template="customer-support",
            mode="fast",
            compaction_prompt="Keep only refunds.",
            max_tokens=0,
            max_turns=9,
            retention_days=None,
        ),
    )
    assert (bank.type, bank.mode, bank.compaction_prompt) == (
        "conversation",
        "fast",
        "Keep only refunds.",
    )
    assert (bank.max_tokens, bank.max_turns, bank.retention_days) == (None, 9, None)


def test_template_of_other_type_is_invalid(ctx: Context) -> None:
    with pytest.raises(InvalidInput, match="customer-support"):
        banks.create(ctx, BankCreate(name="t", template="customer-support", type="general"))
    assert banks.list_banks(ctx) == []


# thresholds ----------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["max_tokens", "max_turns"])
def test_negative_threshold_is_invalid(ctx: Context, field: str) -> None:
    negative: dict[str, Any] = {field: -1}
    with pytest.raises(InvalidInput, match=field):
        _create(ctx, "b", **negative)
    assert banks.list_banks(ctx) == []
    bank = _create(ctx, max_tokens=100, max_turns=10)
    with pytest.raises(InvalidInput, match=field):
        banks.update(ctx, bank.id, BankUpdate(**{field: -5}))
    assert banks.get(ctx, bank.id) == bank


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("max_tokens", 2**31, "max_tokens must be 0-2147483647"),
        ("max_turns", 10**23, "max_turns must be 0-2147483647"),
        ("retention_days", 3_650_001, "retention_days must be 1-3650000 days"),
    ],
)
def test_huge_thresholds_and_retention_are_invalid(
    ctx: Context, field: str, value: int, message: str
) -> None:
    huge: dict[str, Any] = {field: value}
    with pytest.raises(InvalidInput, match=message):
        _create(ctx, "b", **huge)
    assert banks.list_banks(ctx) == []
    bank = _create(ctx, max_tokens=2**31 - 1, max_turns=10, retention_days=3_650_000)
    with pytest.raises(InvalidInput, match=message):
        banks.update(ctx, bank.id, BankUpdate(**huge))
    assert banks.get(ctx, bank.id) == bank


def test_zero_disables_a_threshold(ctx: Context) -> None:
    bank = _create(ctx, max_tokens=0, max_turns=10)
    assert bank.max_tokens is None and bank.max_turns == 10 and bank.has_trigger()
    updated = banks.update(ctx, bank.id, BankUpdate(max_turns=0))
    assert updated.max_turns is None and not updated.has_trigger()
    assert banks.get(ctx, bank.id).max_turns is None


# retention -------------------------------------------------------------------------------


@pytest.mark.parametrize("days", [7, 30, 90, 365, 45, None])
def test_retention_presets_and_custom_days_are_kept(ctx: Context, days: int | None) -> None:
    bank = _create(ctx, type="conversation", retention_days=days)
    assert bank.retention_days == days
    assert banks.get(ctx, bank.id).retention_days == days


@pytest.mark.parametrize("days", [0, -7])
def test_non_positive_retention_is_invalid(ctx: Context, days: int) -> None:
    with pytest.raises(InvalidInput, match="retention"):
        _create(ctx, retention_days=days)
    assert banks.list_banks(ctx) == []


def test_default_retention_is_type_aware_for_python_callers(ctx: Context) -> None:
    assert _create(ctx, "c", type="conversation").retention_days == 90
    assert _create(ctx, "g", type="general").retention_days is None


@pytest.mark.parametrize("version", NEW_VERSIONS)
def test_default_retention_is_type_aware_from_2026_08_03(ctx: Context, version: ApiVersion) -> None:
    conv = banks.create(ctx, BankCreate(name="c", type="conversation"), api_version=version)
    gen = banks.create(ctx, BankCreate(name="g", type="general"), api_version=version)
    assert (conv.retention_days, gen.retention_days) == (90, None)


@pytest.mark.parametrize("version", OLD_VERSIONS)
def test_default_retention_is_flat_30_before_2026_08_03(ctx: Context, version: ApiVersion) -> None:
    conv = banks.create(ctx, BankCreate(name="c", type="conversation"), api_version=version)
    gen = banks.create(ctx, BankCreate(name="g", type="general"), api_version=version)
    assert (conv.retention_days, gen.retention_days) == (30, 30)
    assert banks.get(ctx, gen.id).retention_days == 30


@pytest.mark.parametrize("version", [*OLD_VERSIONS, *NEW_VERSIONS])
@pytest.mark.parametrize("days", [None, 7, 365])
def test_explicit_retention_is_honoured_on_every_version(
    ctx: Context, version: ApiVersion, days: int | None
) -> None:
    for bank_type in ("conversation", "general"):
        bank = banks.create(
            ctx,
            BankCreate(name=bank_type, type=bank_type, retention_days=days),
            api_version=version,
        )
        assert bank.retention_days == days


def test_bad_api_version_is_invalid(ctx: Context) -> None:
    with pytest.raises(InvalidInput, match="version"):
        ApiVersion.parse("yesterday")


# max_age_days is retired ----------------------------------------------------------------


@pytest.mark.parametrize("version", NEW_VERSIONS)
def test_nonzero_max_age_days_is_rejected_and_points_to_retention(
    ctx: Context, version: ApiVersion
) -> None:
    with pytest.raises(InvalidInput, match="retention_days"):
        banks.create(
            ctx, BankCreate(name="b", type="general", max_age_days=14), api_version=version
        )
    assert banks.list_banks(ctx) == []
    bank = _create(ctx, "kept", retention_days=60)
    with pytest.raises(InvalidInput, match="retention_days"):
        banks.update(ctx, bank.id, BankUpdate(max_age_days=14, max_turns=3), api_version=version)
    assert banks.get(ctx, bank.id) == bank


@pytest.mark.parametrize("version", NEW_VERSIONS)
def test_zero_max_age_days_is_accepted(ctx: Context, version: ApiVersion) -> None:
    bank = banks.create(
        ctx, BankCreate(name="b", type="general", max_age_days=0), api_version=version
    )
    assert bank.retention_days is None
    updated = banks.update(ctx, bank.id, BankUpdate(max_age_days=0), api_version=version)
    assert updated.retention_days is None
    assert "max_age_days" not in _stored(ctx, bank.id)


def test_zero_max_age_days_clears_a_stored_legacy_value(ctx: Context) -> None:
    body = _legacy_body(ctx, {"retention_days": 14, "max_age_days": 60})
    ctx.store.put_bank_raw(_registry_row(body))
    assert "max_age_days" in ctx.store.bank_rows(ctx.account)[0]
    updated = banks.update(ctx, body["id"], BankUpdate(max_age_days=0))
    assert updated.retention_days == 14
    assert "max_age_days" not in _stored(ctx, body["id"])


@pytest.mark.parametrize("version", OLD_VERSIONS)
def test_older_versions_may_send_max_age_days_without_effect(
    ctx: Context, version: ApiVersion
) -> None:
    bank = banks.create(
        ctx, BankCreate(name="b", type="conversation", max_age_days=120), api_version=version
    )
    assert bank.retention_days == 30
    stored = _stored(ctx, bank.id)
    assert "max_age_days" not in stored and stored["retention_days"] == 30
    updated = banks.update(
        ctx, bank.id, BankUpdate(max_age_days=200, max_turns=4), api_version=version
    )
    assert (updated.retention_days, updated.max_turns) == (30, 4)
    assert "max_age_days" not in _stored(ctx, bank.id)


# legacy migration -----------------------------------------------------------------------


def _legacy_body(ctx: Context, fields: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "legacy0000000000000000000000000001",
        "account": ctx.account,
        "name": "legacy",
        "description": "",
        "type": "conversation",
        "mode": "balanced",
        "created_at": "2025-03-01T00:00:00Z",
        "updated_at": "2025-03-01T00:00:00Z",
    }
    body.update(fields)
    return body


def _registry_row(body: dict[str, Any]) -> dict[str, str]:
    return {
        "id": body["id"],
        "account": body["account"],
        "name": body["name"],
        "type": body["type"],
        "body": json.dumps(body),
    }


def test_a_fixture_per_legacy_case() -> None:
    cases = {json.loads(p.read_text())["case"] for p in LEGACY_FIXTURES}
    assert len(LEGACY_FIXTURES) >= 5
    assert len(cases) == len(LEGACY_FIXTURES)


@pytest.mark.parametrize("path", LEGACY_FIXTURES, ids=lambda p: p.stem)
def test_legacy_bank_is_migrated_on_read_and_persisted(ctx: Context, path: Path) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    body = {**fixture["stored"], "account": ctx.account}
    assert "max_age_days" in body
    ctx.store.put_bank_raw(_registry_row(body))

    bank = banks.get(ctx, body["id"])
    expected = fixture["expected_retention_days"]
    assert bank.retention_days == expected
    for field in ("name", "type", "mode", "max_tokens", "max_turns", "compaction_prompt"):
        assert getattr(bank, field) == body.get(field), field

    stored = _stored(ctx, body["id"])
    assert "max_age_days" not in stored
    assert stored["retention_days"] == expected
    # a new store on the same folder reads the migrated record as is
    fresh = Context(store=LanceStore(ctx.store.uri), account=ctx.account)
    assert "max_age_days" not in fresh.store.bank_rows(ctx.account)[0]
    assert banks.get(fresh, body["name"]) == bank


def test_list_migrates_legacy_banks_too(ctx: Context) -> None:
    body = _legacy_body(ctx, {"retention_days": 30, "max_age_days": 75})
    ctx.store.put_bank_raw(_registry_row(body))
    (bank,) = banks.list_banks(ctx, "conversation")
    assert bank.retention_days == 75
    assert "max_age_days" not in _stored(ctx, body["id"])


def test_every_bank_reads_legacy_banks_as_get_does(ctx: Context) -> None:
    body = _legacy_body(ctx, {"retention_days": 30, "max_age_days": 75})
    ctx.store.put_bank_raw(_registry_row(body))
    (swept,) = banks.every_bank(ctx)
    assert swept.retention_days == 75
    assert "max_age_days" not in _stored(ctx, body["id"])
    assert banks.get(ctx, body["id"]) == swept


@pytest.mark.parametrize("text", ["2026-8-3", "20260803", "2026-02-30", ""])
def test_an_api_version_is_a_yyyy_mm_dd_date(text: str) -> None:
    with pytest.raises(InvalidInput, match="version"):
        ApiVersion.parse(text)
    assert ApiVersion.parse(" 2026-08-03 ").current
    assert not ApiVersion.parse("2026-08-02").current


# accounts ---------------------------------------------------------------------------------


def test_banks_are_isolated_per_account(ctx: Context) -> None:
    bank = _create(ctx, "private", type="conversation")
    other = _other_account(ctx)
    for ref in (bank.id, "private"):
        with pytest.raises(NotFound):
            banks.get(other, ref)
    assert banks.list_banks(other) == []
    assert banks.list_banks(other, "conversation") == []
    with pytest.raises(NotFound):
        banks.update(other, bank.id, BankUpdate(max_turns=1))
    with pytest.raises(NotFound):
        banks.delete(other, bank.id)
    with pytest.raises(NotFound):
        banks.reset_source(other, bank.id)
    # the same name is free in another account, and the first bank is untouched
    theirs = _create(other, "private", type="general")
    assert theirs.account == "globex"
    assert banks.get(ctx, "private") == bank
    assert [b.id for b in banks.list_banks(ctx)] == [bank.id]


def test_a_remembered_lookup_follows_changes_made_through_another_handle(ctx: Context) -> None:
    # the registry remembers look-ups per registry version: another process's change
    # (a second store on the same folder here) makes a new version and is seen at once
    other = Context(store=LanceStore(ctx.store.uri), account="acme", embedder=ctx.embedder)
    made = banks.create(ctx, BankCreate(name="notes", type="general"))
    assert banks.get(ctx, "notes").id == made.id  # read, and remembered
    banks.update(other, made.id, BankUpdate(name="renamed"))
    assert banks.get(ctx, "renamed").id == made.id
    with pytest.raises(NotFound):
        banks.get(ctx, "notes")
    banks.delete(other, made.id)
    with pytest.raises(NotFound):
        banks.get(ctx, made.id)
    assert banks.list_banks(ctx) == []
