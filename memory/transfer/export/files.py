"""Atomic output paths: write to a hidden temporary sibling, then rename into place.

A failed or interrupted export never leaves a partial file (or folder) at the target, and
an export that fails keeps the previous file at the target untouched. An existing target is
replaced only when it is an earlier export of the same kind (or empty), so a mistyped --out
never overwrites someone's file. A target that cannot be written (a file where a folder is
needed, no permission) is the caller's mistake and is found before any data is read; a
write that fails midway (disk full, file too large) is a storage failure.
"""

from __future__ import annotations

import errno
import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from memory.errors import InvalidInput, MembankError, StorageError

_DEVICE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})
"""OS errors of the disk itself, not of the path the caller chose."""


def temp_sibling(path: Path, label: str = "tmp") -> Path:
    """Return a hidden, unique path next to `path` (same filesystem, so rename is atomic)."""
    return path.with_name(f".{path.name}.{label}-{uuid.uuid4().hex[:8]}")


@contextmanager
def atomic_file(path: Path, replaceable: Callable[[Path], bool], kind: str) -> Iterator[Path]:
    """Yield a temporary path to write; rename it to `path` only if the block succeeds.

    An existing file at `path` is replaced only when it is empty or `replaceable(path)` says
    it is an earlier export (`kind` names it in the refusal); nothing is written otherwise.

    Raises:
        InvalidInput: `path` is a folder or a file that is not an earlier export, or no file
            can be created next to it.
        StorageError: writing or renaming failed (disk full, file too large).
    """
    _make_parent(path)
    if path.is_dir():
        raise InvalidInput(f"{path} is a folder: give a file path for --out")
    if _is_file(path) and path.stat().st_size and not replaceable(path):
        raise InvalidInput(
            f"{path} exists and is not an earlier membank {kind} export: choose a new --out "
            "(or delete the file)"
        )
    temp = temp_sibling(path)
    try:
        temp.touch(exist_ok=False)
    except OSError as exc:
        raise _path_error(exc, f"cannot create a file in {path.parent}") from exc
    try:
        yield temp
        os.replace(temp, path)
    except OSError as exc:
        raise _write_error(exc, path) from exc
    finally:
        temp.unlink(missing_ok=True)


@contextmanager
def atomic_dir(path: Path, replaceable: Callable[[Path], bool]) -> Iterator[Path]:
    """Yield an empty temporary folder to fill; swap it in at `path` only if the block succeeds.

    An existing `path` is replaced only when `replaceable(path)` says it is an earlier
    export, so a mistyped --out never deletes someone's folder.

    Raises:
        InvalidInput: `path` is not replaceable, or no folder can be created next to it.
        StorageError: writing or renaming failed (disk full, file too large).
    """
    _make_parent(path)
    if path.exists() and not (path.is_dir() and replaceable(path)):
        raise InvalidInput(
            f"{path} exists and is not an earlier membank Parquet export: choose a new --out"
        )
    temp = temp_sibling(path)
    old = temp_sibling(path, "old")
    try:
        temp.mkdir()
    except OSError as exc:
        raise _path_error(exc, f"cannot create a folder in {path.parent}") from exc
    try:
        yield temp
        if path.exists():
            os.replace(path, old)
        os.replace(temp, path)
    except OSError as exc:
        raise _write_error(exc, path) from exc
    finally:
        shutil.rmtree(temp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def _make_parent(path: Path) -> None:
    """Check the folder that will hold `path` exists; InvalidInput when it does not (no
    folder is made: a mistyped path must not leave new folders behind) or cannot hold one."""
    blocker = next((folder for folder in path.parents if _is_file(folder)), None)
    if blocker is None and not path.parent.exists():
        raise InvalidInput(
            f"no such folder {path.parent}: create it first, or choose another --out"
        )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = next((folder for folder in path.parents if _is_file(folder)), None)
        if blocker is not None:
            raise InvalidInput(f"{blocker} is a file, not a folder: choose another --out") from exc
        raise _path_error(exc, f"cannot create the folder {path.parent}") from exc


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:
        return False


def _path_error(exc: OSError, what: str) -> MembankError:
    """Return the error for a target that cannot be created: the caller's path, or the disk."""
    reason = exc.strerror or str(exc)
    if exc.errno in _DEVICE_ERRORS:
        return StorageError(f"{what}: {reason}")
    return InvalidInput(f"{what} ({reason}): choose a folder you can write to for --out")


def _write_error(exc: OSError, path: Path) -> StorageError:
    """Return the error for a write that failed midway; the previous file is untouched."""
    return StorageError(f"writing {path} failed ({exc}); any previous file there is kept")
