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
carrying it (`memory.store.neighbours`, called by `memory.purge` under the bank's lock), and
a write reads the turns it carries and commits under the same lock (`LanceStore.append`), so a
deletion never misses a carrier written while it runs (on object storage the lock holds
within one process, as for every deletion). The turn before is the
latest stored turn of the key at or before the new one's time (`created_at`, then write
order) or the previous one in the same write; summaries are never carried.

A turn carries the turn before only from the same exchange: at most `within` earlier
(`Settings.neighbour_within_hours`, 6 hours by default). A key that resumes days later
starts afresh, its first turn found by its own words. Besides the recall (a turn from days
before is no context), this keeps deletion by time cheap: the rows carrying a turn that
retention expires sit only in the fragments written within that bound after its cutoff, so
retention drops whole old fragments of the carried table as of the entries table
(bench/RESULTS.md "gap24").
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from memory.models import Entry
from memory.store import filters
from memory.store.latest_turns import Latest, Stamp, stamp_of
from memory.store.schema import CONTEXT_SEPARATOR
from memory.types.entry_text import index_text

if TYPE_CHECKING:
    from memory.store.lance import LanceStore


@dataclass(frozen=True)
class SearchColumns:
    """The derived columns of a conversation write's chunk rows, one value per row."""

    search_text: list[str]
    context_id: list[str | None]
    carried: list[Carried | None]
    """The carried turn's own filter columns, per row (`memory.store.carried`)."""
    stamp: Stamp | None = None
    """The entries table's version the carried turns were read at (None: none read)."""
    latest: dict[str, Latest] = field(default_factory=dict)
    """Each written key's latest turn once the rows are stored (`latest_turns`)."""


@dataclass(frozen=True)
class Carried:
    """The turn a row carries: its id, last chunk's text and the columns a filter tests."""

    entry_id: str
    text: str
    speaker: str | None
    tags: list[str]
    created_at: datetime


def date_text(moment: datetime) -> str:
    """Return the date a turn is indexed with, as people write it: `8 May 2023`."""
    return _day_text(moment.date())


@lru_cache(maxsize=4096)
def _day_text(day: date) -> str:
    """Return `8 May 2023` for a day (a write's entries mostly share one)."""
    return f"{day.day} {day:%B} {day.year}"


def search_columns(
    store: LanceStore,
    bank_id: str,
    written: Sequence[Entry],
    split: Sequence[Sequence[str]],
    *,
    carry: bool = True,
    within: timedelta | None = None,
) -> SearchColumns:
    """Return the `search_text` and `context_id` of every chunk row of a conversation
    bank's `written`, chunked as `split` (a general bank's the store derives: `speaker:
    text`).

    Each chunk is indexed after its entry's date; a turn's first chunk also carries the turn
    before it (module docstring) unless `carry` is False (`Settings.neighbour_index`) or
    that turn is more than `within` earlier (None: however long before). Reads
    the keys' stored turns: the caller holds the bank's lock from here to its commit, so no
    deletion of a carried turn falls in between.
    """
    found = _turns_before(store, bank_id, written, split) if carry else _Before({}, None, {})
    before = found.turns
    texts: list[str] = []
    context: list[str | None] = []
    carried: list[Carried | None] = []
    for position, (entry, chunks) in enumerate(zip(written, split, strict=True)):
        day = date_text(entry.created_at)
        previous = before.get(position)
        if previous is not None and within is not None:
            previous = previous if entry.created_at - previous.created_at <= within else None
        for index, text in enumerate(chunks):
            own = f"{day}\n{_clean(index_text(entry.speaker, text))}"
            if index == 0 and previous is not None:
                texts.append(f"{own}{CONTEXT_SEPARATOR}{_clean(previous.text)}")
                context.append(previous.entry_id)
                carried.append(previous)
            else:
                texts.append(own)
                context.append(None)
                carried.append(None)
    return SearchColumns(texts, context, carried, found.stamp, found.latest)


def _clean(text: str) -> str:
    """Return `text` without the separator, so a text can never split a row's index text."""
    return text.replace(CONTEXT_SEPARATOR, " ")


def _turns_before(
    store: LanceStore, bank_id: str, written: Sequence[Entry], split: Sequence[Sequence[str]]
) -> _Before:
    """Return, by position in `written`, the (entry id, text of its last chunk) of the turn
    before each new turn: the previous one of its key, in this write or stored (stored
    turns at the same time come first: they were written earlier); with the table's stamp
    as read and each key's latest turn once the write is stored (`latest_turns`)."""
    by_key: dict[str, list[int]] = {}
    for position, entry in enumerate(written):
        if entry.kind == "entry":
            by_key.setdefault(entry.key, []).append(position)
    table = store.entries_table(bank_id) if by_key else None
    if table is None:
        return _Before({}, None, {})
    dataset = table.to_lance()  # one version for both reads (the caller holds the lock)
    stamp = stamp_of(dataset)
    stored = _timelines(store, bank_id, dataset, stamp, written, by_key)
    before: dict[int, Carried] = {}
    stored_before: dict[int, int | Carried] = {}  # stored turns carried (row ids: read below)
    latest: dict[str, Latest] = {}
    for key, positions in by_key.items():
        timeline = stored.get(key)
        times = timeline.times if timeline else []
        previous: tuple[int, Carried] | None = None  # the last new turn placed
        for position in sorted(positions, key=lambda p: (written[p].created_at, p)):
            moment = _micros(written[position].created_at)
            older = bisect_right(times, moment)  # stored turns at or before this one
            if previous is not None and (not older or previous[0] >= times[older - 1]):
                before[position] = previous[1]
            elif timeline is not None and older:
                stored_before[position] = timeline.turns[older - 1]
            entry = written[position]
            turn = Carried(
                entry.id, split[position][-1], entry.speaker, list(entry.tags), entry.created_at
            )
            previous = (moment, turn)
        if previous is not None and (not times or previous[0] >= times[-1]):
            latest[key] = Latest(*previous)  # else a stored turn is later: not remembered
    row_ids = sorted({ref for ref in stored_before.values() if isinstance(ref, int)})
    turns = _stored_turns(dataset, row_ids)
    before.update(
        {p: turns[ref] if isinstance(ref, int) else ref for p, ref in stored_before.items()}
    )
    return _Before(before, stamp, latest)


@dataclass(frozen=True)
class _Before:
    """The turns a write carries, by position, and what `latest_turns` keeps of it."""

    turns: dict[int, Carried]
    stamp: Stamp | None
    """The entries table's version as read (None: no table, nothing read)."""
    latest: dict[str, Latest]
    """Each written key's latest turn once the write is stored (keys whose stored turn is
    later than every new one are left out)."""


def _timelines(
    store: LanceStore,
    bank_id: str,
    dataset: Any,
    stamp: Stamp,
    written: Sequence[Entry],
    by_key: dict[str, list[int]],
) -> dict[str, _Timeline]:
    """Return the stored turns of each key a write carries from: the latest one remembered
    (`latest_turns`) when no new turn of the key is older than it, else all of the key's
    stored turns from a scan."""
    first = {k: min(_micros(written[p].created_at) for p in ps) for k, ps in by_key.items()}
    known = store.latest_turns.known(bank_id, stamp, by_key)
    usable = {key: latest for key, latest in known.items() if latest.micros <= first[key]}
    stored = _stored_timelines(dataset, sorted(k for k in by_key if k not in usable))
    for key, latest in usable.items():
        if latest.turn is not None:
            stored[key] = _Timeline([latest.micros], [latest.turn])
    return stored


@dataclass(frozen=True)
class _Timeline:
    """A key's stored turns, in order (their last chunks)."""

    times: list[int]
    """Microseconds since the epoch, ascending (ties in write order)."""
    turns: list[int | Carried]
    """Their rows' ids (to read), or the turn itself when remembered, in the same order."""


def _stored_turns(dataset: Any, row_ids: list[int]) -> dict[int, Carried]:
    """Return the stored turns at `row_ids` (their last chunks), taken by row id."""
    if not row_ids:
        return {}
    columns = ["entry_id", "text", "speaker", "tags", "created_at"]
    rows = dataset._take_rows(row_ids, columns=columns).to_pylist()
    return {
        row_id: Carried(
            row["entry_id"], row["text"], row["speaker"], row["tags"] or [], row["created_at"]
        )
        for row_id, row in zip(row_ids, rows, strict=True)
    }


def _stored_timelines(dataset: Any, keys: list[str]) -> dict[str, _Timeline]:
    """Return the stored turns of each key, in order (all of them: the last one is what
    `latest_turns` remembers).

    One scan (the key index narrows it to the keys' rows) of each turn's last chunk, its
    small columns and row ids only, sorted in Arrow; the turns carried are then taken by row
    id (`_stored_turns`: reading every text of the keys cost 2.5x the scan at 300k turns)."""
    if not keys:
        return {}
    table = dataset.to_table(
        columns=["key", "created_at", "seq"],
        filter=filters.conjoin(
            filters.one_of("key", keys),
            filters.equals("kind", "entry"),
            "chunk_index = chunk_count - 1",
        ),
        with_row_id=True,
    )
    if not table.num_rows:
        return {}
    table = table.sort_by([("key", "ascending"), ("created_at", "ascending"), ("seq", "ascending")])
    runs = pc.run_end_encode(table.column("key").combine_chunks())
    times = table.column("created_at").cast(pa.int64()).to_pylist()
    ids = table.column("_rowid").to_pylist()
    out: dict[str, _Timeline] = {}
    start = 0
    for key, end in zip(runs.values.to_pylist(), runs.run_ends.to_pylist(), strict=True):
        turns: list[int | Carried] = list(ids[start:end])
        out[key] = _Timeline(times[start:end], turns)
        start = end
    return out


def _micros(moment: datetime) -> int:
    """Return a UTC datetime as microseconds since the epoch (the stored timestamps' unit)."""
    return (moment - _EPOCH) // _MICROSECOND


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
