"""The JSON export: a header line, then one entry per line, so an import can stream it back
(docs/export-schema.md)."""

from __future__ import annotations

import json
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from memory.models import Bank
from memory.transfer.export.parquet import SCAN_COLUMNS
from memory.transfer.export.records import (
    JSON_FORMAT,
    ExportFilters,
    Progress,
    entry_record,
    json_header,
)
from memory.transfer.export.scan import scan

if TYPE_CHECKING:
    from memory.context import Context

HEADER_LIMIT = 1024 * 1024
"""Bytes of a JSON export's first line read to recognise it (its header: format, bank)."""


def write_json(
    ctx: Context,
    bank: Bank,
    path: Path,
    flt: ExportFilters,
    progress: Progress | None,
    size: int,
) -> int:
    count = 0
    batches = scan(ctx, bank, flt, SCAN_COLUMNS, size=size)
    with path.open("w", encoding="utf-8") as out, closing(batches):
        header = json.dumps(json_header(ctx, bank, flt), ensure_ascii=False)
        out.write(header[:-1] + ",\n" + '"entries": [\n')
        for batch in batches:
            lines = [
                json.dumps(entry_record(r), ensure_ascii=False, allow_nan=False)
                for r in batch.to_pylist()
            ]
            if not lines:
                continue
            out.write((",\n" if count else "") + ",\n".join(lines))
            count += len(lines)
            if progress:
                progress(len(lines))
        out.write(f'\n],\n"entry_count": {count}\n}}\n')
    return count


def is_json_export(path: Path) -> bool:
    """Return True when `path` starts as `export` writes a JSON export: a header line with
    `"format": "membank.export"`, then the line opening the entries list."""
    try:
        with path.open("rb") as handle:
            first, second = handle.readline(HEADER_LIMIT), handle.readline(64)
        header = json.loads(first.decode("utf-8").rstrip().removesuffix(",") + "}")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    return (
        isinstance(header, dict)
        and header.get("format") == JSON_FORMAT
        and second.strip() == b'"entries": ['
    )


def json_overhead() -> int:
    template = {
        "id": "0" * 32,
        "key": "",
        "kind": "",
        "speaker": "",
        "role": "",
        "memory_type": "",
        "content": "",
        "tags": [],
        "metadata": "",
        "attachments": "",
        "summary_of": [],
        "created_at": datetime(2026, 1, 1, tzinfo=UTC).isoformat(),
        "token_count": 100,
    }
    return len(json.dumps(template, ensure_ascii=False)) + 2
