"""Read what a Lance table's files hold, decoded with Lance's file reader (deletion checks).

On big tables Lance 2.2 compresses strings, so a byte search of the files finds nothing
either way; these helpers decode the data files and the key and full-text index files
instead. They read Lance's on-disk layout on purpose (`data/`, `_indices/<uuid>/`): they
check the engine, the store never relies on them.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from lance.file import LanceFileReader


@dataclass(frozen=True)
class FtsSegment:
    """One full-text index segment as stored: its documents and its vocabulary."""

    row_ids: frozenset[int]
    """Row addresses of the documents the segment indexes."""
    postings: tuple[int, ...]
    """Per token of the vocabulary, how many documents hold it."""


def _read(path: Path, columns: list[str] | None = None) -> dict[str, list[object]]:
    table = LanceFileReader(str(path), columns=columns).read_all().to_table()
    return {name: table.column(name).to_pylist() for name in table.column_names}


def data_values(table_dir: Path, column: str) -> list[object]:
    """Return every value of `column` in the table's data files, referenced or not."""
    values: list[object] = []
    for path in sorted((table_dir / "data").glob("*.lance")):
        reader = LanceFileReader(str(path))
        names = [field.name for field in reader.metadata().schema]
        if column in names:
            values += _read(path, [column])[column]
    return values


def btree_keys(table_dir: Path) -> list[str]:
    """Return every key stored in the table's BTree index segments."""
    keys: list[str] = []
    for path in sorted((table_dir / "_indices").glob("*/page_data.lance")):
        keys += [str(v) for v in _read(path, ["values"])["values"]]
    return keys


def fts_segments(table_dir: Path, uuids: Collection[str] | None = None) -> list[FtsSegment]:
    """Return the full-text index segments on disk (only those named in `uuids` if given),
    their documents and token posting counts."""
    segments = []
    for folder in sorted(p for p in (table_dir / "_indices").iterdir() if p.is_dir()):
        if uuids is not None and folder.name not in uuids:
            continue
        docs = sorted(folder.glob("part_*_docs.lance"))
        if not docs:
            continue
        row_ids = {int(r) for path in docs for r in _read(path, ["_rowid"])["_rowid"]}  # type: ignore[call-overload]
        postings = [
            int(n)  # type: ignore[call-overload]
            for path in sorted(folder.glob("part_*_invert.lance"))
            for n in _read(path, ["_length"])["_length"]
        ]
        segments.append(FtsSegment(frozenset(row_ids), tuple(postings)))
    return segments


def vocabulary_size(table_dir: Path, uuids: Collection[str]) -> int:
    """Return how many tokens the segments `uuids` hold in all (counted once per segment)."""
    return sum(len(segment.postings) for segment in fts_segments(table_dir, uuids))
