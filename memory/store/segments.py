"""Bounded index segments and final deletion, through LanceDB's public API only.

Layout kept: each index segment covers one fragment of at most `segment_rows` rows. New rows
are appended unindexed (searches scan them); once `reindex_every` rows or `loose_fragments`
write fragments are unindexed, a write folds them into the key and full-text indices as a
new delta segment (`optimize_indices(num_indices_to_merge=0)`) and compacts that delta's
fragments into one. When `index_segments` recent segments that fit in `segment_rows` rows
together have piled up, they are merged (`num_indices_to_merge=k` merges the k most recent)
and their fragments compacted into one (Lance merges fragments only under one segment).

Final deletion (`finish_deletion`, then `drop_old_versions`): after a delete commit,
`compact_files(materialize_deletions=True, materialize_deletions_threshold=0.0)` rewrites
every fragment holding a deleted row, and LanceDB remaps the segment over it: the remapped
segment holds neither the deleted rows' keys nor their tokens, and the work is one segment's
rows, not the table's. A fragment whose rows were all deleted is dropped by the delete
commit itself and its segment with it, except when that segment still covers another
fragment or is the index's last one: then LanceDB keeps the segment, deleted rows included
(masked at query time), and lists the dropped fragment in its `fragment_ids`. Such stale
segments are rewritten (merged with the newer ones, or the index rebuilt when every segment
is stale); the one-fragment layout makes them rare. Measured on pylance 14.0.2.
The vector index (IVF_FLAT, past a size: `vector_index`) keeps each vector in its files and
is remapped and rewritten the same way (measured: after the compaction and the cleanup, no
file holds a deleted row's vector). Then `cleanup_old_versions(older_than=0)` drops every
old version and its files.
`delete_unverified=True` also deletes files no version references (those of a rewrite whose
commit lost a race still hold the rows it copied); it is safe only when no write is in
flight, which the store guarantees on a local folder (writes hold the table's shared lock,
version cleanup its exclusive one) and cannot on object storage, where it stays off unless
configured (see `StoreTuning`). `LanceTable.optimize(cleanup_older_than=...)` is not used: it
also compacts with the 10% deletion threshold and merges the newest index segments.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from memory.store import vector_index
from memory.store.indices import (
    FTS_INDEX,
    ID_INDEX,
    KEY_INDEX,
    SEGMENTED,
    VECTOR_INDEX,
    create_fts_index,
    create_id_index,
    create_key_index,
)
from memory.store.retry import STORE_RETRY, RetryPolicy


@dataclass(frozen=True)
class StoreTuning:
    """The store's tuning values (tests pass small ones instead of patching constants).

    Attributes:
        segment_rows: rows an index segment (and the one fragment it covers) holds at most:
            bounds what a prune rewrites and remaps. A write appends at most this many rows
            at a time.
        reindex_every: unindexed rows tolerated before a write indexes them. Every
            full-text search scans the unindexed rows (~7 us a row a table here), and a fold
            costs a write ~80 ms plus the rows: 2,000 keeps a search's scan under ~15 ms a
            table, where 20,000 left a bank written in one batch (an ingest, LoCoMo's 2,760
            turns) scanned whole by every search (bench/RESULTS.md, "lead (session 15)").
        loose_fragments: unindexed fragments (one per write) tolerated before a write
            indexes them: each costs every filtered search a scan (measured: 300 one-row
            fragments took a key-filtered search on 20k rows from 7 ms to 78 ms).
        index_segments: recent small segments tolerated before they are merged (each costs
            a search about 0.4 ms).
        keep_versions: maintenance drops table versions older than this (a prune drops all).
        retry: how storage steps that lost a race with another process are rerun.
        delete_unverified: whether version cleanup deletes unreferenced files at once (a lost
            rewrite race's copies); None = on a local folder only, where the store's locks keep
            every write out meanwhile. Set True on object storage only when no other process
            writes the tables (a write in flight there would lose its files).
        vector_index_rows: chunk rows from which maintenance builds the vector index
            (`vector_index`); smaller tables are searched exactly.
        remembered_turns: keys whose latest turn the store remembers between its writes to
            a conversation bank, over all banks (`latest_turns`: a write to them reads no
            stored turns); 0: every write scans.
        nprobes: index partitions a search with no filter visits (recall@10 against exact
            search: bench/vector_index.py); 0: searches never use the index.
        key_statistics_rows: largest table (rows) whose key-filtered full-text searches
            weigh their words by the key's BM25 statistics (`term_weights`: a word's first
            count in an index state reads its posting list, growing with the table); 0: never.
    """

    segment_rows: int = 65_536
    reindex_every: int = 2_000
    loose_fragments: int = 16
    index_segments: int = 16
    keep_versions: timedelta = timedelta(days=7)
    retry: RetryPolicy = STORE_RETRY
    delete_unverified: bool | None = None
    vector_index_rows: int = 50_000
    nprobes: int = 20
    remembered_turns: int = 10_000
    key_statistics_rows: int = 20_000

    def __post_init__(self) -> None:
        counts = (
            self.segment_rows,
            self.reindex_every,
            self.loose_fragments,
            self.index_segments,
            self.vector_index_rows,
        )
        if min(counts) < 1:
            raise ValueError("StoreTuning row and segment counts must be at least 1")
        if self.remembered_turns < 0:
            raise ValueError("StoreTuning.remembered_turns must be 0 or more")
        if self.key_statistics_rows < 0:
            raise ValueError("StoreTuning.key_statistics_rows must be 0 (never) or more")
        if self.nprobes < 0:
            raise ValueError("StoreTuning.nprobes must be 0 (never use the index) or more")


def fragment_rows(dataset: Any) -> dict[int, int]:
    """Return each fragment's live row count (from the manifest: no data is read)."""
    counts: dict[int, int] = {}
    for fragment in dataset.get_fragments():
        meta = fragment.metadata
        deleted = meta.deletion_file.num_deleted_rows if meta.deletion_file else 0
        counts[fragment.fragment_id] = meta.physical_rows - deleted
    return counts


def segments_of(dataset: Any, name: str = KEY_INDEX) -> list[Any]:
    """Return an index's segments, oldest first (the order LanceDB merges them in)."""
    for index in dataset.describe_indices():
        if index.name == name:
            return sorted(index.segments, key=lambda s: s.dataset_version_at_last_update)
    return []


def needs_indexing(table: Any, tuning: StoreTuning, dataset: Any | None = None) -> bool:
    """Return True when unindexed rows or unindexed fragments have piled up.

    Read from the manifest of `dataset` (the table's latest version; opened when not given):
    the live rows of the fragments no key-index segment covers, as LanceDB's `index_stats`
    counts them, without a call of its own (one round trip less per write)."""
    dataset = table.to_lance() if dataset is None else dataset
    found = segments_of(dataset)
    if not found:  # no key index: nothing to fold into
        return False
    indexed = {f for segment in found for f in segment.fragment_ids}
    live = fragment_rows(dataset)
    loose = [rows for fragment, rows in live.items() if fragment not in indexed]
    return sum(loose) >= tuning.reindex_every or len(loose) >= tuning.loose_fragments


def mergeable(dataset: Any, tuning: StoreTuning) -> tuple[int, int]:
    """Return how many of the most recent segments fit in `segment_rows` rows together, and
    how many of those cover rows."""
    rows = fragment_rows(dataset)
    total = count = filled = 0
    for segment in reversed(segments_of(dataset)):
        size = sum(rows.get(f, 0) for f in segment.fragment_ids)
        total += size
        if total > tuning.segment_rows:
            break
        count += 1
        filled += size > 0
    return count, filled


def _compact(table: Any, tuning: StoreTuning, **options: Any) -> None:
    table.to_lance().optimize.compact_files(target_rows_per_fragment=tuning.segment_rows, **options)
    table.checkout_latest()


def _one_fragment_each(dataset: Any) -> bool:
    return all(len(s.fragment_ids) <= 1 for s in segments_of(dataset))


def index_new_rows(table: Any, tuning: StoreTuning, *, merge: bool = False) -> None:
    """Fold unindexed rows into a new delta segment of each index; merge the recent small
    segments when `merge` is set or `index_segments` of them piled up; compact so that each
    segment covers one fragment."""
    table.to_lance().optimize.optimize_indices(num_indices_to_merge=0)
    table.checkout_latest()
    count, filled = mergeable(table.to_lance(), tuning)
    if filled >= 2 and (merge or filled >= tuning.index_segments):
        table.to_lance().optimize.optimize_indices(num_indices_to_merge=count)
        table.checkout_latest()
    if not _one_fragment_each(table.to_lance()):
        _compact(table, tuning)


def finish_deletion(table: Any, tuning: StoreTuning) -> None:
    """Rewrite every fragment holding deleted rows (LanceDB remaps the segments over them),
    then rewrite the segments that still hold rows of dropped fragments."""
    _compact(table, tuning, materialize_deletions=True, materialize_deletions_threshold=0.0)
    for name in SEGMENTED:
        _rewrite_stale(table, name)


def stale_segments(dataset: Any, name: str) -> int:
    """Return how many of the most recent segments reach back to the oldest one that still
    lists a fragment the table no longer has (0: none does)."""
    live = {fragment.fragment_id for fragment in dataset.get_fragments()}
    segments = segments_of(dataset, name)
    for position, segment in enumerate(segments):
        if not set(segment.fragment_ids) <= live:
            return len(segments) - position
    return 0


def holds_deleted(dataset: Any) -> bool:
    """Return True when a fragment has deleted rows or an index segment is stale."""
    if any(fragment.deletion_file() is not None for fragment in dataset.get_fragments()):
        return True
    return any(stale_segments(dataset, name) for name in SEGMENTED)


def _rewrite_stale(table: Any, name: str) -> None:
    dataset = table.to_lance()
    count = stale_segments(dataset, name)
    if count == 0:
        return
    if count == len(segments_of(dataset, name)):  # every segment: build the index afresh
        builders = {
            KEY_INDEX: create_key_index,
            FTS_INDEX: create_fts_index,
            VECTOR_INDEX: vector_index.rebuild,
            ID_INDEX: create_id_index,
        }
        builders[name](table)
    else:
        dataset.optimize.optimize_indices(num_indices_to_merge=count, index_names=[name])
    table.checkout_latest()


def drop_old_versions(dataset: Any, older_than: timedelta, *, delete_unverified: bool) -> None:
    """Delete the table versions older than `older_than` (all but the latest at 0) and their
    files; with `delete_unverified`, also every file no version references."""
    dataset.cleanup_old_versions(older_than=older_than, delete_unverified=delete_unverified)
