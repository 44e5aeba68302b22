"""Deletion finality on a bench-sized table, checked by decoding every file with Lance's reader.

Usage: python bench/finality_check.py [--entries 200000] [--expired 0.33] [--dir DIR]

Each row carries the turn before it in its key, as conversation turns do since issue 14
(`bench/retention.py --neighbours`): the check also decodes the `search_text` column, whose
carried part must never hold a deleted turn's text.

On tables this size Lance 2.2 compresses strings, so a byte search of the files finds no
text either way (shown below as the byte-search control). Instead the check decodes, with
`lance.file.LanceFileReader`, every data file (the `text` column), every BTree segment of
the key index (its keys) and every full-text segment (its documents and token postings),
before and after `memory.retention.apply_retention` on a bank built as `bench/retention.py`
builds it, then after a one-entry forget:
- before (positive controls): the data files hold the expired rows' text, the BTree their
  keys, the full-text segments their documents;
- after: no file holds an expired row's text (nor carries one in `search_text`), the BTree
  holds only live rows' keys and the full-text segments only live rows' documents, missing
  just the rows not yet folded into the indices (the carriers a deletion rewrote, folded
  like appended rows once enough pile up), no token without a document, and one table
  version is left.
The last line of stdout is a JSON object; exit status 1 if any check fails.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from lance_files import btree_keys, data_values, fts_segments
from retention import NOW, SPAN, build, context

from memory import entries, retention
from memory.context import Context
from memory.models import Bank
from memory.store import filters
from memory.store.filters import where_of
from memory.store.lance import entries_table_name
from memory.store.schema import CONTEXT_SEPARATOR


def _live(ctx: Context, bank: Bank) -> dict[str, Any]:
    """Return the live rows' texts, keys and row addresses, read through the engine."""
    table = ctx.store.entries_table(bank.id)
    assert table is not None
    rows = table.to_lance().to_table(columns=["text", "key"], with_row_address=True)
    return {
        "text": rows.column("text").to_pylist(),
        "key": rows.column("key").to_pylist(),
        "address": set(rows.column("_rowaddr").to_pylist()),
        "unindexed": int(table.index_stats("key_idx").num_unindexed_rows),
    }


def _on_disk(table_dir: Path) -> dict[str, Any]:
    """Return what the table's files hold, decoded: data texts, BTree keys, FTS documents."""
    segments = fts_segments(table_dir)
    return {
        "text": Counter(str(v) for v in data_values(table_dir, "text")),
        "carried": {
            str(v).split(CONTEXT_SEPARATOR, 1)[1]
            for v in data_values(table_dir, "search_text")
            if CONTEXT_SEPARATOR in str(v)
        },
        "key": Counter(btree_keys(table_dir)),
        "docs": {row for segment in segments for row in segment.row_ids},
        "empty_postings": sum(1 for s in segments for n in s.postings if n == 0),
    }


def _indexed_exactly(keys: Counter[str], live: dict[str, Any], bank: Bank) -> bool:
    """Return True when the BTree holds no key but live rows' and misses only the rows not
    yet folded into the indices (the rewritten carriers of deleted turns, as appended rows
    are folded once enough piled up: `maintenance.needs_indexing`)."""
    extra = keys - Counter(live["key"])
    missing = Counter(live["key"]) - keys
    return not extra and sum(missing.values()) == live["unindexed"]


def _docs_exactly(docs: set[int], live: dict[str, Any], bank: Bank) -> bool:
    """Return True when the full-text segments hold only live rows, all but the unindexed."""
    return docs <= live["address"] and len(live["address"] - docs) == live["unindexed"]


def _byte_hits(table_dir: Path, needle: str) -> int:
    return sum(1 for p in table_dir.rglob("*") if p.is_file() and needle.encode() in p.read_bytes())


def run(folder: Path, count: int, expired: float) -> dict[str, Any]:
    """Build the bank, delete, and return the checks' outcomes."""
    ctx = context(str(folder))
    days = round(SPAN.days * (1 - expired))
    started = time.perf_counter()
    bank = build(ctx, count, days, neighbours=True)
    print(f"built {count:,} entries in {time.perf_counter() - started:.1f} s")
    table_dir = folder / f"{entries_table_name(bank.id)}.lance"
    predicate = where_of(retention.plan_retention(bank, NOW).entry_filter())
    assert predicate is not None
    table = ctx.store.entries_table(bank.id)
    assert table is not None
    doomed = table.to_lance().to_table(
        columns=["text", "key"], filter=predicate, with_row_address=True
    )
    doomed_text = set(doomed.column("text").to_pylist())
    doomed_address = set(doomed.column("_rowaddr").to_pylist())
    doomed_keys = doomed.column("key").to_pylist()
    before = _on_disk(table_dir)
    sample = sorted(doomed_text)[0]
    checks: dict[str, bool] = {
        "control: data files hold the expired text": doomed_text <= set(before["text"]),
        # (older versions' segments are on disk too: the BTree holds at least every key)
        "control: BTree holds the expired rows' keys": not Counter(doomed_keys) - before["key"],
        "control: FTS segments hold the expired rows": doomed_address <= before["docs"],
        "control: later turns carry expired texts": bool(doomed_text & before["carried"]),
    }
    byte_hits_before = _byte_hits(table_dir, sample)

    started = time.perf_counter()
    result = retention.apply_retention(ctx, bank)
    seconds = time.perf_counter() - started
    live = _live(ctx, bank)
    after = _on_disk(table_dir)
    checks |= {
        "no data file holds an expired text": not doomed_text & set(after["text"]),
        "no turn carries an expired text": not doomed_text & after["carried"],
        "data files hold exactly the live texts": after["text"] == Counter(live["text"]),
        "BTree holds the live keys, nothing else": _indexed_exactly(after["key"], live, bank),
        "FTS segments hold the live rows, nothing else": _docs_exactly(after["docs"], live, bank),
        "no FTS token without a document": after["empty_postings"] == 0,
        "one table version": ctx.store.version_count(bank.id) == 1,
    }

    # a one-entry forget on what is left
    carriers = table.to_lance().to_table(columns=["context_id"], filter="context_id IS NOT NULL")
    entry_id = carriers.column("context_id")[0].as_py()  # a turn the next one carries
    row = table.to_lance().to_table(columns=["text"], filter=filters.equals("entry_id", entry_id))
    text = row.column("text")[0].as_py()
    held = _on_disk(table_dir)
    assert text in held["text"] and text in held["carried"]
    started = time.perf_counter()
    entries.forget(ctx, bank, entry_id)
    forget_seconds = time.perf_counter() - started
    live = _live(ctx, bank)
    after = _on_disk(table_dir)
    checks |= {
        "forget: no data file holds its text": text not in after["text"],
        "forget: no turn carries its text": text not in after["carried"],
        "forget: BTree holds the live keys, nothing else": _indexed_exactly(
            after["key"], live, bank
        ),
        "forget: FTS segments hold the live rows, nothing else": _docs_exactly(
            after["docs"], live, bank
        ),
        "forget: one table version": ctx.store.version_count(bank.id) == 1,
    }
    for name, passed in checks.items():
        print(f"{'ok  ' if passed else 'FAIL'} {name}")
    print(f"byte search for {sample!r} before the delete: {byte_hits_before} file(s)")
    return {
        "entries": count,
        "deleted": result.deleted,
        "retention_seconds": round(seconds, 3),
        "forget_seconds": round(forget_seconds, 3),
        "byte_search_hits_before": byte_hits_before,
        "checks_passed": sum(checks.values()),
        "checks": len(checks),
        "final": all(checks.values()),
    }


def main() -> None:
    """Run the check and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--expired", type=float, default=0.33, help="share older than retention")
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: temp)")
    args = parser.parse_args()
    folder = args.dir or Path(tempfile.mkdtemp(prefix="membank-finality-"))
    try:
        figures = run(folder, args.entries, args.expired)
    finally:
        if args.dir is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(figures))
    sys.exit(0 if figures["final"] else 1)


if __name__ == "__main__":
    main()
