"""The rules in memory/validation.py, and the same rule giving the same answer on every way
in: a write, an ingested row and an imported entry."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from memory import banks, entries, search, validation
from memory.context import Context
from memory.errors import InvalidInput
from memory.models import Bank, BankCreate, EntryIn, SearchQuery
from memory.transfer.export import ExportFilters, export
from memory.transfer.import_json import import_json
from memory.transfer.ingest import ingest
from memory.validation import Invalid

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
"""The fixed clock of the `ctx` fixture."""


def test_text_size_is_utf8_bytes_and_nul_or_surrogates_are_refused() -> None:
    assert validation.check_text("content", "plain") == 5
    assert validation.check_text("content", "é€") == 5
    with pytest.raises(Invalid, match=r"^content contains a NUL character: remove it$") as nul:
        validation.check_text("content", "a\x00b")
    assert nul.value.code == "invalid"
    with pytest.raises(Invalid, match=r"^key is not valid UTF-8 text") as bad:
        validation.check_text("key", "a\udc80")
    assert bad.value.code == "bad_encoding"
    assert isinstance(bad.value, InvalidInput)  # callers that catch InvalidInput still do
    assert not validation.is_utf8("a\ud800") and validation.is_utf8("日本")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "tag must be 1-64 characters, not blank, got ''"),
        ("   ", "tag must be 1-64 characters, not blank, got '   '"),
        ("t" * 65, "tag must be 1-64 characters, not blank, got 'tttt"),
        ("a\tb", "tag 'a\\tb' holds a control character (newline, tab, ...)"),
        ("a\x85b", "tag 'a\\x85b' holds a control character"),
    ],
)
def test_labels_are_one_bounded_line(value: str, message: str) -> None:
    with pytest.raises(Invalid) as raised:
        validation.check_label("tag", value, validation.MAX_TAG_LENGTH)
    assert str(raised.value).startswith(message)


def test_created_at_may_be_at_most_one_day_ahead() -> None:
    assert validation.check_created_at(None, NOW) is None
    naive = datetime(2026, 10, 1, 8, 0)
    assert validation.check_created_at(naive, NOW) == naive.replace(tzinfo=UTC)
    edge = NOW + validation.FUTURE_SKEW
    assert validation.check_created_at(edge, NOW) == edge
    with pytest.raises(Invalid) as raised:
        validation.check_created_at(edge + timedelta(seconds=1), NOW)
    assert str(raised.value) == (
        "created_at 2026-11-02T12:00:01+00:00 is in the future: at most one day after now "
        "(2026-11-01T12:00:00+00:00) is accepted; fix the date"
    )
    east = datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5)))  # 0000-12-31 in UTC
    with pytest.raises(Invalid, match=r"^created_at 0001-01-01T00:00:00\+05:00 is out of range"):
        validation.check_created_at(east, NOW)


@pytest.mark.parametrize(
    ("bank_type", "item", "code", "message"),
    [
        ("conversation", {"content": " "}, "empty_content", "content is empty"),
        ("conversation", {"speaker": None}, "missing_speaker", "speaker is missing"),
        ("general", {"speaker": "ann"}, "unexpected_speaker", "speaker is 'ann': entries of"),
        ("conversation", {"content": "caf\udce9"}, "bad_encoding", "content is not valid"),
        ("conversation", {"memory_type": "fact"}, "invalid", "memory_type is 'fact'"),
        ("general", {"role": "user"}, "invalid", "role is 'user': roles belong"),
        ("general", {"memory_type": "hunch"}, "invalid", "unknown memory type 'hunch'"),
        ("conversation", {"id": " "}, "invalid", "id is blank"),
    ],
)
def test_entry_rules_carry_a_code(
    bank_type: str, item: dict[str, Any], code: str, message: str
) -> None:
    bank = _bank(bank_type)
    speaker = "ann" if bank_type == "conversation" else None
    entry = EntryIn.model_validate({"key": "k", "content": "hi", "speaker": speaker, **item})
    with pytest.raises(Invalid) as raised:
        validation.check_entry(bank, entry, now=NOW)
    assert (raised.value.code, str(raised.value)[: len(message)]) == (code, message)
    assert "--" not in str(raised.value)  # files carry these values too: no CLI flag named


def test_entries_write_refuses_a_future_created_at_and_writes_nothing(ctx: Context) -> None:
    bank = banks.create(ctx, BankCreate(name="notes", type="general"))
    late = EntryIn(key="k", content="later", created_at=NOW + timedelta(days=2))
    with pytest.raises(InvalidInput, match="is in the future"):
        entries.write(ctx, bank, [EntryIn(key="k", content="fine"), late])
    assert entries.read(ctx, bank) == []


def test_first_problem_names_the_field_or_the_whole_record() -> None:
    with pytest.raises(ValidationError) as missing:
        EntryIn.model_validate({"content": "x"})
    problem = validation.first_problem(missing.value, "row")
    assert (problem.field, problem.type, str(problem)) == ("key", "missing", "key: Field required")
    with pytest.raises(ValidationError) as whole:
        EntryIn.model_validate(["not", "a", "record"])
    assert validation.first_problem(whole.value, "row").field == "row"


def test_bank_fields() -> None:
    validation.check_bank_fields(name="support", max_tokens=0, retention_days=1)
    with pytest.raises(Invalid, match="looks like a bank id"):
        validation.check_bank_fields(name="0" * 32)
    with pytest.raises(Invalid, match=r"^bank description contains a NUL"):
        validation.check_bank_fields(description="a\x00")
    with pytest.raises(Invalid, match="max_turns must be 0-"):
        validation.check_bank_fields(max_turns=-1)
    with pytest.raises(Invalid, match="retention_days must be 1-"):
        validation.check_bank_fields(retention_days=0)


def test_read_filters_refuse_what_no_write_accepts_in_search_and_export_alike(
    ctx: Context, tmp_path: Path
) -> None:
    notes = banks.create(ctx, BankCreate(name="notes", type="general"))
    entries.write(ctx, notes, [EntryIn(key="k", content="tea")])
    out = tmp_path / "out.json"
    for filters in ({"key": ""}, {"tags": ["a\nb"]}, {"speaker": "bob"}):
        with pytest.raises(InvalidInput) as searched:
            search.search(ctx, notes, SearchQuery(text="tea", **filters))
        with pytest.raises(InvalidInput) as exported:
            export(ctx, notes, "json", out, ExportFilters.model_validate(filters))
        assert str(searched.value) == str(exported.value), filters
    assert not out.exists()


# the same rule on every way in ---------------------------------------------------------------


BAD_ENTRIES: list[tuple[str, dict[str, Any]]] = [
    ("conversation", {"speaker": None}),
    ("conversation", {"memory_type": "fact"}),
    ("conversation", {"content": "nul \x00 here"}),
    ("conversation", {"tags": ["two\nlines"]}),
    ("conversation", {"created_at": "2026-11-03T00:00:00+00:00"}),
    ("general", {"speaker": "ann"}),
    ("general", {"role": "user"}),
    ("general", {"memory_type": "hunch"}),
]


@pytest.mark.parametrize(("bank_type", "change"), BAD_ENTRIES)
def test_write_ingest_and_import_refuse_an_entry_with_one_message(
    ctx: Context, tmp_path: Path, bank_type: str, change: dict[str, Any]
) -> None:
    bank = banks.create(ctx, BankCreate.model_validate({"name": "src", "type": bank_type}))
    speaker = "ann" if bank_type == "conversation" else None
    good = {"id": "e1", "key": "k", "speaker": speaker, "content": "a fine turn"}
    entries.write(ctx, bank, [EntryIn.model_validate(good)])
    bad = {**good, "id": "e2", **change}

    with pytest.raises(InvalidInput) as written:
        entries.write(ctx, bank, [EntryIn.model_validate(bad)])
    message = str(written.value)

    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(bad) + "\n", "utf-8")
    ingest(ctx, bank, [rows])
    (reject,) = [json.loads(x) for x in Path(f"{rows}.rejects.jsonl").read_text().splitlines()]
    assert reject["reason"] == message

    source = tmp_path / "export.json"
    export(ctx, bank, "json", source)
    exported = {"created_at": "2026-10-01T00:00:00+00:00", "token_count": 3, **bad}
    damaged = _with_entry(source, tmp_path / "damaged.json", exported)
    with pytest.raises(InvalidInput) as imported:
        import_json(ctx, damaged, name="copy")
    assert str(imported.value) == f"{damaged} line 4 (id 'e2'): {message}"
    assert [b.name for b in banks.list_banks(ctx)] == ["src"]


def _with_entry(source: Path, target: Path, entry: dict[str, Any]) -> Path:
    """Write the one-entry export `source` to `target` with `entry` appended after it."""
    lines = source.read_text("utf-8").splitlines(keepends=True)
    lines[2] = lines[2].removesuffix("\n") + ",\n"
    lines.insert(3, json.dumps({k: v for k, v in entry.items() if v is not None}) + "\n")
    target.write_text("".join(lines).replace('"entry_count": 1', '"entry_count": 2'), "utf-8")
    return target


def _bank(bank_type: str) -> Bank:
    return Bank.model_validate(
        {
            "id": "b" * 32,
            "account": "acme",
            "name": "bank",
            "type": bank_type,
            "mode": "balanced",
            "created_at": NOW,
            "updated_at": NOW,
        }
    )
