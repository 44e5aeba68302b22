"""Paths given to a deployment's run are read in the flow run's folder, not the caller's."""

from __future__ import annotations

from pathlib import Path


def note_relative(paths: list[str | None]) -> None:
    """Print (into the run's log) which paths are relative and the folder they resolve in.

    A run started by a worker begins in the project folder (`MEMBANK_PROJECT_DIR`), so
    `in/x.jsonl` from another folder is "no such file", and a relative `out` lands there.
    """
    relative = [p for p in paths if p and "://" not in p and not Path(p).is_absolute()]
    if relative:
        print(
            f"relative path(s) {', '.join(relative)} resolve in {Path.cwd()}, the flow run's "
            "folder: pass absolute paths to name files elsewhere"
        )
