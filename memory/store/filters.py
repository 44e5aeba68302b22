"""Build storage filter strings; every user-supplied value is escaped as a SQL literal here.

This is the only place predicates are assembled. A key such as `x' OR '1'='1` becomes the
literal `'x'' OR ''1''=''1'` and matches only the partition literally named that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime

from memory.errors import InvalidInput
from memory.types.entry_filter import EntryFilter
from memory.validation import check_text


def literal(value: str) -> str:
    """Return `value` as a single-quoted SQL string literal.

    Raises:
        ValueError: the value holds a NUL or is not valid UTF-8 (a lone surrogate), so no
            stored value can equal it and the engine could not even read the predicate.
    """
    try:
        check_text("filter value", value)
    except InvalidInput as exc:
        raise ValueError(str(exc)) from None
    return "'" + value.replace("'", "''") + "'"


def timestamp_literal(value: datetime) -> str:
    """Return a UTC timestamp literal for a timezone-aware (or UTC-naive) datetime."""
    aware = value if value.tzinfo else value.replace(tzinfo=UTC)
    text = aware.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds")
    return f"arrow_cast('{text}', 'Timestamp(Microsecond, Some(\"UTC\"))')"


def list_literal(values: Iterable[str]) -> str:
    """Return a SQL array literal of escaped strings."""
    return "[" + ", ".join(literal(v) for v in values) + "]"


def equals(column: str, value: str) -> str:
    """Return `column = 'value'` with the value escaped."""
    return f"{column} = {literal(value)}"


def one_of(column: str, values: Sequence[str]) -> str:
    """Return `column IN (...)` with every value escaped."""
    if not values:
        return "false"
    return f"{column} IN ({', '.join(literal(v) for v in values)})"


def entry_filter(
    *,
    key: str | None = None,
    tags: Sequence[str] = (),
    speaker: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    kind: str | None = None,
    names: Mapping[str, str] | None = None,
) -> str | None:
    """Return the AND of the given entry filters, or None when there are none (`names`:
    other columns to test in place of the entry's own, `carried.CARRIED_NAMES`)."""
    name = (names or {}).get
    parts: list[str] = []
    if key is not None:
        parts.append(equals(name("key", "key"), key))
    if speaker is not None:
        parts.append(equals(name("speaker", "speaker"), speaker))
    if tags:
        parts.append(f"array_has_all({name('tags', 'tags')}, {list_literal(tags)})")
    if since is not None:
        parts.append(f"{name('created_at', 'created_at')} >= {timestamp_literal(since)}")
    if until is not None:
        parts.append(f"{name('created_at', 'created_at')} < {timestamp_literal(until)}")
    if kind is not None:
        parts.append(equals(name("kind", "kind"), kind))
    return " AND ".join(f"({p})" for p in parts) if parts else None


def conjoin(*parts: str | None) -> str | None:
    """Return the AND of the non-empty predicates, or None."""
    kept = [p for p in parts if p]
    return " AND ".join(f"({p})" for p in kept) if kept else None


HEAD_ROWS = "chunk_index = 0"
"""One row per entry: its first chunk, which carries the entry's whole `content`."""


def where_of(flt: EntryFilter | None, names: Mapping[str, str] | None = None) -> str | None:
    """Return the escaped predicate of an entry filter over chunk rows (None: every row).

    The predicate matches every chunk row of a matching entry (entry-level columns repeat on
    each chunk), except `content`, which only the first chunk row holds; add HEAD_ROWS
    (`heads_of`) for one row per entry. With `names`, the filter tests those columns in place
    of the entry's own (a carried row's columns of the turn it carries).

    Raises:
        KeyError: `names` lacks a column the filter tests (`content`, `summary_of`).
    """
    if flt is None:
        return None
    if flt.matches_nothing:
        return "false"
    name = (lambda column: names[column]) if names is not None else (lambda column: column)
    parts: list[str | None] = [
        entry_filter(
            tags=flt.tags,
            speaker=flt.speaker,
            since=flt.since,
            until=flt.until,
            kind=flt.kind,
            names=names,
        )
    ]
    if flt.ids is not None:
        parts.append(one_of(name("entry_id"), flt.ids))
    if flt.keys is not None:
        parts.append(one_of(name("key"), flt.keys))
    if flt.any_tag:
        tags = name("tags")
        parts.append(" OR ".join(f"array_has({tags}, {literal(tag)})" for tag in flt.any_tag))
    if flt.content is not None:
        parts.append(equals(name("content"), flt.content))
    if flt.summarizes_any:
        parts.append(
            f"{name('kind')} = 'summary' AND "
            f"array_has_any({name('summary_of')}, {list_literal(flt.summarizes_any)})"
        )
    if flt.any_of:
        alternatives = [where_of(alt, names) or "true" for alt in flt.any_of]
        parts.append(" OR ".join(f"({alt})" for alt in alternatives))
    return conjoin(*parts)


def heads_of(flt: EntryFilter | None) -> str:
    """Return the predicate of the first chunk row of each entry `flt` matches."""
    inner = where_of(flt)
    return HEAD_ROWS if inner is None else f"({HEAD_ROWS}) AND ({inner})"
