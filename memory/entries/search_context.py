"""What the full-text index sees of a conversation turn: its date, then `speaker: text`.

Questions about a conversation name when things happened ("in May 2023"), so a turn's
`search_text` starts with the turn's own date (`created_at`, as people write it). Only the
full-text half gets it: the embedded text stays `speaker: text`. General banks keep their
text as it is. Banks written before this keep their `search_text`; new writes get the date.

The previous turn of the same key is not carried into a turn's `search_text`, although it
raised LoCoMo recall@10 most (see bench/RESULTS.md, issue 14): it would leave a copy of a
forgotten, compacted or expired turn's words in its neighbour's index entry, and deletion
must be final.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from memory.entries.chunking import Chunks
from memory.models import Bank, Entry
from memory.store.schema import index_text


def date_text(moment: datetime) -> str:
    """Return the date a turn is indexed with, as people write it: `8 May 2023`."""
    return f"{moment.day} {moment:%B} {moment.year}"


def search_texts(bank: Bank, written: Sequence[Entry], split: Sequence[Chunks]) -> list[str] | None:
    """Return the `search_text` of every chunk row of `written` (each chunk after its entry's
    date), or None for a general bank (the store derives `speaker: text` itself)."""
    if bank.type != "conversation":
        return None
    out: list[str] = []
    for entry, chunks in zip(written, split, strict=True):
        day = date_text(entry.created_at)
        out.extend(f"{day}\n{index_text(entry.speaker, text)}" for text in chunks.texts)
    return out
