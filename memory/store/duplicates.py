"""Entries stored more than once under one id (two ingests at once did that before the ids
were checked under a lock): finding them, and keeping one copy without a window of loss.

The repair appends one copy of each chunk with a fresh `seq`, then deletes the copies with an
older `seq`. A crash between the two leaves one more copy (the next `maintain` repairs it),
never none; two repairs at once each keep their own copy and delete the older ones, so one
copy is left. The deleted copies are identical to the kept one, so no neighbour rewrite is
needed.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

import pyarrow as pa


def repeated(entry_ids: Sequence[str]) -> list[str]:
    """Return the ids that occur more than once, sorted."""
    return sorted(entry_id for entry_id, count in Counter(entry_ids).items() if count > 1)


def one_copy(rows: pa.Table) -> tuple[pa.Table, int]:
    """Return one row per (entry id, chunk) of `rows` with a fresh `seq`, and the `seq` below
    which every older copy lies."""
    seen: set[tuple[str, int]] = set()
    keep: list[int] = []
    pairs = zip(
        rows.column("entry_id").to_pylist(), rows.column("chunk_index").to_pylist(), strict=True
    )
    for index, pair in enumerate(pairs):
        if pair not in seen:
            seen.add(pair)
            keep.append(index)
    kept = rows.take(keep)
    marker = max(time.time_ns(), max(rows.column("seq").to_pylist(), default=0) + 1)
    fresh = pa.array([marker + i for i in range(kept.num_rows)], pa.int64())
    return kept.set_column(kept.schema.get_field_index("seq"), "seq", fresh), marker
