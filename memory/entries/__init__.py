"""Entries of a bank: `writer` (validation, chunking, embedding, one commit), `reader` (filters,
threads, one entry), `delete` (forget, for good) and `chunking` (token windows).
"""

from __future__ import annotations

from memory.entries.delete import forget
from memory.entries.reader import get_entry, load, read
from memory.entries.writer import EMBED_BATCH, validate, write

__all__ = [
    "EMBED_BATCH",
    "forget",
    "get_entry",
    "load",
    "read",
    "validate",
    "write",
]
