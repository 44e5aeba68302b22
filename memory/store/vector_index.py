"""When an entries table gets its vector index, how big it is, and how queries use it.

Small tables are searched exactly (a flat scan is cheap). Once a table holds
`StoreTuning.vector_index_rows` chunk rows, maintenance (`LanceStore.maintain`, i.e.
`membank maintain` and the maintenance sweep; never a user's write) builds an IVF_FLAT index
with about sqrt(rows) partitions, and rebuilds it when the table has grown four times past
the size it was built for (sqrt doubled). Between builds, the writes' index upkeep
(`segments.index_new_rows`) folds new rows into delta segments of it, assigned to the
existing partitions; rows not folded in yet are still searched, by a flat scan.

Only a search with no filter at all uses the index (`approximate`): any filter, a key, a
tag, a time window, or the `entry_id IN (...)` look-ups that give hybrid search its exact
scores, bypasses it, so filtered results are exact and unchanged (a prefiltered IVF search
can also return fewer rows than asked).

With it comes a BTree on `entry_id` (`indices.ID_INDEX`): a whole-bank hybrid search looks up
the exact scores of ~100 given entries (`entry_id IN (...)`), a scan of the table without it
(bench/RESULTS.md "vector index": most of that search's time at 300k rows).

IVF_FLAT keeps each vector (normalised) in its index files, the BTree each entry id; final
deletion rewrites their segments like those of the other indices (`segments.finish_deletion`).
"""

from __future__ import annotations

import math
from typing import Any

from memory.store.indices import (
    ID_INDEX,
    VECTOR_INDEX,
    create_id_index,
    create_vector_index,
    index_names,
)

PARTITIONS_KEY = "membank.vector_partitions"
"""Table config key: how many partitions the vector index was built with."""
GROWTH = 4
"""A table this many times the size its index was built for gets the index rebuilt."""


def partitions_for(rows: int) -> int:
    """Return the partition count for a table of `rows` rows: about sqrt(rows)."""
    return max(1, round(math.sqrt(rows)))


def built_partitions(table: Any) -> int | None:
    """Return the partition count the vector index was built with (None: no index)."""
    if VECTOR_INDEX not in index_names(table):
        return None
    value = table.to_lance().config().get(PARTITIONS_KEY)
    return int(value) if value else 0


def due(table: Any, min_rows: int) -> int | None:
    """Return the partition count to build the vector index with now, or None when it
    needs no (re)build: the table is under `min_rows` rows, or not yet `GROWTH` times the
    size the present index was built for."""
    rows = int(table.count_rows())
    if rows < min_rows:
        return None
    built = built_partitions(table)
    if built is not None and rows < GROWTH * built * built:
        return None
    return partitions_for(rows)


def ensure(table: Any, min_rows: int) -> bool:
    """Build (or rebuild, grown) the vector index when `due`; return whether it was built.

    Costs seconds: about 2 s at 100k rows of 384 dims, 20-30 s at 300k (bench/RESULTS.md).
    """
    partitions = due(table, min_rows)
    if partitions is None:
        return False
    build(table, partitions)
    return True


def build(table: Any, partitions: int) -> None:
    """Build the vector index with `partitions` partitions and record the count; add the
    `entry_id` BTree if missing (at this size the look-ups of given entries that hybrid
    search makes for exact scores would otherwise scan the table)."""
    create_vector_index(table, partitions)
    table.checkout_latest()
    if ID_INDEX not in index_names(table):
        create_id_index(table)
        table.checkout_latest()
    table.to_lance().update_config({PARTITIONS_KEY: str(partitions)})
    table.checkout_latest()


def rebuild(table: Any) -> None:
    """Rewrite the vector index over the rows left (final deletion): with the partitions'
    centroids it was trained with, so no k-means training runs again (2.2x faster at 67k
    rows here; the table's next growth rebuild retrains); afresh when it has none."""
    dataset = table.to_lance()
    try:
        centroids = dataset.centroids(index_name=VECTOR_INDEX)
    except (ValueError, RuntimeError, OSError):  # no IVF index to take them from
        centroids = None
    if centroids is None or len(centroids) == 0:
        build(table, partitions_for(int(table.count_rows())))
        return
    dataset.create_index(
        "vector",
        "IVF_FLAT",
        name=VECTOR_INDEX,
        metric="cosine",
        replace=True,
        num_partitions=len(centroids),
        ivf_centroids=centroids,
    )
    table.checkout_latest()


def tune(query: Any, *, approximate: bool, nprobes: int) -> Any:
    """Return a vector query that searches the `nprobes` nearest partitions of the index
    (`approximate`; rows not indexed yet are scanned too) or scans every row.

    No refine step: IVF_FLAT's distances are exact already (refining re-scores them only).
    """
    if not approximate:
        return query.bypass_vector_index()
    return query.nprobes(nprobes)
