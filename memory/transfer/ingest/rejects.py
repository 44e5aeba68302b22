"""The rejects file of an ingest: each unusable row as one JSON line, with where and why."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import IO

from memory.errors import InvalidInput, StorageError
from memory.transfer.ingest.sources import (
    REJECTS_SUFFIX,
    InputFile,
    RowError,
    SourceRow,
    skipped_in_folder,
)

REJECT_FIELDS = ("source", "line", "row", "code", "reason", "raw")
"""The fields of one rejects record, in order."""


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
