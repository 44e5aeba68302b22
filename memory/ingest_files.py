"""Find ingest files, stream their rows (JSONL, CSV, Parquet) and write the rejected ones.

Readers never raise for a bad row: a row that cannot be read (bad JSON, bad encoding, a
CSV row with extra cells, an unreadable file) comes back with an error set, so the caller
can quarantine it and carry on.
"""

from __future__ import annotations

import csv
import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from memory.errors import InvalidInput, StorageError
from memory.validation import is_utf8

Format = Literal["jsonl", "csv", "parquet"]

SUFFIXES: dict[str, Format] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
}
REJECTS_SUFFIX = ".rejects.jsonl"
"""Default rejects file: next to the input, named `<input>.rejects.jsonl`."""
REJECT_FIELDS = ("source", "line", "row", "code", "reason", "raw")
"""The fields of one rejects record, in order."""
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
        tap = _LineTap(handle)
        reader = csv.reader(tap)
        try:
            header = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield SourceRow(
                source, "csv", 1, 1, None, None, "", RowError("bad_csv", f"header: {exc}")
            )
            return
        problem = _header_problem(header, tap)
        if problem is not None:
            yield SourceRow(source, "csv", 1, 1, None, None, tap.text(), problem)
            return
        yield from _csv_body(source, reader, tap, header)


def _header_problem(header: list[str], tap: _LineTap) -> RowError | None:
    opened = _unterminated_quote_line(tap) if tap.exhausted else None
    if opened is not None:
        return RowError(
            "bad_csv",
            f"header: the quote opened on line {opened} is never closed, so the whole file "
            "was read as the header; close the quote",
        )
    twice = sorted({name for name in header if header.count(name) > 1})
    if twice:
        names = ", ".join(map(repr, twice))
        return RowError(
            "bad_csv",
            f"header: column {names} appears more than once, so the file was not read; "
            "name each column once",
        )
    return None


def _csv_body(source: str, reader: Any, tap: _LineTap, header: list[str]) -> Iterator[SourceRow]:
    bad_header = [name for name in header if not is_utf8(name)]
    last_line = reader.line_num
    data_row = 0
    while True:
        start = last_line + 1
        tap.lines.clear()
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
        opened = _unterminated_quote_line(tap) if tap.exhausted else None
        if opened is not None:
            data_row += 1
            error = RowError(
                "bad_csv",
                f"the quote opened on line {opened} is never closed, so lines {start}-"
                f"{last_line} (the rest of the file) were read as one row; close the quote",
            )
            yield SourceRow(source, "csv", start, start, data_row, None, tap.text(), error)
            return
        if not cells or all(not c.strip() for c in cells):
            continue
        data_row += 1
        yield _csv_row(source, start, data_row, header, cells, bad_header)


class _LineTap:
    """Feeds lines to the csv reader, keeping the current record's lines and noticing EOF."""

    def __init__(self, lines: Iterator[str] | IO[str]) -> None:
        self._source = iter(lines)
        self.lines: list[str] = []
        self.first = 1
        """Line number of `lines[0]`."""
        self.count = 0
        self.exhausted = False

    def __iter__(self) -> _LineTap:
        return self

    def __next__(self) -> str:
        try:
            line = next(self._source)
        except StopIteration:
            self.exhausted = True
            raise
        self.count += 1
        if not self.lines:
            self.first = self.count
        self.lines.append(line)
        return line

    def text(self) -> str:
        """Return the current record's text (undecodable bytes escaped)."""
        raw = "".join(self.lines).rstrip("\r\n")
        return raw.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _unterminated_quote_line(tap: _LineTap) -> int | None:
    """Return the line where the record's last quoted field opened, if it never closes.

    Follows the csv module's default dialect: a quote opens a field only at its start,
    and a doubled quote inside a quoted field is a literal quote.
    """
    state, opened = "start", None
    for number, line in enumerate(tap.lines, start=tap.first):
        for char in line:
            if state == "quoted":
                state = "quote_in_quoted" if char == '"' else "quoted"
            elif state == "quote_in_quoted" and char == '"':
                state = "quoted"
            elif char in ",\r\n":
                state = "start"
            elif state == "start" and char == '"':
                state, opened = "quoted", number
            else:
                state = "field"
    return opened if state == "quoted" else None


def _csv_row(
    source: str, line: int, row: int, header: list[str], cells: list[str], bad_header: list[str]
) -> SourceRow:
    raw = ",".join(cells).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if bad_header or not all(is_utf8(c) for c in cells):
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


def default_rejects_path(path: Path) -> Path:
    """Return the rejects file next to an input file."""
    return path.with_name(path.name + REJECTS_SUFFIX)


def check_rejects_path(
    target: Path, paths: Sequence[str | Path], files: Sequence[InputFile]
) -> None:
    """Refuse a rejects path that would destroy data or be read back as input.

    The path must not be an input, nor a file inside an input folder that folder ingestion
    would read (name it `*.rejects.jsonl`), nor a folder. An existing file is replaced only
    if it is a rejects file: named `*.rejects.jsonl`, empty, or starting with a rejects record.

    Raises:
        InvalidInput: the path is one of those; the message says how to fix it.
    """
    resolved = target.resolve()
    if target.is_dir():
        raise InvalidInput(f"rejects path {target} is a folder: give a file path")
    for item in files:
        if item.path.resolve() == resolved:
            raise InvalidInput(
                f"rejects path {target} is one of the inputs and would be overwritten: "
                f"choose another path, e.g. {default_rejects_path(target)}"
            )
    for given in paths:
        folder = Path(given).resolve()
        if (
            folder.is_dir()
            and resolved.is_relative_to(folder)
            and not skipped_in_folder(folder, resolved)
        ):
            raise InvalidInput(
                f"rejects path {target} is inside the input folder {given} and would be "
                f"ingested as data next time: name it *{REJECTS_SUFFIX} or put it elsewhere"
            )
    if target.exists() and not _is_rejects_file(target):
        raise InvalidInput(
            f"rejects path {target} is an existing file that is not a rejects file: choose a "
            f"new path (an existing file is replaced only if it is empty, named "
            f"*{REJECTS_SUFFIX} or holds rejected rows)"
        )


def _is_rejects_file(path: Path) -> bool:
    if path.name.endswith(REJECTS_SUFFIX):
        return True
    try:
        with path.open("rb") as handle:
            first = handle.readline(1024 * 1024)
    except OSError as exc:
        raise InvalidInput(f"rejects path {path}: cannot read it ({_why(exc)})") from None
    if not first:
        return True
    try:
        record = json.loads(first)
    except ValueError:
        complete = first.endswith(b"\n")
        return not complete and first.startswith(b'{"source": ')
    return isinstance(record, dict) and tuple(record) == REJECT_FIELDS


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


class RejectsWriter:
    """Writes rejected rows as JSON lines, to one given file or next to each input."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._stack = ExitStack()
        self._open: dict[Path, IO[str]] = {}
        self._written: set[Path] = set()
        self._made: list[Path] = []
        """Folders created for the one rejects file, deepest first."""

    def start(self, files: Sequence[InputFile]) -> None:
        """Remove the rejects of an earlier run, and open the one rejects file if given.

        Opening it before any row is read makes a bad path fail before anything is stored.

        Raises:
            InvalidInput: a rejects file cannot be created or an old one removed.
        """
        if self.path is None:
            self._clear_defaults(files)
            return
        blocker = next((p for p in self.path.parents if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            raise InvalidInput(
                f"cannot create the rejects file {self.path}: {blocker} is a file, not a "
                "folder; give a path in a writable folder"
            )
        self._made = [p for p in self.path.parents if not p.exists()]
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle = self.path.open("w", encoding="utf-8")
        except OSError as exc:
            self._remove_made()
            raise InvalidInput(
                f"cannot create the rejects file {self.path} ({_why(exc)}): give a path in a "
                "writable folder"
            ) from None
        self._open[self.path] = self._stack.enter_context(handle)

    def _clear_defaults(self, files: Sequence[InputFile]) -> None:
        for folder in sorted({f.path.parent for f in files}):
            if not os.access(folder, os.W_OK):
                raise InvalidInput(
                    f"cannot write rejects files in {folder} (not writable): pass a rejects "
                    "path in a writable folder"
                )
        for item in files:
            target = default_rejects_path(item.path)
            try:
                target.unlink(missing_ok=True)
            except OSError as exc:
                raise InvalidInput(
                    f"cannot replace the old rejects file {target} ({_why(exc)}): remove it "
                    "or pass another rejects path"
                ) from None

    def write(self, item: InputFile, row: SourceRow, error: RowError) -> Path:
        """Append one rejected row; returns the rejects file it went to.

        Raises:
            StorageError: the rejects file cannot be opened or written.
        """
        target = self.path or default_rejects_path(item.path)
        record = {
            "source": row.source,
            "line": row.line,
            "row": row.row,
            "code": error.code,
            "reason": error.reason,
            "raw": row.raw,
        }
        try:
            handle = self._open.get(target)
            if handle is None:
                handle = self._stack.enter_context(target.open("a", encoding="utf-8"))
                self._open[target] = handle
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
        except OSError as exc:
            raise StorageError(f"cannot write the rejects file {target}: {_why(exc)}") from None
        self._written.add(target)
        return target

    def _remove_made(self) -> None:
        for folder in self._made:
            try:
                folder.rmdir()
            except OSError:
                return

    def __enter__(self) -> RejectsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()
        if self.path is not None and self.path in self._open and self.path not in self._written:
            self.path.unlink(missing_ok=True)
            self._remove_made()
