"""Find ingest files and stream their rows (JSONL, Parquet; CSV in `csv_rows`).

Readers never raise for a bad row: a row that cannot be read (bad JSON, bad encoding, a
CSV row with extra cells, an unreadable file) comes back with an error set, so the caller
can quarantine it and carry on.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from memory.errors import InvalidInput

Format = Literal["jsonl", "csv", "parquet"]

SUFFIXES: dict[str, Format] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
}
REJECTS_SUFFIX = ".rejects.jsonl"
"""Default rejects file: next to the input, named `<input>.rejects.jsonl` (never read as input)."""
PARQUET_BATCH = 2_048


class RowError(Exception):
    """Why a row could not be used: a stable `code` and a readable `reason`."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason


@dataclass(frozen=True)
class SourceRow:
    """One row read from a file, or the error that kept it from being read."""

    source: str
    format: Format
    ordinal: int
    """Position in the file: the line (JSONL, CSV) or row (Parquet) number, from 1."""
    line: int | None
    row: int | None
    record: dict[str, Any] | None
    raw: str
    error: RowError | None = None


@dataclass(frozen=True)
class InputFile:
    """A file to ingest and its format."""

    path: Path
    format: Format


def discover(paths: Sequence[str | Path]) -> list[InputFile]:
    """Return the files to ingest: given files as is, folders searched recursively (sorted).

    Raises:
        InvalidInput: a path is missing, a file has an unsupported suffix, or nothing is found.
    """
    found: list[InputFile] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            for child in sorted(p for p in path.rglob("*") if p.is_file()):
                fmt = file_format(child)
                if fmt is not None and not _hidden(child.relative_to(path)):
                    found.append(InputFile(child, fmt))
        elif path.is_file():
            fmt = file_format(path)
            if fmt is None:
                raise InvalidInput(
                    f"{path}: unsupported file type; use .jsonl, .ndjson, .csv or .parquet"
                )
            found.append(InputFile(path, fmt))
        else:
            where = "" if path.is_absolute() else f" (looked up in {Path.cwd()})"
            raise InvalidInput(f"{path}: no such file or folder{where}")
    if not found:
        raise InvalidInput("no .jsonl, .ndjson, .csv or .parquet files found in the given paths")
    return found


def file_format(path: Path) -> Format | None:
    """Return the format of `path` from its suffix; None for other files and rejects files."""
    if path.name.endswith(REJECTS_SUFFIX):
        return None
    return SUFFIXES.get(path.suffix.lower())


def skipped_in_folder(folder: Path, path: Path) -> bool:
    """Return whether ingesting `folder` skips the file at `path` (a path inside it)."""
    return file_format(path) is None or _hidden(path.relative_to(folder))


def _hidden(relative: Path) -> bool:
    return any(part.startswith((".", "_")) for part in relative.parts)


def read_rows(item: InputFile) -> Iterator[SourceRow]:
    """Yield every row of a file; an unreadable file yields one row carrying the error."""
    if item.format == "csv":
        from memory.transfer.ingest.csv_rows import csv_rows

        yield from csv_rows(item.path)
        return
    reader = {"jsonl": _jsonl_rows, "parquet": _parquet_rows}[item.format]
    yield from reader(item.path)


def count_rows(files: Sequence[InputFile]) -> int | None:
    """Return how many rows the files hold, for a progress bar's total and time left; None
    when one cannot be counted without reading it as ingest will (an unreadable file).

    JSONL counts its non-blank lines and Parquet its footer; CSV is read once by the csv
    module (its records may span lines), about a tenth of what ingesting it costs.
    """
    total = 0
    for item in files:
        try:
            total += _count(item)
        except (OSError, ValueError, csv.Error):
            return None
    return total


def _count(item: InputFile) -> int:
    if item.format == "parquet":
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(item.path).metadata.num_rows)
    if item.format == "csv":
        from memory.transfer.ingest.csv_rows import CSV_FIELD_LIMIT

        csv.field_size_limit(min(CSV_FIELD_LIMIT, sys.maxsize))
        with item.path.open(encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
            return max(sum(1 for record in csv.reader(handle) if record) - 1, 0)
    with item.path.open("rb") as handle:
        return sum(1 for line in handle if line.strip())


def _jsonl_rows(path: Path) -> Iterator[SourceRow]:
    source = str(path)
    try:
        handle = path.open("rb")
    except OSError as exc:
        yield file_error(source, "jsonl", exc)
        return
    with handle:
        for number, data in enumerate(handle, start=1):
            if number == 1 and data.startswith(b"\xef\xbb\xbf"):
                data = data[3:]
            data = data.rstrip(b"\r\n")
            if not data.strip():
                continue
            yield _jsonl_row(source, number, data)


def _jsonl_row(source: str, number: int, data: bytes) -> SourceRow:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raw = data.decode("utf-8", "backslashreplace")
        error = RowError("bad_encoding", f"line is not valid UTF-8 (byte {exc.start})")
        return SourceRow(source, "jsonl", number, number, None, None, raw, error)
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        error = RowError("bad_json", f"not valid JSON: {exc.msg} at column {exc.colno}")
        return SourceRow(source, "jsonl", number, number, None, None, text, error)
    if not isinstance(value, dict):
        error = RowError("bad_json", f"a line must be a JSON object, got {type(value).__name__}")
        return SourceRow(source, "jsonl", number, number, None, None, text, error)
    return SourceRow(source, "jsonl", number, number, None, value, text)


def _parquet_rows(path: Path) -> Iterator[SourceRow]:
    import pyarrow.parquet as pq

    source = str(path)
    number = 0
    try:
        parquet = pq.ParquetFile(path)
        for batch in parquet.iter_batches(batch_size=PARQUET_BATCH):
            for record in batch.to_pylist():
                number += 1
                values = {k: v for k, v in record.items() if v is not None}
                raw = json.dumps(values, ensure_ascii=False, default=str)
                yield SourceRow(source, "parquet", number, None, number, values, raw)
    except (OSError, ValueError) as exc:
        error = RowError("unreadable_file", f"cannot read Parquet after row {number}: {exc}")
        yield SourceRow(source, "parquet", number + 1, None, None, None, "", error)


def file_error(source: str, fmt: Format, exc: OSError) -> SourceRow:
    error = RowError("unreadable_file", f"cannot open: {exc}")
    return SourceRow(source, fmt, 0, None, None, None, "", error)
