"""Deletions whose prune is due: the "prune due" mark and the audit of what a table still holds.

A deletion marks its table before its delete commit (`mark`), and the finishing pass clears
the mark once the table is final (`memory.purge.finish`). A process killed between a delete
and its prune, or a full disk during the prune, leaves the mark behind, and `marked` sees it
from the latest manifest alone (cheap enough for every write). `audit` reads every kept
manifest: an old version holds deleted data when it has deletion files of its own or when
the live row count drops between it and the latest version (entries tables change by
appends, deletes, compaction and index commits only; the last two keep every live row).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memory.store.indices import SEGMENTED
from memory.store.segments import stale_segments

PRUNE_DUE = "membank.prune_due"
"""Config key of an entries table whose last deletion may not be pruned yet; its value is
when the deletion was marked (ISO 8601; "1" in tables marked before the time was kept)."""


@dataclass(frozen=True)
class DeletionAudit:
    """What deleted data a bank's table still holds (`LanceStore.deletion_audit`)."""

    deleted_rows: int
    """Rows deleted but still in the latest version's data files (deletion files)."""
    stale_versions: int
    """Kept older versions that hold a row the latest version no longer has."""
    old_versions: int
    """Kept older versions, clean ones included (writes keep them for a while)."""
    marked: bool
    """A deletion marked its prune as due and no finishing pass has cleared the mark yet."""
    stale_segments: int = 0
    """Index segments that still list a fragment a delete removed whole (its keys and words)."""
    marked_at: datetime | None = None
    """When the marked deletion was marked (None: no mark, or one from before times were kept)."""

    @property
    def pending_since(self) -> datetime | None:
        """When the deletion that is not final yet began (None when final, or not known)."""
        return None if self.final else self.marked_at

    @property
    def final(self) -> bool:
        """True when no deleted row can be read back from the table's files."""
        return self.deleted_rows == 0 and self.stale_versions == 0 and self.stale_segments == 0


def mark(dataset: Any, *, pending: bool) -> None:
    """Set or clear the "prune due" mark in the table's config (one small commit)."""
    if pending:
        dataset.update_config({PRUNE_DUE: datetime.now(UTC).isoformat()})
    elif PRUNE_DUE in dataset.config():
        dataset.delete_config_keys([PRUNE_DUE])


def marked(dataset: Any) -> bool:
    """Return True when the latest version is marked or keeps deleted rows in its files."""
    if PRUNE_DUE in dataset.config():
        return True
    return any(fragment.deletion_file() is not None for fragment in dataset.get_fragments())


def audit(dataset: Any) -> DeletionAudit:
    """Return what deleted data `dataset`'s files still hold, from every kept manifest."""
    versions = sorted(dataset.versions(), key=lambda v: v["version"])
    rows = [_meta(v, "total_rows") for v in versions]
    stale, dropped = 0, False
    for index in range(len(versions) - 2, -1, -1):
        later, here = rows[index + 1], rows[index]
        dropped = dropped or later is None or here is None or later < here
        if dropped or _meta(versions[index], "total_deletion_file_rows") != 0:
            stale += 1
    deleted = _meta(versions[-1], "total_deletion_file_rows") if versions else 0
    if deleted is None:  # not recorded: at least one row per fragment with deletions
        deleted = sum(f.deletion_file() is not None for f in dataset.get_fragments())
    segments = sum(stale_segments(dataset, name) for name in SEGMENTED)
    return DeletionAudit(
        deleted_rows=deleted,
        stale_versions=stale,
        old_versions=max(len(versions) - 1, 0),
        marked=PRUNE_DUE in dataset.config(),
        stale_segments=segments,
        marked_at=marked_at(dataset),
    )


def marked_at(dataset: Any) -> datetime | None:
    """Return when the table's deletion was marked (None: unmarked, or no time recorded)."""
    value = dataset.config().get(PRUNE_DUE)
    try:
        return None if value is None else datetime.fromisoformat(value)
    except ValueError:  # "1": marked before the time was kept
        return None


def _meta(version: dict[str, Any], name: str) -> int | None:
    """Return a count from a version's manifest summary (None when Lance did not record it)."""
    value = version.get("metadata", {}).get(name)
    return None if value is None else int(value)


def combined(entries: DeletionAudit, side: DeletionAudit) -> DeletionAudit:
    """Return the audit of a bank's entries table with its carried-text table's added (the
    mark lives on the entries table)."""
    return DeletionAudit(
        deleted_rows=entries.deleted_rows + side.deleted_rows,
        stale_versions=entries.stale_versions + side.stale_versions,
        old_versions=entries.old_versions,
        marked=entries.marked,
        stale_segments=entries.stale_segments + side.stale_segments,
        marked_at=entries.marked_at,
    )
