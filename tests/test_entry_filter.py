"""EntryFilter: domain code says which entries; only the store compiles it, escaping values."""

from __future__ import annotations

import subprocess
import sys

from memory.store.filters import HEAD_ROWS, heads_of, where_of
from memory.types.entry_filter import EntryFilter


def test_every_value_is_escaped() -> None:
    hostile = "x' OR '1'='1"
    where = where_of(EntryFilter(keys=(hostile,), speaker=hostile, tags=(hostile,)))
    assert where is not None
    assert "'x'' OR ''1''=''1'" in where
    assert "'x' OR" not in where


def test_empty_lists_match_nothing_and_empty_filter_everything() -> None:
    assert where_of(EntryFilter(ids=())) == "false"
    assert where_of(EntryFilter()) is None
    assert heads_of(None) == HEAD_ROWS


def test_alternatives_are_grouped() -> None:
    flt = EntryFilter(
        keys=("u",), any_of=(EntryFilter(ids=("a",)), EntryFilter(summarizes_any=("a",)))
    )
    where = where_of(flt)
    assert where is not None and " OR " in where
    assert where.index("key IN") < where.index(" OR ")


def test_importing_the_filter_and_the_plan_loads_no_engine() -> None:
    code = (
        "import sys, memory.types.entry_filter, memory.store.filters, memory.compaction.plan;"
        "print('lancedb' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
