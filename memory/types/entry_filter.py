"""Which entries a read, count or final deletion applies to, as data.

Domain code says *what* it wants (`EntryFilter(keys=("k",), kind="summary")`); only
`memory.store` turns that into the engine's filter language, escaping every value there
(`memory.store.filters.where_of`). No storage column name or SQL text lives outside the store.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from memory.models import EntryKind


class EntryFilter(BaseModel):
    """Entries matching every given condition (an empty filter matches every entry).

    Conditions apply to whole entries, never to chunks. `any_of` holds alternatives: an entry
    matches when it matches the other conditions and at least one of `any_of`.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    ids: tuple[str, ...] | None = None
    """Entry ids (None: any id; empty: no entry)."""
    keys: tuple[str, ...] | None = None
    """Partition keys (None: any key; empty: no entry)."""
    kind: EntryKind | None = None
    speaker: str | None = None
    tags: tuple[str, ...] = ()
    """An entry must carry every one of these tags."""
    any_tag: tuple[str, ...] = ()
    """An entry must carry at least one of these tags (empty: no condition)."""
    content: str | None = None
    """The entry's whole text equals this."""
    summarizes_any: tuple[str, ...] = ()
    """A summary covering at least one of these entry ids (empty: no condition)."""
    since: datetime | None = None
    """Created at or after this time."""
    until: datetime | None = None
    """Created before this time (exclusive)."""
    any_of: tuple[EntryFilter, ...] = ()
    """Alternatives: at least one must match (empty: no condition)."""

    @classmethod
    def key(cls, key: str) -> EntryFilter:
        """Return the filter of one partition."""
        return cls(keys=(key,))

    @classmethod
    def entry(cls, entry_id: str) -> EntryFilter:
        """Return the filter of one entry."""
        return cls(ids=(entry_id,))

    @classmethod
    def of_ids(cls, ids: tuple[str, ...] | list[str] | set[str]) -> EntryFilter:
        """Return the filter of these entries (sorted, so equal sets give equal filters)."""
        return cls(ids=tuple(sorted(ids)))

    def and_(self, **conditions: object) -> EntryFilter:
        """Return this filter with more conditions (a given field replaces this one's)."""
        return self.model_copy(update=conditions)

    @property
    def matches_nothing(self) -> bool:
        """True when no entry can match (an empty id or key list)."""
        return self.ids == () or self.keys == ()
