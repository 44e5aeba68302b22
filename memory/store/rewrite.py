"""Fragment rewrites (Lance compaction) that leave no stray copy of a row when they fail.

Lance's `compact_files` writes the rewritten fragments and then commits. When another
process committed a conflicting change meanwhile (a delete or another rewrite of the same
fragments: two prunes, a prune and a forget, on object storage where locks are per process)
the commit fails and Lance leaves the rewritten files "for GC"; but its cleanup removes files
no version references only once they are 7 days old (they may belong to a write in flight).
Such a file holds copies of the rows it rewrote, deleted ones included, so a deletion would
not be final. Here the same plan, execute and commit run step by step and, when any step
fails, the files this rewrite wrote that the latest version does not reference are deleted
before the error goes up (the caller retries from the latest version).

On big tables the store's rewrites defer LanceDB's index remap and write no index files;
the segments rebuilt afterwards are deleted the same way when their commit fails
(`segments.discard`). Not covered, left to LanceDB's cleanup of unreferenced files after
7 days (lance-format/lance#7207): index files a remap of a smaller table wrote when its
commit fails (Lance does not report their uuids), and files of a process killed between
writing and committing them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import lance
from lance.file import LanceFileSession
from lance.optimize import Compaction, CompactionOptions

DATA_FOLDER = "data"


def compact(dataset: Any, options: CompactionOptions) -> None:
    """Compact `dataset`'s fragments with Lance's compaction `options`; on failure, delete
    the files written so far (those no version references) and re-raise."""
    plan = Compaction.plan(dataset, options)
    if not plan.tasks:
        return
    rewrites = _execute(dataset, plan.tasks)
    try:
        Compaction.commit(dataset, rewrites, options)
    except BaseException:
        discard(dataset, rewrites)
        raise


def _execute(dataset: Any, tasks: Sequence[Any]) -> list[Any]:
    """Run the rewrite tasks side by side (as `compact_files` does); if one fails, delete what
    the others wrote and raise its error."""
    workers = min(len(tasks), os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(task.execute, dataset) for task in tasks]
    errors = [error for future in futures if (error := future.exception()) is not None]
    rewrites = [future.result() for future in futures if future.exception() is None]
    if errors:
        discard(dataset, rewrites)
        raise errors[0]
    return rewrites


def written_files(rewrites: Sequence[Any]) -> set[str]:
    """Return the data file names (relative to `data/`) of the rewrites' new fragments."""
    return {
        data_file.path
        for rewrite in rewrites
        for fragment in rewrite.new_fragments
        for data_file in fragment.data_files()
    }


def discard(dataset: Any, rewrites: Sequence[Any]) -> None:
    """Delete the rewrites' files that the latest version does not reference.

    A file the latest version references was committed after all (the error came later):
    it stays. Lance names data files uniquely per write, so no other writer has them.
    """
    ours = written_files(rewrites)
    if not ours:
        return
    options = dataset.initial_storage_options
    latest = lance.dataset(dataset.uri, storage_options=options)
    referenced = {
        data_file.path for fragment in latest.get_fragments() for data_file in fragment.data_files()
    }
    session = LanceFileSession(dataset.uri, storage_options=options)
    for name in sorted(ours - referenced):
        path = f"{DATA_FOLDER}/{name}"
        if session.contains(path):
            session.delete_file(path)
