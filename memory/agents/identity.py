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


def untagged(every: Iterable[Entry]) -> list[Entry]:
    """Return the rows written before identity tags existed: no `user:` tag, their user only
    in metadata (compaction summaries, which record no user, are not among them)."""
    return [
        entry
        for entry in every
        if not any(tag.startswith(USER_PREFIX) for tag in entry.tags)
        and isinstance(entry.metadata.get("user"), str)
    ]


def legacy_rows_of(every: Iterable[Entry], user: str) -> list[Entry]:
    """Return the untagged rows (`untagged`) whose metadata names `user`: the wipe's
    fallback, the one place a wipe reads every row and their metadata.

    Needed only until `membank maintain` ran on the layer banks: it tags every such row
    (`tag_legacy_rows`), after which this is always empty.
    """
    return [entry for entry in untagged(every) if entry.metadata.get("user") == user]


def legacy_tag_sets(every: Iterable[Entry]) -> dict[tuple[str, ...], list[str]]:
    """Return the ids of the untagged rows grouped by the identity tags each should carry
    (from its metadata's user and agent)."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for entry in untagged(every):
        agent = entry.metadata.get("agent")
        tags = identity_tags(entry.metadata["user"], agent if isinstance(agent, str) else None)
        groups.setdefault(tuple(tags), []).append(entry.id)
    return groups
