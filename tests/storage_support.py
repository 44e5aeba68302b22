"""Storage the tests cannot make with file modes alone: a read-only view of a folder."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def read_only_view(folder: Path) -> Iterator[Path]:
    """Yield `folder` bind-mounted read-only at `<folder>-ro`; the original stays writable.

    Tests run as root, which ignores file modes (a chmod'ed folder stays writable), so a
    read-only mount is the only way to make storage read-only for this process: every
    write there fails with EROFS, root or not. Skips where mounting is not allowed.
    """
    view = folder.with_name(f"{folder.name}-ro")
    view.mkdir()
    mounted = subprocess.run(
        ["mount", "--bind", "-o", "ro", str(folder), str(view)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot bind-mount read-only here: {mounted.stderr.strip()}")
    try:
        assert os.statvfs(view).f_flag & os.ST_RDONLY, "the bind mount is writable"
        yield view
    finally:
        subprocess.run(["umount", str(view)], check=True)
