"""CSV rows for ingest: a header of entry fields, one entry per row, bad rows reported with
their line number (a quoted cell may span lines)."""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from memory.transfer.ingest.sources import RowError, SourceRow, file_error
from memory.validation import is_utf8

CSV_FIELD_LIMIT = 16 * 1024 * 1024


def csv_rows(path: Path) -> Iterator[SourceRow]:
    source = str(path)
    csv.field_size_limit(min(CSV_FIELD_LIMIT, sys.maxsize))
    try:
        handle = path.open(encoding="utf-8-sig", errors="surrogateescape", newline="")
    except OSError as exc:
        yield file_error(source, "csv", exc)
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
