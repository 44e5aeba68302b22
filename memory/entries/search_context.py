"""What the full-text index sees of a conversation turn: its date, `speaker: text`, then the
turn before it in the same key.

Questions about a conversation name when things happened ("in May 2023"), so a turn's
`search_text` starts with the turn's own date (`created_at`, as people write it). Questions
also join the two halves of an exchange ("What did Ann recommend?" is answered by "Try the
Basque place", said after "Any dinner tips?"), so after CONTEXT_SEPARATOR a turn's first
chunk carries the text of the last chunk of the turn before it, without its speaker (who
said a turn is its own: a name then finds that person's turns, not the replies to them);
`context_id` names that turn. Only the full-text half gets either: the embedded text stays
`speaker: text` (the neighbour made vector recall worse, bench/RESULTS.md issue 14).
General banks keep their text as it is.

Deletion stays final: deleting a turn first takes it out of the index text of the turn
carrying it (`memory.store.neighbours`, called by `memory.purge`). The turn before is the
latest stored turn of the key at or before the new one's time (`created_at`, then write
order) or the previous one in the same write; summaries are never carried.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING

from memory.entries.chunking import Chunks
from memory.models import Bank, Entry
from memory.store import filters
from memory.store.schema import CONTEXT_SEPARATOR, index_text

if TYPE_CHECKING:
    from memory.ports import Store


@dataclass(frozen=True)
class SearchColumns:
    """The derived columns of a conversation write's chunk rows, one value per row."""

    search_text: list[str]
    context_id: list[str | None]


def date_text(moment: datetime) -> str:
    """Return the date a turn is indexed with, as people write it: `8 May 2023`."""
    return _day_text(moment.date())


@lru_cache(maxsize=4096)
def _day_text(day: date) -> str:
    """Return `8 May 2023` for a day (a write's entries mostly share one)."""
    return f"{day.day} {day:%B} {day.year}"


def search_columns(
    store: Store, bank: Bank, written: Sequence[Entry], split: Sequence[Chunks]
) -> SearchColumns | None:
    """Return the `search_text` and `context_id` of every chunk row of `written`, or None for
    a general bank (the store derives `speaker: text` itself).

    Each chunk is indexed after its entry's date; a turn's first chunk also carries the turn
    before it (module docstring). Reads the key's stored turns once per write.
    """
    if bank.type != "conversation":
        return None
    before = _turns_before(store, bank, written, split)
    texts: list[str] = []
    context: list[str | None] = []
    for position, (entry, chunks) in enumerate(zip(written, split, strict=True)):
        day = date_text(entry.created_at)
        previous = before.get(position)
        for index, text in enumerate(chunks.texts):
            own = f"{day}\n{_clean(index_text(entry.speaker, text))}"
            if index == 0 and previous is not None:
                texts.append(f"{own}{CONTEXT_SEPARATOR}{_clean(previous[1])}")
                context.append(previous[0])
            else:
                texts.append(own)
                context.append(None)
    return SearchColumns(texts, context)


def _clean(text: str) -> str:
    """Return `text` without the separator, so a text can never split a row's index text."""
    return text.replace(CONTEXT_SEPARATOR, " ")


def _turns_before(
    store: Store, bank: Bank, written: Sequence[Entry], split: Sequence[Chunks]
) -> dict[int, tuple[str, str]]:
    """Return, by position in `written`, the (entry id, text) of the turn before each new
    turn: the previous one of its key, in this write or stored."""
    turns = [p for p, entry in enumerate(written) if entry.kind == "entry"]
    if not turns:
        return {}
    keys = sorted({written[p].key for p in turns})
    latest = max(written[p].created_at for p in turns)
    stored = store.scan(
        bank.id,
        columns=["entry_id", "key", "created_at", "seq"],
        where=filters.conjoin(
            filters.one_of("key", keys),
            filters.equals("kind", "entry"),
            "chunk_index = 0",
            f"created_at <= {filters.timestamp_literal(latest)}",
        ),
    ).to_pydict()
    # one timeline per key: stored turns by (time, write order), then this write's turns
    timeline: dict[str, list[tuple[datetime, int, int, str]]] = {key: [] for key in keys}
    for entry_id, key, created_at, seq in zip(
        stored["entry_id"], stored["key"], stored["created_at"], stored["seq"], strict=True
    ):
        timeline[key].append((created_at, 0, seq, entry_id))
    for position in turns:
        entry = written[position]
        timeline[entry.key].append((entry.created_at, 1, position, entry.id))
    before: dict[int, str] = {}
    for events in timeline.values():
        events.sort()
        for (_, _, _, previous), (_, new, position, _) in pairwise(events):
            if new:
                before[position] = previous
    return _with_texts(store, bank, written, split, before)


def _with_texts(
    store: Store,
    bank: Bank,
    written: Sequence[Entry],
    split: Sequence[Chunks],
    before: dict[int, str],
) -> dict[int, tuple[str, str]]:
    """Return `before` with the text of each previous turn's last chunk."""
    fresh = {entry.id: chunks for entry, chunks in zip(written, split, strict=True)}
    texts: dict[str, str] = {}
    for entry_id in set(before.values()):
        if entry_id in fresh:
            texts[entry_id] = fresh[entry_id].texts[-1]
    wanted = sorted(set(before.values()).difference(texts))
    if wanted:
        rows = store.scan(
            bank.id,
            columns=["entry_id", "text"],
            where=filters.conjoin(
                filters.one_of("entry_id", wanted), "chunk_index = chunk_count - 1"
            ),
        ).to_pydict()
        texts.update(zip(rows["entry_id"], rows["text"], strict=True))
    return {p: (e, texts[e]) for p, e in before.items() if e in texts}
