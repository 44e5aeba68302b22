"""The LanceDB connection a store works through: one database, its open tables, the retry
policy for races with other processes, the per-table locks, and a table's final prune."""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import lancedb
import pyarrow as pa

from memory.errors import StorageError
from memory.store import segments
from memory.store.latest_turns import LatestTurns
from memory.store.locks import creating, is_local, pruning, spans_machines, writing
from memory.store.retry import STORAGE_ERRORS, lost_race, pruned_under
from memory.store.segments import StoreTuning
from memory.types.problems import engine_text

T = TypeVar("T")


def location_of(uri: str) -> str:
    """Return where `uri` stores data, for messages: a local folder made absolute (a worker
    whose MEMBANK_URI is relative shows which folder it used), any other URI as given."""
    if "://" in uri and not uri.startswith("file://"):
        return uri
    return str(Path(uri.removeprefix("file://")).resolve())


class Connection:
    """One LanceDB database and the tables opened in it (the base of `LanceStore`).

    Args:
        uri: a local folder or an object-storage URI (s3://, gs://).
        storage_options: passed to LanceDB (credentials come from the environment otherwise).
        tuning: segment sizes, reindex interval, retry policy (the defaults suit real use).
    """

    def __init__(
        self,
        uri: str,
        *,
        storage_options: dict[str, str] | None = None,
        tuning: StoreTuning | None = None,
    ) -> None:
        self.uri = uri
        self.location = location_of(uri)
        """Where the storage is, for messages: a local folder made absolute, a URI as given."""
        self.tuning = tuning or StoreTuning()
        self._storage_options = storage_options
        self._connection: Any = None
        self._tables: dict[str, Any] = {}
        self._datasets: dict[str, tuple[Any, int, Any]] = {}
        """Each table's Lance dataset as searches last read it: (table, version, dataset)."""
        self.latest_turns = LatestTurns(self.tuning.remembered_turns)
        """The latest turn of recently written conversation keys (`latest_turns`)."""
        self._lookups: dict[tuple[str, str | None], tuple[int, list[str]]] = {}
        """Registry look-ups by (account, filter), each with the registry version read."""
        unverified = self.tuning.delete_unverified
        local_or_leased = is_local(uri) or spans_machines(uri)  # writes in flight are locked out
        self._delete_unverified = local_or_leased if unverified is None else unverified

    def _on_latest(self, table: Any, action: Callable[[Any], T]) -> T:
        """Run a short read or commit; if another process pruned the files under it, reload
        and rerun (the latest version holds every live row)."""
        return self.tuning.retry.run(
            lambda: action(table), when=pruned_under, reset=table.checkout_latest
        )

    def _writing(self, table: Any) -> AbstractContextManager[None]:
        """Hold `table` shared while a write's files are written and committed, so a version
        cleanup that deletes unreferenced files (`delete_unverified`) never takes them."""
        return writing(self.uri, table.name)

    @property
    def _db(self) -> Any:
        """The LanceDB connection, opened on first use (a local folder is created then)."""
        if self._connection is None:
            try:
                self._connection = lancedb.connect(self.uri, storage_options=self._storage_options)
            except (OSError, RuntimeError, ValueError) as exc:
                reason = " ".join(str(exc).split())
                raise StorageError(
                    f"cannot open storage {self.uri!r}: {reason} (check --data / MEMBANK_URI)"
                ) from exc
        return self._connection

    def _open_or_create(
        self, name: str, schema: pa.Schema, *, prepare: Callable[[Any], None] | None = None
    ) -> Any:
        """Open table `name`, creating it (then `prepare`, e.g. its indices) when absent.

        One creator at a time (`locks.creating`): two processes whose first writes race to
        make the same table get one table, and the second opens what the first made. On
        object storage without a lease service that lock is per process: a creation that
        finds the table made meanwhile by another machine opens it (its maker prepares it).
        """
        with creating(self.uri, name):
            try:
                return self._db.open_table(name)
            except ValueError:  # absent
                pass
            try:
                table = self._db.create_table(name, schema=schema)
            except ValueError:  # made meanwhile elsewhere ("already exists"), or a real error
                try:
                    return self._db.open_table(name)
                except ValueError:
                    pass
                raise
            if prepare is not None:
                with self._writing(table):
                    prepare(table)
            return table

    def _small_table(self, name: str, schema: pa.Schema, *, create: bool) -> Any | None:
        """Return a small table (registry, keys, lab runs, ...) at its latest version, opened
        once per store (None: it is absent and not `create`)."""
        table = self._tables.get(name)
        if table is None:
            if not create and self._absent():
                return None
            try:
                table = self._db.open_table(name)
            except ValueError:  # absent
                if not create:
                    return None
                table = self._open_or_create(name, schema)
            self._tables[name] = table
        table.checkout_latest()
        return table

    def _absent(self) -> bool:
        """Return True for a local store folder that does not exist (reads find nothing there
        and leave no folder behind, so a mistyped path is not turned into an empty store)."""
        local = self.uri.removeprefix("file://")
        return "://" not in local and not os.path.exists(local)

    def _prune_table(self, table: Any, *, finish: Callable[[Any], None] | None = None) -> None:
        """Finish the table's deletions (`finish`, default: rewrite the fragments and index
        segments holding deleted rows), then drop every old version, retried on races."""

        def attempt() -> None:
            table.checkout_latest()
            with self._writing(table):
                if finish is None:
                    segments.finish_deletion(table, self.tuning)
                else:
                    finish(table)
            table.checkout_latest()
            # streaming readers (exports) and writes in flight hold the table shared: wait
            with pruning(self.uri, table.name):
                segments.drop_old_versions(
                    table.to_lance(), timedelta(0), delete_unverified=self._delete_unverified
                )
            table.checkout_latest()

        try:
            self.tuning.retry.run(attempt, when=lost_race, reset=table.checkout_latest)
        except STORAGE_ERRORS as exc:
            raise StorageError(f"pruning old versions failed: {engine_text(exc)}") from exc
