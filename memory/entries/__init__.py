"""Entries of a bank: `writer` (validation, chunking, embedding, one commit), `reader` (filters,
threads, one entry), `delete` (forget, for good) and `chunking` (token windows).
"""

from __future__ import annotations

from memory.entries.delete import forget
from memory.entries.reader import entry_from_row, get_entry, load, matching, read
from memory.entries.writer import EMBED_BATCH, validate, write

__all__ = [
    "EMBED_BATCH",
    "entry_from_row",
    "forget",
    "get_entry",
    "load",
    "matching",
    "read",
    "validate",
    "write",
]
