"""Export and import: filters, estimates, Parquet read by four engines, atomic files, round trip."""

from __future__ import annotations

import errno
import importlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from cli_support import Cli, cli_fixture  # noqa: F401  (the `cli` fixture)

from memory import banks, entries
from memory.clock import FixedClock
from memory.config import get_mode
from memory.context import Context
from memory.errors import Conflict, InvalidInput, StorageError
from memory.models import SUMMARY_TAG, Bank, BankCreate, Entry, EntryIn
from memory.store import locks
from memory.store.lance import entries_table_name
from memory.testing import failing_after
from memory.transfer.export import ExportFilters, ExportFormat, PartitionBy, estimate, export
from memory.transfer.import_json import import_json
from memory.types.entry_filter import EntryFilter

SCHEMA_V1 = [
    ("bank_id", pa.string()),
    ("id", pa.string()),
    ("key", pa.string()),
    ("kind", pa.string()),
    ("speaker", pa.string()),
    ("role", pa.string()),
    ("memory_type", pa.string()),
    ("content", pa.string()),
    ("tags", pa.list_(pa.string())),
    ("metadata", pa.string()),
    ("attachments", pa.string()),
    ("summary_of", pa.list_(pa.string())),
    ("created_at", pa.timestamp("us", tz="UTC")),
    ("token_count", pa.int32()),
    ("chunk_count", pa.int32()),
]
LONG = " ".join(f"word{i}" for i in range(600))
"""An entry long enough to span several chunks."""


@pytest.fixture
def bank(ctx: Context, clock: FixedClock) -> Bank:
    """A conversation bank with two threads, a long entry, a summary and a forgotten entry."""
    bank = banks.create(
        ctx,
        BankCreate(
            name="support",
            type="conversation",
            description="support history",
            compaction_prompt="Keep order numbers.",
            max_turns=50,
            retention_days=90,
        ),
    )
    now = clock.now()
    turns = [
        EntryIn(
            key="order/1001 'x'",
            speaker="ann",
            role="user",
            content="My order 1001 is late.",
            tags=["order", "late"],
            metadata={"channel": "mail", "n": 1},
            attachments=[{"name": "receipt.pdf", "size": 12}],
            created_at=now - timedelta(days=3),
        ),
        EntryIn(
            key="order/1001 'x'",
            speaker="bob",
            role="assistant",
            content="Sorry — it ships tomorrow.",
            tags=["order"],
            created_at=now - timedelta(days=2),
        ),
        EntryIn(
            key="k2", speaker="ann", content=LONG, tags=["long"], created_at=now - timedelta(days=1)
        ),
        EntryIn(key="k2", speaker="cy", content="to be forgotten", created_at=now),
    ]
    written = entries.write(ctx, bank, turns)
    entries.write(
        ctx,
        bank,
        [
            EntryIn(
                key="k2",
                speaker="summary",
                content="Earlier: ann asked twice.",
                tags=[SUMMARY_TAG],
                created_at=now - timedelta(days=5),
            )
        ],
        kind="summary",
        summary_of=[["gone-1", "gone-2"]],
    )
    entries.forget(ctx, bank, written[3].id)
    bank = bank.model_copy(
        update={"summary_count": 1, "last_compaction_at": now - timedelta(hours=1)}
    )
    banks.save(ctx, bank)
    return bank


def exported_entries(path: Path) -> list[dict[str, Any]]:
    """Return the entries list of a JSON export."""
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    entries_list: list[dict[str, Any]] = data["entries"]
    return entries_list


def test_json_export_holds_config_and_entries(ctx: Context, bank: Bank, tmp_path: Path) -> None:
    out = tmp_path / "bank.json"
    result = export(ctx, bank, "json", out)
    data = json.loads(out.read_text("utf-8"))
    assert (data["format"], data["version"]) == ("membank.export", 1)
    assert data["bank"] == bank.model_dump(mode="json")
    assert data["entry_count"] == result.entries == 4
    stored = {e.id: e for e in entries.read(ctx, bank)}
    assert {e["id"] for e in data["entries"]} == set(stored)
    assert "to be forgotten" not in out.read_text("utf-8")
    for record in data["entries"]:
        expected = stored[record["id"]].model_dump(mode="json", exclude={"bank_id"})
        assert (
            Entry.model_validate({**record, "bank_id": bank.id}).model_dump(
                mode="json", exclude={"bank_id"}
            )
            == expected
        )
        assert set(record) == set(Entry.model_fields) - {"bank_id"}


def test_a_speaker_filter_on_a_general_bank_is_refused(ctx: Context, tmp_path: Path) -> None:
    notes = banks.create(ctx, BankCreate(name="notes", type="general"))
    entries.write(ctx, notes, [EntryIn(key="k", content="bob likes tea")])
    flt = ExportFilters(speaker="bob")
    with pytest.raises(InvalidInput, match="general bank: entries have no speaker"):
        export(ctx, notes, "json", tmp_path / "n.json", flt=flt)
    with pytest.raises(InvalidInput, match="general bank"):
        estimate(ctx, notes, "json", flt=flt)
    assert not (tmp_path / "n.json").exists()


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        (
            ExportFilters(key="order/1001 'x'"),
            {"My order 1001 is late.", "Sorry — it ships tomorrow."},
        ),
        (ExportFilters(speaker="bob"), {"Sorry — it ships tomorrow."}),
        (ExportFilters(tags=["order", "late"]), {"My order 1001 is late."}),
        (ExportFilters(key="x' OR '1'='1"), set()),
    ],
)
def test_json_export_filters(
    ctx: Context, bank: Bank, tmp_path: Path, flt: ExportFilters, expected: set[str]
) -> None:
    out = tmp_path / "f.json"
    export(ctx, bank, "json", out, flt)
    assert {e["content"] for e in exported_entries(out)} == expected
    assert json.loads(out.read_text("utf-8"))["filters"] == flt.model_dump(mode="json")


def test_json_export_time_filters(
    ctx: Context, bank: Bank, clock: FixedClock, tmp_path: Path
) -> None:
    out = tmp_path / "t.json"
    now = clock.now()
    export(ctx, bank, "json", out, ExportFilters(since=now - timedelta(days=2), until=now))
    assert {e["content"] for e in exported_entries(out)} == {"Sorry — it ships tomorrow.", LONG}


def test_estimate_counts_and_sizes_without_writing(
    ctx: Context, bank: Bank, tmp_path: Path
) -> None:
    guess = estimate(ctx, bank, "json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db"]
    out = tmp_path / "bank.json"
    actual = export(ctx, bank, "json", out)
    assert guess.entries == actual.entries == 4
    assert abs(guess.bytes - actual.bytes) <= 0.1 * actual.bytes
    small = estimate(ctx, bank, "parquet")  # a small file is mostly schema and footer
    written = export(ctx, bank, "parquet", tmp_path / "bank.parquet")
    assert abs(small.bytes - written.bytes) <= 0.3 * written.bytes
    by_key = estimate(ctx, bank, "parquet", ExportFilters(speaker="bob"), with_vectors=True)
    assert by_key.entries == 1
    assert by_key.bytes >= get_mode(bank.mode).dims * 4


def read_four_ways(path: Path) -> dict[str, list[str]]:
    """Return the sorted ids read by polars, pyarrow, pandas and DuckDB."""
    glob = str(path / "**" / "*.parquet") if path.is_dir() else str(path)
    return {
        "polars": sorted(pl.read_parquet(path)["id"].to_list()),
        "pyarrow": sorted(pq.read_table(path).column("id").to_pylist()),
        "pandas": sorted(pd.read_parquet(path)["id"].tolist()),
        "duckdb": sorted(
            r[0] for r in duckdb.sql(f"SELECT id FROM read_parquet('{glob}')").fetchall()
        ),
    }


def test_parquet_schema_and_four_readers(ctx: Context, bank: Bank, tmp_path: Path) -> None:
    out = tmp_path / "bank.parquet"
    result = export(ctx, bank, "parquet", out)
    schema = pq.read_schema(out)
    assert [(f.name, f.type) for f in schema] == SCHEMA_V1
    meta = json.loads(schema.metadata[b"membank.export"])
    assert (meta["version"], meta["bank"]["name"]) == (1, "support")
    ids = sorted(e.id for e in entries.read(ctx, bank))
    assert result.entries == 4
    assert read_four_ways(out) == {k: ids for k in ("polars", "pyarrow", "pandas", "duckdb")}
    frame = pl.read_parquet(out)
    row = frame.filter(pl.col("content") == "My order 1001 is late.").row(0, named=True)
    assert json.loads(row["metadata"]) == {"channel": "mail", "n": 1}
    assert row["tags"] == ["order", "late"]
    assert frame.filter(pl.col("content") == LONG)["chunk_count"].item() > 1


def test_parquet_vectors_are_each_entrys_chunk_vectors(
    ctx: Context, bank: Bank, tmp_path: Path
) -> None:
    out = tmp_path / "vectors.parquet"
    export(ctx, bank, "parquet", out, with_vectors=True, batch_size=2)
    table = pq.read_table(out)
    assert table.schema.field("vectors").type == pa.list_(pa.list_(pa.float32(), 384))
    stored = ctx.store.scan(bank.id, columns=["entry_id", "chunk_index", "vector"])
    expected: dict[str, list[tuple[int, list[float]]]] = {}
    for r in stored.to_pylist():
        expected.setdefault(r["entry_id"], []).append((r["chunk_index"], r["vector"]))
    for entry_id, vectors in zip(
        table.column("id").to_pylist(), table.column("vectors").to_pylist(), strict=True
    ):
        want = [v for _, v in sorted(expected[entry_id])]
        assert np.allclose(np.array(vectors), np.array(want))
    assert max(len(v) for v in table.column("vectors").to_pylist()) > 1


def test_a_bank_whose_mode_is_gone_exports_from_its_table(
    ctx: Context, bank: Bank, tmp_path: Path
) -> None:
    """A user mode no longer defined (MEMBANK_CONFIG_DIR unset): no embedder is needed, the
    vectors' width comes from the entries table."""
    gone = bank.model_copy(update={"mode": "removed-user-mode"})
    export(ctx, bank, "parquet", tmp_path / "before.parquet", with_vectors=True)
    result = export(ctx, gone, "parquet", tmp_path / "after.parquet", with_vectors=True)
    assert result.entries == 4
    after, before = (pq.read_table(tmp_path / f"{n}.parquet") for n in ("after", "before"))
    assert after.equals(before, check_metadata=False)  # the header names the bank's mode
    assert export(ctx, gone, "json", tmp_path / "after.json").entries == 4
    assert estimate(ctx, gone, "parquet", with_vectors=True) == estimate(
        ctx, bank, "parquet", with_vectors=True
    )
    ctx.store.drop_entries_table(bank.id)  # nothing left to tell the width
    assert export(ctx, gone, "json", tmp_path / "empty.json").entries == 0  # needs no width
    with pytest.raises(InvalidInput, match="bank 'support' uses unknown mode 'removed-user-mode'"):
        export(ctx, gone, "parquet", tmp_path / "empty.parquet")


@pytest.mark.parametrize("batch_size", [1, 2, 65_536])
def test_one_row_per_entry_in_storage_order(
    ctx: Context, bank: Bank, tmp_path: Path, batch_size: int
) -> None:
    """Chunk 0 is picked in Arrow without a filter, in the scan with one: same rows, same order."""
    stored = ctx.store.scan(bank.id, columns=["entry_id", "chunk_index"])
    order = [r["entry_id"] for r in stored.to_pylist() if r["chunk_index"] == 0]
    assert len(order) < stored.num_rows  # the long entry has several chunk rows
    everything = ExportFilters(since=datetime(2000, 1, 1, tzinfo=UTC))
    tables = []
    for flt in (None, everything):
        out = tmp_path / f"{flt is None}.parquet"
        assert export(ctx, bank, "parquet", out, flt, batch_size=batch_size).entries == 4
        tables.append(pq.read_table(out))
        assert tables[-1].column("id").to_pylist() == order
        json_out = tmp_path / f"{flt is None}.json"
        export(ctx, bank, "json", json_out, flt, batch_size=batch_size)
        assert [e["id"] for e in exported_entries(json_out)] == order
    assert tables[0].equals(tables[1])  # metadata (the filters) aside
    assert estimate(ctx, bank, "parquet").entries == 4


@pytest.mark.parametrize("partition_by", ["date", "key"])
def test_partitioned_parquet(ctx: Context, bank: Bank, tmp_path: Path, partition_by: str) -> None:
    out = tmp_path / "dataset"
    result = export(ctx, bank, "parquet", out, partition_by=partition_by)  # type: ignore[arg-type]
    ids = sorted(e.id for e in entries.read(ctx, bank))
    assert read_four_ways(out) == {k: ids for k in ("polars", "pyarrow", "pandas", "duckdb")}
    folders = sorted(p.name for p in out.iterdir())
    column = "date" if partition_by == "date" else "partition_key"
    assert all(name.startswith(f"{column}=") for name in folders)
    assert len(folders) == result.files == (4 if partition_by == "date" else 2)
    keys = pl.read_parquet(out)["key"].unique().sort().to_list()
    assert keys == ["k2", "order/1001 'x'"]
    export(ctx, bank, "parquet", out, partition_by=partition_by)  # type: ignore[arg-type]
    assert read_four_ways(out)["pyarrow"] == ids


def test_partitioned_export_never_replaces_a_foreign_folder(
    ctx: Context, bank: Bank, tmp_path: Path
) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    with pytest.raises(InvalidInput, match="not an earlier membank"):
        export(ctx, bank, "parquet", folder, partition_by="date")
    assert (folder / "notes.txt").read_text() == "keep me"


def test_single_file_export_replaces_only_an_earlier_export_of_its_format(
    ctx: Context, bank: Bank, tmp_path: Path
) -> None:
    notes, as_json, as_parquet = tmp_path / "notes.txt", tmp_path / "a.json", tmp_path / "a.pq"
    notes.write_text("keep me")
    export(ctx, bank, "json", as_json)
    export(ctx, bank, "parquet", as_parquet)
    pretty = tmp_path / "pretty.json"  # a reformatted export is not one export writes
    pretty.write_text(json.dumps(json.loads(as_json.read_text("utf-8")), indent=2), "utf-8")
    refused = [
        ("json", notes, "JSON"),
        ("parquet", notes, "Parquet"),
        ("json", as_parquet, "JSON"),
        ("parquet", as_json, "Parquet"),
        ("json", pretty, "JSON"),
    ]
    for fmt, target, label in refused:
        before = target.read_bytes()
        with pytest.raises(InvalidInput) as refusal:
            export(ctx, bank, fmt, target)  # type: ignore[arg-type]
        assert str(refusal.value) == (
            f"{target} exists and is not an earlier membank {label} export: choose a new "
            "--out (or delete the file)"
        )
        assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "db") == [
        "a.json",
        "a.pq",
        "notes.txt",
        "pretty.json",
    ]
    assert export(ctx, bank, "json", as_json).entries == 4
    assert export(ctx, bank, "parquet", as_parquet).entries == 4
    empty = tmp_path / "empty.json"
    empty.touch()  # an empty file holds nothing to lose (e.g. made by mktemp)
    assert export(ctx, bank, "json", empty).entries == 4


def test_cli_export_over_a_foreign_file_is_exit_2(
    bank: Bank,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cli: Cli,
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("keep me")
    assert cli(["export", "support", "--format", "json", "--out", str(notes)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"membank: error: {notes} exists and is not an earlier membank JSON export: choose a "
        "new --out (or delete the file)\n"
    )
    assert notes.read_text() == "keep me"


def _files(folder: Path) -> list[Path]:
    return sorted(p.relative_to(folder) for p in folder.rglob("*"))


FAILING_WRITES = [
    ("json", "bank.json", None, "json_file.entry_record"),
    ("parquet", "bank.parquet", None, "parquet.to_export_batch"),
    ("parquet", "dataset", "key", "parquet.to_export_batch"),
]
"""Each export kind, and the function its writer calls per batch (where a failure is injected)."""


def _original(patched: str) -> Any:
    """Return the function `module.name` of memory.transfer.export (before it is patched)."""
    module, name = patched.split(".")
    return getattr(importlib.import_module(f"memory.transfer.export.{module}"), name)


@dataclass(frozen=True)
class PreviousExport:
    """An export written before a failing one into a folder of its own, and what it held."""

    folder: Path
    out: Path
    fmt: ExportFormat
    partition_by: PartitionBy | None
    files: list[Path]
    content: bytes | None
    """The file's bytes (None for a partitioned folder)."""

    def again(self, ctx: Context, bank: Bank, out: Path | None = None) -> None:
        """Export the bank once more, to `out` (default: over this export), one entry a batch."""
        target = self.out if out is None else out
        export(ctx, bank, self.fmt, target, partition_by=self.partition_by, batch_size=1)

    def assert_kept(self) -> None:
        """Assert that the folder holds just this export, byte for byte."""
        assert _files(self.folder) == self.files
        if self.content is not None:
            assert self.out.read_bytes() == self.content


@pytest.fixture
def previous(
    ctx: Context,
    bank: Bank,
    tmp_path: Path,
    fmt: ExportFormat,
    target: str,
    partition_by: PartitionBy | None,
) -> PreviousExport:
    """The bank exported once (in the test's `fmt`, to `target`), one entry per batch."""
    folder = tmp_path / "exports"
    folder.mkdir()
    out = folder / target
    export(ctx, bank, fmt, out, partition_by=partition_by, batch_size=1)
    content = out.read_bytes() if out.is_file() else None
    return PreviousExport(folder, out, fmt, partition_by, _files(folder), content)


@pytest.mark.parametrize(("fmt", "target", "partition_by", "patched"), FAILING_WRITES)
def test_failed_export_leaves_no_partial_file(
    ctx: Context,
    bank: Bank,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    previous: PreviousExport,
    target: str,
    patched: str,
) -> None:
    monkeypatch.setattr(f"memory.transfer.export.{patched}", failing_after(2, _original(patched)))
    with pytest.raises(RuntimeError, match="injected"):
        previous.again(ctx, bank)
    previous.assert_kept()
    (tmp_path / "fresh").mkdir()
    with pytest.raises(RuntimeError, match="injected") as failure:
        previous.again(ctx, bank, tmp_path / "fresh" / target)
    assert list((tmp_path / "fresh").iterdir()) == []
    # the failed export's scan let go of the table at once (its traceback is still alive)
    assert failure.traceback
    versions = f"{entries_table_name(bank.id)}.versions"
    with locks._file_lock(ctx.store.uri, versions, timeout=0) as held:
        assert held, "a prune would wait for the failed export's scan"


def test_round_trip_is_equal_on_every_field(ctx: Context, bank: Bank, tmp_path: Path) -> None:
    general = banks.create(ctx, BankCreate(name="facts", type="general", max_tokens=900))
    entries.write(
        ctx,
        general,
        [
            EntryIn(key="u1", content="Likes tea.", memory_type="preference", tags=["drink"]),
            EntryIn(key="u1", content="Knows Bo.", memory_type="relationship", metadata={"a": [1]}),
        ],
    )
    for source in (bank, general):
        out = tmp_path / f"{source.name}.json"
        export(ctx, source, "json", out)
        report = import_json(ctx, out, name=f"{source.name}-copy", batch_size=2)
        copy = report.bank
        assert copy.name == f"{source.name}-copy" and copy.id != source.id
        config = {"id", "name", "created_at", "updated_at"}
        assert copy.model_dump(exclude=config) == source.model_dump(exclude=config)
        original = [e.model_dump(exclude={"bank_id"}) for e in entries.read(ctx, source)]
        copied = [e.model_dump(exclude={"bank_id"}) for e in entries.read(ctx, copy)]
        assert copied == original
        assert report.entries == len(original)
    assert report.summaries == 0


def test_import_of_a_reformatted_export(ctx: Context, bank: Bank, tmp_path: Path) -> None:
    out = tmp_path / "bank.json"
    export(ctx, bank, "json", out)
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(json.loads(out.read_text("utf-8")), indent=2), "utf-8")
    report = import_json(ctx, pretty, name="pretty")
    assert (report.entries, report.summaries) == (4, 1)


def test_import_rejects_bad_files_and_leaves_no_bank(
    ctx: Context, bank: Bank, tmp_path: Path
) -> None:
    out = tmp_path / "bank.json"
    export(ctx, bank, "json", out)
    lines = out.read_text("utf-8").splitlines(keepends=True)
    truncated = tmp_path / "truncated.json"
    truncated.write_text("".join(lines[:-4]), "utf-8")
    with pytest.raises(InvalidInput, match="truncated"):
        import_json(ctx, truncated, name="half")
    newer = tmp_path / "newer.json"
    newer.write_text(out.read_text("utf-8").replace('"version": 1', '"version": 99', 1), "utf-8")
    with pytest.raises(InvalidInput, match="newer"):
        import_json(ctx, newer, name="future")
    with pytest.raises(Conflict):
        import_json(ctx, out)
    assert [b.name for b in banks.list_banks(ctx)] == ["support"]


def test_cli_export_estimate_and_import(
    bank: Bank,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cli: Cli,
) -> None:
    out = tmp_path / "cli.json"
    assert cli(["export", "support", "--format", "json", "--out", str(out), "--estimate"]) == 0
    assert "4 entries" in capsys.readouterr().out
    assert not out.exists()
    assert (
        cli(["export", "support", "--format", "json", "--out", str(out), "--speaker", "ann"]) == 0
    )
    assert str(out) in capsys.readouterr().out
    assert len(exported_entries(out)) == 2
    assert cli(["export", "support", "--format", "json", "--out", str(out), "--with-vectors"]) == 2
    assert cli(["export", "support", "--format", "parquet"]) == 2
    assert cli(["import", str(out), "--name", "copy", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["entries"] == 2


def test_deleted_entries_never_exported(ctx: Context, bank: Bank, tmp_path: Path) -> None:
    victim = entries.read(ctx, bank, EntryFilter(speaker="bob"))[0]
    entries.forget(ctx, bank, victim.id)
    out = tmp_path / "after.parquet"
    export(ctx, bank, "parquet", out, with_vectors=True)
    assert victim.id not in pq.read_table(out).column("id").to_pylist()


def test_empty_bank_exports(ctx: Context, tmp_path: Path) -> None:
    bank = banks.create(ctx, BankCreate(name="empty", type="general"))
    banks.reset_source(ctx, "empty")
    assert export(ctx, bank, "json", tmp_path / "e.json").entries == 0
    assert exported_entries(tmp_path / "e.json") == []
    export(ctx, bank, "parquet", tmp_path / "e.parquet")
    assert pl.read_parquet(tmp_path / "e.parquet").columns == [name for name, _ in SCHEMA_V1]
    result = export(ctx, bank, "parquet", tmp_path / "ds", partition_by="key")
    assert (result.entries, result.files) == (0, 0)
    assert import_json(ctx, tmp_path / "e.json", name="empty-copy").entries == 0


def test_import_refuses_unreadable_files_and_repeated_ids(
    ctx: Context, bank: Bank, tmp_path: Path
) -> None:
    with pytest.raises(InvalidInput, match="cannot read"):
        import_json(ctx, tmp_path / "missing.json", name="none")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b'{"format": "membank.export",\n\x8c\xff\xfe')
    with pytest.raises(InvalidInput, match="not UTF-8"):
        import_json(ctx, binary, name="binary")
    out = tmp_path / "bank.json"
    export(ctx, bank, "json", out)
    lines = out.read_text("utf-8").splitlines(keepends=True)
    assert lines[2].endswith(",\n") and lines[3].endswith(",\n")  # two entries, not the last
    lines[3] = lines[2]
    twice = tmp_path / "twice.json"
    twice.write_text("".join(lines), "utf-8")
    with pytest.raises(InvalidInput, match="twice"):
        import_json(ctx, twice, name="twice")
    assert [b.name for b in banks.list_banks(ctx)] == ["support"]


def test_import_carries_a_marked_name_until_it_completes(
    ctx: Context, bank: Bank, tmp_path: Path
) -> None:
    out = tmp_path / "bank.json"
    export(ctx, bank, "json", out)
    names: list[list[str]] = []

    def seen(_: int) -> None:
        names.append([b.name for b in banks.list_banks(ctx)])

    report = import_json(ctx, out, name="copy", batch_size=1, progress=seen)
    pending = [name for n in names for name in n if name != "support"]
    assert len(pending) == len(names) == report.entries
    assert all(name.startswith("[importing ") and name.endswith("] copy") for name in pending)
    assert report.bank.name == "copy"
    assert sorted(b.name for b in banks.list_banks(ctx)) == ["copy", "support"]
    assert banks.get(ctx, "copy").summary_count == report.summaries == 1


@pytest.mark.parametrize(
    ("fmt", "partition_by"), [("json", None), ("parquet", None), ("parquet", "key")]
)
def test_unusable_out_paths_are_bad_input(
    ctx: Context, bank: Bank, tmp_path: Path, fmt: str, partition_by: str | None
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    for out in (afile / "x.out", afile / "sub" / "x.out"):
        with pytest.raises(InvalidInput, match="afile is a file, not a folder"):
            export(ctx, bank, fmt, out, partition_by=partition_by)  # type: ignore[arg-type]
    assert afile.read_text() == "x" and not [p for p in tmp_path.iterdir() if p.name[0] == "."]
    if Path("/proc/self").is_dir():  # a folder where nobody, not even root, creates files
        with pytest.raises(InvalidInput, match=r"cannot create a (file|folder) in /proc"):
            export(ctx, bank, fmt, "/proc/x.out", partition_by=partition_by)  # type: ignore[arg-type]


@pytest.mark.parametrize(("fmt", "target", "partition_by", "patched"), FAILING_WRITES)
def test_disk_full_is_a_storage_failure_that_keeps_the_previous_export(
    ctx: Context,
    bank: Bank,
    monkeypatch: pytest.MonkeyPatch,
    previous: PreviousExport,
    patched: str,
) -> None:
    disk_full = OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(
        f"memory.transfer.export.{patched}", failing_after(1, _original(patched), disk_full)
    )
    with pytest.raises(StorageError, match="No space left on device"):
        previous.again(ctx, bank)
    previous.assert_kept()


@pytest.mark.process
def test_cli_export_file_too_large_is_exit_1(ctx: Context, bank: Bank, tmp_path: Path) -> None:
    """`(ulimit -f 2; membank export ...)`: a real process whose writes stop at 2 kB."""
    out = tmp_path / "lim.json"
    export(ctx, bank, "json", out)  # an earlier export: the one to keep
    previous = out.read_bytes()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMBANK_")}
    env.update(MEMBANK_ACCOUNT=ctx.account, MEMBANK_BLOCK_MODEL_REQUESTS="1")
    limited = (
        "import resource; resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048)); "
        "from memory.cli import run; run()"
    )
    done = subprocess.run(
        [
            *(sys.executable, "-c", limited),
            *("export", "support", "--format", "json", "--out", str(out)),
            *("--data", str(ctx.store.uri)),
        ],
        capture_output=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 1, err
    assert err.startswith("membank: failed: ") and err.count("\n") == 1, err
    assert "File too large" in err and "Traceback" not in err
    assert out.read_bytes() == previous
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".lim.json")] == []


def test_cli_export_rejects_empty_frames_and_stdout(
    ctx: Context,
    bank: Bank,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    cli: Cli,
) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "x.json"
    base = ["export", "support", "--format", "json", "--out", str(out)]
    for frame in (
        ["--since", "2026-11-21", "--until", "2026-11-20"],
        ["--since", "2026-11-21T00:00", "--until", "2026-11-21T00:00"],
        ["--since", "2999-01-01"],  # after now, with no --until: the frame runs to now
    ):
        assert cli([*base, *frame]) == 2
        assert "the time frame is empty" in capsys.readouterr().err
        assert cli([*base, *frame, "--estimate"]) == 2
    assert not out.exists()
    until = datetime(2026, 11, 20, tzinfo=UTC)
    empty = ExportFilters(since=until, until=until)
    with pytest.raises(InvalidInput, match="empty"):
        export(ctx, bank, "json", out, empty)
    with pytest.raises(InvalidInput, match="empty"):
        estimate(ctx, bank, "json", empty)
    assert cli(["export", "support", "--format", "json", "--out", "-"]) == 2
    assert "stdout" in capsys.readouterr().err
    assert list(tmp_path.glob("-")) == []


def test_cli_until_a_date_exports_that_whole_day(
    bank: Bank,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    cli: Cli,
) -> None:
    out = tmp_path / "until.json"
    # the clock is 2026-11-01 12:00; entries 5, 3, 2 and 1 days old (10-31 12:00 the newest)
    base = ["export", "support", "--format", "json", "--out", str(out)]
    assert cli([*base, "--until", "2026-10-31"]) == 0
    assert len(exported_entries(out)) == 4
    assert cli([*base, "--until", "2026-10-31T00:00"]) == 0
    assert len(exported_entries(out)) == 3
    capsys.readouterr()


def test_import_of_a_line_cut_midway_names_line_and_column(
    ctx: Context, bank: Bank, tmp_path: Path
) -> None:
    out = tmp_path / "bank.json"
    export(ctx, bank, "json", out)
    lines = out.read_text("utf-8").splitlines(keepends=True)
    cut = tmp_path / "cut.json"
    cut.write_text("".join(lines[:3]) + lines[3][:40], "utf-8")
    with pytest.raises(
        InvalidInput, match=r"cut\.json line 4: .* \(column \d+\): the file is damaged"
    ):
        import_json(ctx, cut, name="cut")
    assert [b.name for b in banks.list_banks(ctx)] == ["support"]


def test_out_in_a_missing_folder_is_bad_input_and_creates_nothing(
    ctx: Context, bank: Bank, tmp_path: Path
) -> None:
    out = tmp_path / "no" / "such" / "dump.json"
    with pytest.raises(InvalidInput, match=r"no such folder .*no/such: create it first"):
        export(ctx, bank, "json", out)
    assert not (tmp_path / "no").exists()
