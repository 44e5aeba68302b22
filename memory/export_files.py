"""Atomic output paths: write to a hidden temporary sibling, then rename into place.

A failed or interrupted export never leaves a partial file (or folder) at the target, and
an export that fails keeps the previous file at the target untouched.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from memory.errors import InvalidInput


def temp_sibling(path: Path, label: str = "tmp") -> Path:
    """Return a hidden, unique path next to `path` (same filesystem, so rename is atomic)."""
    return path.with_name(f".{path.name}.{label}-{uuid.uuid4().hex[:8]}")


@contextmanager
def atomic_file(path: Path) -> Iterator[Path]:
    """Yield a temporary path to write; rename it to `path` only if the block succeeds."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():
        raise InvalidInput(f"{path} is a folder: give a file path for --out")
    temp = temp_sibling(path)
    try:
        yield temp
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


@contextmanager
def atomic_dir(path: Path, replaceable: Callable[[Path], bool]) -> Iterator[Path]:
    """Yield an empty temporary folder to fill; swap it in at `path` only if the block succeeds.

    An existing `path` is replaced only when `replaceable(path)` says it is an earlier
    export, so a mistyped --out never deletes someone's folder.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and not (path.is_dir() and replaceable(path)):
        raise InvalidInput(
            f"{path} exists and is not an earlier membank Parquet export: choose a new --out"
        )
    temp = temp_sibling(path)
    old = temp_sibling(path, "old")
    try:
        temp.mkdir()
        yield temp
        if path.exists():
            os.replace(path, old)
        os.replace(temp, path)
    finally:
        shutil.rmtree(temp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
