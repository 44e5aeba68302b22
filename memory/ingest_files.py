"""Find ingest files and stream their rows: JSONL, CSV and Parquet, one row at a time.

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
"""Default rejects file: next to the input, named `<input>.rejects.jsonl`."""
PARQUET_BATCH = 2_048
CSV_FIELD_LIMIT = 16 * 1024 * 1024


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
            raise InvalidInput(f"{path}: no such file or folder")
    if not found:
        raise InvalidInput("no .jsonl, .ndjson, .csv or .parquet files found in the given paths")
    return found


def file_format(path: Path) -> Format | None:
    """Return the format of `path` from its suffix; None for other files and rejects files."""
    if path.name.endswith(REJECTS_SUFFIX):
        return None
    return SUFFIXES.get(path.suffix.lower())


def _hidden(relative: Path) -> bool:
    return any(part.startswith((".", "_")) for part in relative.parts)


def read_rows(item: InputFile) -> Iterator[SourceRow]:
    """Yield every row of a file; an unreadable file yields one row carrying the error."""
    reader = {"jsonl": _jsonl_rows, "csv": _csv_rows, "parquet": _parquet_rows}[item.format]
    yield from reader(item.path)


def _jsonl_rows(path: Path) -> Iterator[SourceRow]:
    source = str(path)
    try:
        handle = path.open("rb")
    except OSError as exc:
        yield _file_error(source, "jsonl", exc)
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


def _csv_rows(path: Path) -> Iterator[SourceRow]:
    source = str(path)
    csv.field_size_limit(min(CSV_FIELD_LIMIT, sys.maxsize))
    try:
        handle = path.open(encoding="utf-8-sig", errors="surrogateescape", newline="")
    except OSError as exc:
        yield _file_error(source, "csv", exc)
        return
    with handle:
        reader = csv.reader(handle)
        try:
            header = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield SourceRow(
                source, "csv", 1, 1, None, None, "", RowError("bad_csv", f"header: {exc}")
            )
            return
        yield from _csv_body(source, reader, header)


def _csv_body(source: str, reader: Any, header: list[str]) -> Iterator[SourceRow]:
    bad_header = [name for name in header if not _is_utf8(name)]
    last_line = reader.line_num
    data_row = 0
    while True:
        start = last_line + 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            data_row += 1
            yield SourceRow(
                source, "csv", start, start, data_row, None, "", RowError("bad_csv", str(exc))
            )
            if reader.line_num == last_line:
                return
            last_line = reader.line_num
            continue
        last_line = reader.line_num
        if not cells or all(not c.strip() for c in cells):
            continue
        data_row += 1
        yield _csv_row(source, start, data_row, header, cells, bad_header)


def _csv_row(
    source: str, line: int, row: int, header: list[str], cells: list[str], bad_header: list[str]
) -> SourceRow:
    raw = ",".join(cells).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if bad_header or not all(_is_utf8(c) for c in cells):
        error = RowError("bad_encoding", "row is not valid UTF-8 text")
        return SourceRow(source, "csv", line, line, row, None, raw, error)
    if len(cells) > len(header):
        error = RowError(
            "unknown_column",
            f"row has {len(cells)} cells but the header names {len(header)} columns",
        )
        return SourceRow(source, "csv", line, line, row, None, raw, error)
    record = {name: value for name, value in zip(header, cells, strict=False) if value != ""}
    for name, value in zip(header, cells, strict=False):
        if value == "" and name in ("key", "content"):
            record[name] = value
    return SourceRow(source, "csv", line, line, row, record, raw)


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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


def _file_error(source: str, fmt: Format, exc: OSError) -> SourceRow:
    error = RowError("unreadable_file", f"cannot open: {exc}")
    return SourceRow(source, fmt, 0, None, None, None, "", error)
