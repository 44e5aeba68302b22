"""`membank import` (and export's counts) on the command line: one-line errors that name the
file and the entry, never the bank's temporary name; nothing half-written on failure."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from compaction_support import run

from memory import banks, entries
from memory.context import Context
from memory.errors import InvalidInput
from memory.models import BankCreate, EntryIn
from memory.transfer.export import export
from memory.transfer.import_json import import_json


@pytest.fixture
def cli(local: Context) -> Context:
    """The context the CLI runs on (`run(..., context=cli)`): the hashing embedder, no model."""
    return local


def exported(
    ctx: Context, folder: Path, name: str, bank_type: str, speakers: list[str | None]
) -> Path:
    """Return a JSON export of a new bank with one entry per speaker."""
    bank = banks.create(ctx, BankCreate.model_validate({"name": name, "type": bank_type}))
    items = [EntryIn(key="k", speaker=s, content=f"turn {i}") for i, s in enumerate(speakers)]
    entries.write(ctx, bank, items)
    out = folder / f"{name}.json"
    export(ctx, bank, "json", out)
    return out


def edited(source: Path, target: Path, index: int, **changes: Any) -> tuple[Path, str]:
    """Write `source` to `target` with entry `index` changed; returns (target, that entry's id).

    An export holds its header on line 1, `"entries": [` on line 2, then one entry a line.
    """
    lines = source.read_text("utf-8").splitlines(keepends=True)
    line = lines[2 + index]
    tail = ",\n" if line.endswith(",\n") else "\n"
    record = json.loads(line.removesuffix(tail))
    record.update(changes)
    lines[2 + index] = json.dumps(record) + tail
    target.write_text("".join(lines), "utf-8")
    return target, record["id"]


def names(ctx: Context) -> list[str]:
    return sorted(b.name for b in banks.list_banks(ctx))


@pytest.mark.parametrize(
    ("bank_type", "changes", "problem"),
    [
        ("conversation", {"speaker": None}, "speaker is missing: every entry of a conversation"),
        ("conversation", {"speaker": "  "}, "speaker is missing: every entry of a conversation"),
        ("conversation", {"content": " "}, "content is empty"),
        ("conversation", {"memory_type": "fact"}, "memory_type is 'fact': memory types belong"),
        ("general", {"speaker": "ann"}, "speaker is 'ann': entries of a general bank have no"),
        ("general", {"role": "user"}, "role is 'user': roles belong to conversation banks"),
    ],
)
def test_an_invalid_entry_is_named_by_file_line_and_id(
    cli: Context, tmp_path: Path, bank_type: str, changes: dict[str, Any], problem: str
) -> None:
    speaker = "ann" if bank_type == "conversation" else None
    source = exported(cli, tmp_path, "src", bank_type, [speaker, speaker])
    bad, entry_id = edited(source, tmp_path / "bad.json", 1, **changes)
    code, out, err = run("import", str(bad), "--name", "ns", context=cli)
    assert (code, out) == (2, "")
    assert err.startswith(f"membank: error: {bad} line 4 (id '{entry_id}'): {problem}")
    assert err.count("\n") == 1 and "[importing" not in err and "--" not in err
    assert names(cli) == ["src"]


def test_a_future_created_at_is_refused_as_ingest_refuses_it(cli: Context, tmp_path: Path) -> None:
    source = exported(cli, tmp_path, "src", "conversation", ["ann", "bob"])
    soon = datetime.now(UTC) + timedelta(hours=12)  # within the day of clock skew: kept
    late = datetime.now(UTC) + timedelta(days=3)
    fine, _ = edited(source, tmp_path / "fine.json", 1, created_at=soon.isoformat())
    assert run("import", str(fine), "--name", "soon", context=cli)[0] == 0
    bad, entry_id = edited(source, tmp_path / "bad.json", 1, created_at=late.isoformat())

    code, out, err = run("import", str(bad), "--name", "ns", context=cli)

    assert (code, out) == (2, "")
    assert err.startswith(
        f"membank: error: {bad} line 4 (id '{entry_id}'): created_at {late.isoformat()} is "
        "in the future: at most one day after now ("
    )
    assert err.endswith(") is accepted; fix the date\n") and err.count("\n") == 1
    assert names(cli) == ["soon", "src"]


def test_an_invalid_entry_of_a_reformatted_export_is_named_by_position(
    cli: Context, tmp_path: Path
) -> None:
    source = exported(cli, tmp_path, "src", "conversation", ["ann", "bob"])
    data = json.loads(source.read_text("utf-8"))
    data["entries"][1]["speaker"] = None
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(data, indent=2), "utf-8")
    code, _, err = run("import", str(pretty), "--name", "ns", context=cli)
    assert code == 2
    entry_id = data["entries"][1]["id"]
    assert err.startswith(f"membank: error: {pretty} entry 2 (id '{entry_id}'): speaker is")


def test_an_invalid_entry_after_written_batches_leaves_no_bank(
    cli: Context, tmp_path: Path
) -> None:
    source = exported(cli, tmp_path, "src", "conversation", ["ann", "bob", "cy"])
    bad, _ = edited(source, tmp_path / "bad.json", 2, speaker=None)
    with pytest.raises(InvalidInput, match="line 5"):
        import_json(cli, bad, name="half", batch_size=1)  # two batches written before it
    assert names(cli) == ["src"]


def test_a_bad_bank_configuration_is_one_line(cli: Context, tmp_path: Path) -> None:
    source = exported(cli, tmp_path, "chat", "conversation", ["ann"])
    weird = tmp_path / "weird.json"
    weird.write_text(
        source.read_text("utf-8").replace('"type": "conversation"', '"type": "weird"', 1), "utf-8"
    )
    code, _, err = run("import", str(weird), "--name", "w", context=cli)
    assert code == 2
    assert err == (
        f"membank: error: {weird}: the bank's type: Input should be 'conversation' or 'general'\n"
    )
    assert names(cli) == ["chat"]


def test_an_empty_name_is_refused_as_bank_create_refuses_it(
    cli: Context, data: str, tmp_path: Path
) -> None:
    source = exported(cli, tmp_path, "chat", "conversation", ["ann"])
    imported = run("import", str(source), "--name", "", context=cli)
    created = run("--data", data, "bank", "create", "--name", "", "--type", "conversation")
    expected = "membank: error: bank name must be 1-200 characters, not blank, got ''\n"
    assert imported == created == (2, "", expected)
    assert names(cli) == ["chat"]


def test_a_name_is_stripped_as_bank_create_strips_it(cli: Context, tmp_path: Path) -> None:
    source = exported(cli, tmp_path, "chat", "conversation", ["ann"])
    assert run("import", str(source), "--name", " copy ", context=cli)[0] == 0
    assert names(cli) == ["chat", "copy"]


def test_counts_say_entry_and_file_for_one(cli: Context, tmp_path: Path) -> None:
    source = exported(cli, tmp_path, "one", "conversation", ["ann"])
    code, out, _ = run("import", str(source), "--name", "copy", context=cli)
    assert code == 0
    assert out.startswith("imported 1 entry (0 compaction summaries) from 'one' into new bank")
    code, out, _ = run(
        "export", "copy", "--format", "json", "--out", str(tmp_path / "c.json"), context=cli
    )
    assert out.startswith(f"exported 1 entry to {tmp_path / 'c.json'} (")
    code, out, _ = run(
        "export", "copy", "--format", "json", "--out", "x", "--estimate", context=cli
    )
    assert out.startswith("1 entry, about ")
    folder = tmp_path / "by-key"
    code, out, _ = run(
        "export",
        "copy",
        "--format",
        "parquet",
        "--out",
        str(folder),
        "--partition-by",
        "key",
        context=cli,
    )
    assert code == 0 and out.endswith(" in 1 file)\n")
    two = exported(cli, tmp_path, "two", "general", [None, None])
    code, out, _ = run("import", str(two), "--name", "two-copy", context=cli)
    assert out.startswith("imported 2 entries (0 compaction summaries)")
