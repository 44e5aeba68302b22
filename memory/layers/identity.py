"""Who a layer row belongs to, stored as data: the one definition of "rows of user U".

Every row an agent layer writes carries its user (and agent) as tags: `user:<digest>` and
`agent:<digest>` (a digest, so any id fits a tag and no id is spelled out in the tag
index). Long-term memories are also keyed by their user. A wipe, an ownership check and a
merge select rows by these tags with an `EntryFilter`: no full scans, no JSON parsing.
Tags with a `:` are never shown as a memory's tags.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from memory.models import Entry
from memory.types.entry_filter import EntryFilter

USER_PREFIX = "user:"
AGENT_PREFIX = "agent:"


def _digest(value: str) -> str:
    return hashlib.blake2b(value.encode("utf-8"), digest_size=12).hexdigest()


def user_tag(user: str) -> str:
    """Return the stored tag of `user`'s rows."""
    return USER_PREFIX + _digest(user)


def agent_tag(agent: str) -> str:
    """Return the stored tag of `agent`'s rows (long-term: the memories only it sees)."""
    return AGENT_PREFIX + _digest(agent)


def identity_tags(user: str, agent: str | None) -> list[str]:
    """Return the tags a layer row of `user` (with `agent`) carries."""
    return [user_tag(user)] + ([agent_tag(agent)] if agent else [])


def rows_of_user(user: str, agent: str | None = None) -> EntryFilter:
    """Return the filter of every row of `user` (with `agent` only, when given)."""
    return EntryFilter(tags=tuple(identity_tags(user, agent)))


def is_identity_tag(tag: str) -> bool:
    """Return True for a stored identity or visibility tag (never shown as a memory tag)."""
    return ":" in tag


def legacy_rows_of(every: Iterable[Entry], user: str) -> list[Entry]:
    """Return the rows written before identity tags existed (no `user:` tag) whose metadata
    names `user`: a wipe must still find them. Only a wipe reads every row for this; once
    no untagged row is left the result is always empty."""
    return [
        entry
        for entry in every
        if not any(tag.startswith(USER_PREFIX) for tag in entry.tags)
        and entry.metadata.get("user") == user
    ]
