"""Entry points of spawned test processes: light to import, they enable a bytecode cache first.

The environment may set PYTHONDONTWRITEBYTECODE, which makes every fresh process compile
lancedb, pyarrow and polars from source (10 s or more on a busy machine). A spawned child
imports this module only, turns on a bytecode cache under the temp folder, then imports the
real work, so only the first child pays for compiling.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

CACHE = Path(tempfile.gettempdir()) / "membank-test-pycache"


def _cache_bytecode() -> None:
    sys.pycache_prefix = str(CACHE)
    sys.dont_write_bytecode = False


def compact_and_die(uri: str, account: str, bank_id: str, key: str, step: str) -> None:
    """Compact a partition and SIGKILL this process at `step`."""
    _cache_bytecode()
    import compaction_support

    compaction_support.compact_and_die(uri, account, bank_id, key, step)


def write_markers(uri: str, account: str, bank_id: str, key: str, writer: int, count: int) -> int:
    """Write `count` marker entries one per commit with inline compaction; returns count."""
    _cache_bytecode()
    import compaction_support

    return compaction_support.write_markers(uri, account, bank_id, key, writer, count)


def write_recent(uri: str, account: str, bank_id: str, key: str, count: int) -> list[str]:
    """Write `count` entries dated now, one per commit; returns their ids."""
    _cache_bytecode()
    import compaction_support

    return compaction_support.write_recent(uri, account, bank_id, key, count)


def make_table_and_add(uri: str, name: str, start: object, row: int) -> int:
    """Wait at the `start` barrier, then open table `name` (creating it when absent, as every
    store table is) and add one row; returns the row added."""
    _cache_bytecode()
    import pyarrow as pa

    from memory.store.connection import Connection

    schema = pa.schema([("row", pa.int64())])
    store = Connection(uri)
    start.wait()  # type: ignore[attr-defined]
    table = store._small_table(name, schema, create=True)
    assert table is not None
    table.add(pa.table({"row": [row]}, schema=schema))
    return row
