"""Index segments of bounded size, so a rewrite rebuilds only the segments it touched.

LanceDB keeps each index as segments, each covering a set of fragments. A prune rewrites
the fragments holding deleted rows (new fragment ids, new row addresses) and drops those
whose rows are all deleted; the segments that covered them still hold the deleted rows'
words and keys. `rebuild` replaces exactly those segments with new ones built from the live
rows of the fragments left uncovered, grouped up to `SEGMENT_ROWS` rows, and commits the
swap in one transaction, then ends LanceDB's deferred remap. Untouched segments stay,
so a prune costs about the rows it touched, not the table (bench/RESULTS.md, "Retention").
Full-text scores do not change with the segmentation: BM25 statistics are table-wide.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import lance
from lance import LanceOperation
from lance.dataset import Index
from lance.file import LanceFileSession

from memory.store.indices import FTS_COLUMN, FTS_INDEX, FTS_PARAMS, KEY_INDEX, REMAP_PENDING

SEGMENT_ROWS = 131_072
"""Rows a rebuilt segment covers at most (a bigger fragment gets a segment of its own). A
prune rebuilds the segments of the fragments it rewrote, so this bounds its index work;
each segment costs a search about 0.4 ms."""
SMALL_SEGMENT_ROWS = SEGMENT_ROWS // 4
"""Segments under this many rows (one per write's delta) are merged by maintenance."""


@dataclass(frozen=True)
class IndexSpec:
    """One of the entries table's indices, as a segment build needs it."""

    name: str
    column: str
    index_type: str
    params: dict[str, Any] = field(default_factory=dict)


SPECS = (
    IndexSpec(KEY_INDEX, "key", "BTREE"),
    IndexSpec(FTS_INDEX, FTS_COLUMN, "INVERTED", FTS_PARAMS),
)

Segments = dict[str, frozenset[int]]
"""Segment uuid -> the fragment ids it covers, for the key and full-text indices."""


def snapshot(dataset: Any) -> Segments:
    """Return the fragments each segment of the key and full-text indices covers."""
    names = {spec.name for spec in SPECS}
    return {
        index["uuid"]: frozenset(index["fragment_ids"])
        for index in dataset.list_indices()
        if index["name"] in names
    }


def small_segments(dataset: Any) -> int:
    """Return how many key-index segments cover fewer than `SMALL_SEGMENT_ROWS` rows."""
    rows = _fragment_rows(dataset)
    return sum(
        1
        for index in dataset.list_indices()
        if index["name"] == KEY_INDEX
        and sum(rows.get(f, 0) for f in index["fragment_ids"]) < SMALL_SEGMENT_ROWS
    )


def rebuild(dataset: Any, before: Segments | None, *, merge_small: bool = False) -> None:
    """Rebuild the segments whose fragments changed since `before` (all when None).

    A segment is kept when every fragment it covered at `before` is still in the table
    (and, with `merge_small`, it covers at least `SMALL_SEGMENT_ROWS` rows); the fragments
    no kept segment covers get new segments. Then LanceDB's deferred-remap record is
    dropped: no kept segment points at a rewritten fragment. On failure the new
    segments' files are deleted and the error goes up (the caller retries from the latest
    version; the table stays correct meanwhile).
    """
    rows = _fragment_rows(dataset)
    current = list(dataset.list_indices())
    removed: list[dict[str, Any]] = []
    built: list[Any] = []
    try:
        for spec in SPECS:
            segments = [index for index in current if index["name"] == spec.name]
            if not segments:
                continue  # not an entries table (the bank registry)
            kept = [s for s in segments if _keeps(s, before, rows, merge_small)]
            removed += [s for s in segments if s not in kept]
            # a kept segment was in `before`, whose fragment ids it is checked against
            covered = {f for s in kept for f in (before or {})[s["uuid"]]}
            # an emptied table keeps its index, as one segment over no fragment
            groups = list(_groups(sorted(set(rows) - covered), rows)) or ([] if kept else [[]])
            built += [_build(dataset, spec, group) for group in groups]
        if removed or built:
            operation = LanceOperation.CreateIndex(
                new_indices=built, removed_indices=[_as_index(s, dataset) for s in removed]
            )
            lance.LanceDataset.commit(
                dataset.uri,
                operation,
                read_version=dataset.version,
                storage_options=dataset.initial_storage_options,
            )
    except BaseException:
        discard(dataset, [segment.uuid for segment in built])
        raise
    pending = _remap_records(current)
    if pending:
        # LanceDB refuses this in the swap. The record is dropped only as this rebuild saw
        # it: a rewrite another process committed since then added its own mapping, which
        # that process's rebuild still needs (it drops the record after). If the drop is
        # lost, the next rewrite finds the record and rebuilds every segment.
        latest = lance.dataset(dataset.uri, storage_options=dataset.initial_storage_options)
        if _remap_records(latest.list_indices()) == pending:
            latest.drop_index(REMAP_PENDING)


def _remap_records(indices: Iterable[Any]) -> list[str]:
    """Return the uuid of LanceDB's deferred-remap record (it changes with every rewrite)."""
    return [index["uuid"] for index in indices if index["name"] == REMAP_PENDING]


def _keeps(
    segment: dict[str, Any], before: Segments | None, rows: dict[int, int], merge_small: bool
) -> bool:
    if before is None or segment["uuid"] not in before:
        return False  # everything is rebuilt, or a segment made since the snapshot
    fragments = before[segment["uuid"]]
    if not fragments <= rows.keys():
        return False
    return not (merge_small and sum(rows[f] for f in fragments) < SMALL_SEGMENT_ROWS)


def _fragment_rows(dataset: Any) -> dict[int, int]:
    """Return each fragment's live row count (from the manifest: no data is read)."""
    counts: dict[int, int] = {}
    for fragment in dataset.get_fragments():
        meta = fragment.metadata
        deleted = meta.deletion_file.num_deleted_rows if meta.deletion_file else 0
        counts[fragment.fragment_id] = meta.physical_rows - deleted
    return counts


def _groups(fragments: Iterable[int], rows: dict[int, int]) -> Iterator[list[int]]:
    """Cut `fragments` (in id order: write order) into runs of at most SEGMENT_ROWS rows."""
    group: list[int] = []
    size = 0
    for fragment in fragments:
        if group and size + rows[fragment] > SEGMENT_ROWS:
            yield group
            group, size = [], 0
        group.append(fragment)
        size += rows[fragment]
    if group:
        yield group


def _build(dataset: Any, spec: IndexSpec, fragments: list[int]) -> Any:
    """Write one uncommitted segment of `spec` over `fragments` and return its metadata."""
    segment = dataset.create_index_uncommitted(
        spec.column,
        spec.index_type,
        name=spec.name,
        replace=True,
        fragment_ids=fragments,
        **spec.params,
    )
    if spec.index_type == "INVERTED":  # a full-text build leaves staged parts to finalise
        segment = dataset.merge_existing_index_segments([segment])
    return segment


def _as_index(segment: dict[str, Any], dataset: Any) -> Index:
    """Return the `Index` record naming a committed segment (LanceDB removes by uuid)."""
    return Index(
        uuid=segment["uuid"],
        name=segment["name"],
        fields=[],
        dataset_version=dataset.version,
        fragment_ids=segment["fragment_ids"],
        index_version=segment["version"],
    )


def discard(dataset: Any, uuids: Iterable[str]) -> None:
    """Delete the files of segments that were built but not committed."""
    session = None
    for uuid in uuids:
        session = session or LanceFileSession(
            dataset.uri, storage_options=dataset.initial_storage_options
        )
        for path in session.list(f"_indices/{uuid}"):
            session.delete_file(path)
