"""Ingest of a row whose id is already stored: rejected as `id_conflict` when its key or
content differs, replaced for good with `on_conflict="update"`, skipped when identical."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory import banks, entries, search
from memory.cli import main
from memory.context import Context
from memory.errors import InvalidInput
from memory.models import Bank, BankCreate, SearchQuery
from memory.transfer.ingest import ingest

MARKER = "qxoldversion5521"
"""A word only the stored (old) version of the entry holds, to look for on disk."""


@pytest.fixture
def conv(ctx: Context) -> Bank:
    """An empty conversation bank."""
    return banks.create(ctx, BankCreate(name="support", type="conversation"))


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    """Write `rows` as JSON lines to `path`; returns the path."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def rejects_of(path: Path) -> list[dict[str, object]]:
    """Return the rejected rows recorded next to `path`, in order."""
    rejects = path.with_name(path.name + ".rejects.jsonl")
    return [json.loads(line) for line in rejects.read_text("utf-8").splitlines()]


def files_containing(root: Path, needle: str) -> list[Path]:
    """Return the files under `root` whose bytes hold `needle`."""
    data = needle.encode()
    return [p for p in root.rglob("*") if p.is_file() and data in p.read_bytes()]


OLD = [
    {"id": "src-1", "key": "c1", "speaker": "ann", "content": f"my card is {MARKER}"},
    {"id": "src-2", "key": "c1", "speaker": "bob", "content": "noted"},
]


@pytest.fixture
def stored(ctx: Context, conv: Bank, tmp_path: Path) -> Path:
    """Ingest OLD into the bank (entry `src-1` holds MARKER); returns the file it came from."""
    source = write_jsonl(tmp_path / "old.jsonl", OLD)
    assert ingest(ctx, conv, [source]).stored == 2
    return source


def test_a_stored_id_with_other_content_or_key_is_rejected_naming_the_stored_entry(
    ctx: Context, conv: Bank, stored: Path, tmp_path: Path
) -> None:
    rows = [
        {**OLD[0], "content": "my card is 4242"},
        {**OLD[1], "key": "c2"},
        {"id": "src-3", "key": "c1", "speaker": "ann", "content": "a new row"},
    ]
    source = write_jsonl(tmp_path / "new.jsonl", rows)

    report = ingest(ctx, conv, [source])

    assert (report.stored, report.updated, report.duplicates, report.rejected) == (1, 0, 0, 2)
    first, second = rejects_of(source)
    assert (first["line"], first["code"], second["line"], second["code"]) == (
        1,
        "id_conflict",
        2,
        "id_conflict",
    )
    assert first["reason"] == (
        "id 'src-1' is already stored as another entry: the stored entry 'src-1' has key "
        "'c1' and different content; give this row its own id, or ingest with "
        "--on-conflict update to replace the stored entry"
    )
    assert "has key 'c1' (this row has key 'c2') and the same content" in str(second["reason"])
    assert first["raw"] == json.dumps(rows[0])
    by_id = {e.id: e for e in entries.read(ctx, conv)}
    assert (by_id["src-1"].content, by_id["src-2"].key) == (OLD[0]["content"], "c1")
    assert by_id["src-3"].content == "a new row"


def test_on_conflict_update_replaces_the_entry_and_deletes_the_old_text_for_good(
    ctx: Context, conv: Bank, stored: Path, tmp_path: Path
) -> None:
    db = Path(ctx.store.uri)
    assert files_containing(db, MARKER)  # positive control: the old text is on disk
    rows = [
        {**OLD[0], "content": "my card was replaced", "key": "c9"},
        OLD[1],
        {"id": "src-3", "key": "c1", "speaker": "ann", "content": "a new row"},
    ]
    source = write_jsonl(tmp_path / "new.jsonl", rows)

    report = ingest(ctx, conv, [source], on_conflict="update", batch_size=2)

    assert (report.stored, report.updated, report.duplicates, report.rejected) == (1, 1, 1, 0)
    assert not source.with_name("new.jsonl.rejects.jsonl").exists()
    by_id = {e.id: e for e in entries.read(ctx, conv)}
    assert sorted(by_id) == ["src-1", "src-2", "src-3"]
    assert (by_id["src-1"].key, by_id["src-1"].content) == ("c9", "my card was replaced")
    assert [e.id for e in entries.load(ctx, conv, "c9")] == ["src-1"]
    assert MARKER not in {e.content for e in entries.load(ctx, conv, "c1")}
    assert search.search(ctx, conv, SearchQuery(text=MARKER, method="fts")) == []
    assert files_containing(db, MARKER) == []
    assert ctx.store.version_count(conv.id) == 1


@pytest.mark.parametrize("on_conflict", ["reject", "update"])
def test_an_identical_reingest_adds_replaces_and_deletes_nothing(
    ctx: Context, conv: Bank, stored: Path, on_conflict: str
) -> None:
    before = entries.read(ctx, conv)
    versions = ctx.store.version_count(conv.id)

    report = ingest(ctx, conv, [stored], on_conflict=on_conflict)  # type: ignore[arg-type]

    assert (report.stored, report.updated, report.duplicates, report.rejected) == (0, 0, 2, 0)
    assert entries.read(ctx, conv) == before
    assert ctx.store.version_count(conv.id) == versions  # no delete, no write commit


def test_an_unknown_on_conflict_is_refused_before_anything_is_stored(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    source = write_jsonl(tmp_path / "rows.jsonl", OLD)
    with pytest.raises(InvalidInput, match="on_conflict must be reject or update, got 'merge'"):
        ingest(ctx, conv, [source], on_conflict="merge")  # type: ignore[arg-type]
    assert entries.read(ctx, conv) == []


def test_cli_on_conflict(
    ctx: Context,
    conv: Bank,
    stored: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = write_jsonl(tmp_path / "new.jsonl", [{**OLD[0], "content": "changed"}])

    assert main(["ingest", str(source), "--bank", "support"], context=lambda data: ctx) == 4
    assert "0 stored, 0 already present, 1 rejected" in capsys.readouterr().out
    assert [r["code"] for r in rejects_of(source)] == ["id_conflict"]

    update = ["ingest", str(source), "--bank", "support", "--on-conflict", "update"]
    assert main(update, context=lambda data: ctx) == 0
    out = capsys.readouterr().out
    assert "0 stored, 1 updated, 0 already present, 0 rejected" in out
    assert entries.get_entry(ctx, conv, "src-1").content == "changed"

    with pytest.raises(SystemExit) as raised:
        main(["ingest", str(source), "--bank", "support", "--on-conflict", "merge"])
    assert raised.value.code == 2
    assert "--on-conflict" in capsys.readouterr().err


def test_the_ingest_flow_task_passes_on_conflict_through(
    ctx: Context, conv: Bank, stored: Path, tmp_path: Path
) -> None:
    from flows.ingest import ingest_files, report_notes
    from memory.ops.transfer import IngestRequest

    source = write_jsonl(tmp_path / "new.jsonl", [{**OLD[0], "content": "changed by a flow"}])
    request = IngestRequest(bank="support", paths=(str(source),), on_conflict="update")
    report = ingest_files.fn(ctx.store.uri, "acme", request)
    assert (report.updated, report.rejected) == (1, 0)
    assert entries.get_entry(ctx, conv, "src-1").content == "changed by a flow"
    assert any("Updated: 1 stored entries replaced" in n for n in report_notes(report))


def test_on_conflict_update_keeps_changes_to_every_field_of_an_unchanged_text(
    ctx: Context, conv: Bank, tmp_path: Path
) -> None:
    row: dict[str, object] = {"id": "e1", "key": "k", "speaker": "ann", "content": "same text"}
    ingest(ctx, conv, [write_jsonl(tmp_path / "old.jsonl", [row])])
    changed = {
        **row,
        "speaker": "bob",
        "tags": ["billing"],
        "created_at": "2026-10-01T09:00:00+00:00",
        "role": "user",
        "metadata": {"ticket": 7},
    }

    report = ingest(
        ctx, conv, [write_jsonl(tmp_path / "new.jsonl", [changed])], on_conflict="update"
    )

    assert (report.updated, report.duplicates) == (1, 0)
    [stored] = entries.read(ctx, conv)
    assert (stored.speaker, stored.tags, stored.role, stored.metadata) == (
        "bob",
        ["billing"],
        "user",
        {"ticket": 7},
    )
    assert stored.created_at.isoformat() == "2026-10-01T09:00:00+00:00"
    again = ingest(ctx, conv, [tmp_path / "new.jsonl"], on_conflict="update")
    assert (again.updated, again.duplicates) == (0, 1)
