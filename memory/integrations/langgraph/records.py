"""How a LangGraph item is stored as a membank entry, and back (pure: no storage, no
LangGraph import).

An item `(namespace, key) -> value` is one entry of the general bank named `namespace[0]`:
partition key `".".join(namespace[1:] + (key,))` (LangGraph forbids periods in namespace
labels, so the path reads plainly in `membank load`; two items whose joined paths meet are
told apart by their metadata), content the text of the value's indexed fields, and in
metadata `langgraph`: the namespace, key, value, whether it is indexed and when the item was
first made. Each entry carries one tag per namespace prefix below the bank (`ns:<digest>`),
so a search under a prefix is prefiltered by one tag and never reads other namespaces.

A store made with `user_at` keeps the items of a user's namespace as that user's long-term
memories instead (`MembankStore` does the keying): the same content and metadata, tagged
from the first label (`lgns:<digest>`, the first label names no bank there).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from memory.errors import InvalidInput
from memory.models import Entry, EntryIn

META = "langgraph"
"""The metadata field that holds the item (an entry without it is not an item)."""
PREFIX_TAG = "ns:"
"""Start of the tags that name a namespace prefix below the bank."""
ROOT_TAG = "lgns:"
"""Start of the tags that name a namespace prefix from its first label (in the long-term
memory bank, where the first label names no bank)."""
WILDCARD = "*"

Namespace = tuple[str, ...]
IndexFields = Literal[False] | Sequence[str] | None
"""Which fields of a value are its searchable text: False (none: found by listing only),
paths (`"a.b"`, `"items[*].text"`, `"$"` for the whole value) or None (every text leaf)."""


@dataclass(frozen=True)
class StoredItem:
    """An item as read back from its entry."""

    namespace: Namespace
    key: str
    value: dict[str, Any]
    indexed: bool
    created_at: datetime
    updated_at: datetime
    """When the entry holding this value was written (an update writes a new one)."""
    entry_id: str


def partition_key(namespace: Namespace, key: str) -> str:
    """Return the membank key of an item: the namespace below the bank, then the item key."""
    return ".".join((*namespace[1:], key))


def _digest(path: Sequence[str]) -> str:
    return hashlib.blake2b(".".join(path).encode("utf-8"), digest_size=12).hexdigest()


def prefix_tags(namespace: Namespace, *, from_root: bool = False) -> list[str]:
    """Return the tags an entry of `namespace` carries: one per prefix below the bank (or,
    `from_root`, one per prefix from the first label: the long-term memory bank holds every
    namespace of a user)."""
    if from_root:
        return [ROOT_TAG + _digest(namespace[: depth + 1]) for depth in range(len(namespace))]
    below = namespace[1:]
    return [PREFIX_TAG + _digest(below[: depth + 1]) for depth in range(len(below))]


def prefix_tag(prefix: Namespace, *, from_root: bool = False) -> str | None:
    """Return the tag every entry under `prefix` carries (None: the whole bank), using the
    part before any wildcard (`from_root`: as `prefix_tags`)."""
    fixed: list[str] = []
    for label in prefix if from_root else prefix[1:]:
        if label == WILDCARD:
            break
        fixed.append(label)
    if not fixed:
        return None
    return (ROOT_TAG if from_root else PREFIX_TAG) + _digest(fixed)


def leaf_text(value: Any) -> list[str]:
    """Return the text leaves of a JSON value (strings and numbers), in order."""
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int | float):
        return [str(value)]
    if isinstance(value, Mapping):
        return [text for child in value.values() for text in leaf_text(child)]
    if isinstance(value, list | tuple):
        return [text for child in value for text in leaf_text(child)]
    return []


def content_of(value: dict[str, Any], texts: list[str]) -> str:
    """Return an entry's content: the indexed texts, or the value as JSON when it has none
    (membank stores no empty entry)."""
    joined = "\n".join(text for text in texts if text.strip())
    return joined or json.dumps(value, ensure_ascii=False, sort_keys=True)


def entry_in(
    namespace: Namespace,
    key: str,
    value: dict[str, Any],
    *,
    texts: list[str],
    indexed: bool,
    created_at: datetime | None,
    from_root: bool = False,
) -> EntryIn:
    """Return the entry that stores an item in its namespace's bank (`from_root`: tagged
    for the long-term memory bank, which the store then keys by the user).

    Raises:
        InvalidInput: the value is not a JSON object.
    """
    if not isinstance(value, dict):
        raise InvalidInput(f"a LangGraph store value must be a dict, got {type(value).__name__}")
    item: dict[str, Any] = {
        "namespace": list(namespace),
        "key": key,
        "value": value,
        "indexed": indexed,
    }
    if created_at is not None:
        item["created_at"] = created_at.isoformat()
    return EntryIn(
        key=partition_key(namespace, key),
        content=content_of(value, texts),
        tags=prefix_tags(namespace, from_root=from_root),
        metadata={META: item},
    )


def stored_item(entry: Entry) -> StoredItem | None:
    """Return the item an entry holds (None: the entry is not a LangGraph item)."""
    item = entry.metadata.get(META)
    if not isinstance(item, dict):
        return None
    namespace, key, value = item.get("namespace"), item.get("key"), item.get("value")
    if not isinstance(namespace, list) or not isinstance(key, str) or not isinstance(value, dict):
        return None
    made = item.get("created_at")
    return StoredItem(
        namespace=tuple(str(label) for label in namespace),
        key=key,
        value=value,
        indexed=bool(item.get("indexed", True)),
        created_at=datetime.fromisoformat(made) if isinstance(made, str) else entry.created_at,
        updated_at=entry.created_at,
        entry_id=entry.id,
    )


def latest(items: Iterable[StoredItem]) -> list[StoredItem]:
    """Return one item per (namespace, key), the last written (an update writes the new
    entry before it forgets the old, so for a moment both exist)."""
    found: dict[tuple[Namespace, str], StoredItem] = {}
    for item in items:
        seen = found.get((item.namespace, item.key))
        if seen is None or (item.updated_at, item.entry_id) > (seen.updated_at, seen.entry_id):
            found[(item.namespace, item.key)] = item
    return list(found.values())


def under(namespace: Namespace, prefix: Namespace) -> bool:
    """Return whether `namespace` starts with `prefix` (`*` matches any one label)."""
    if len(namespace) < len(prefix):
        return False
    return all(want in (WILDCARD, have) for want, have in zip(prefix, namespace, strict=False))


def ends_with(namespace: Namespace, suffix: Namespace) -> bool:
    """Return whether `namespace` ends with `suffix` (`*` matches any one label)."""
    if len(namespace) < len(suffix):
        return False
    tail = namespace[len(namespace) - len(suffix) :]
    return all(want in (WILDCARD, have) for want, have in zip(suffix, tail, strict=False))


_OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def _compare(have: Any, operator: str, want: Any) -> bool:
    if operator == "$eq":
        return bool(have == want)
    if operator == "$ne":
        return bool(have != want)
    try:
        if operator == "$gt":
            return bool(have > want)
        if operator == "$gte":
            return bool(have >= want)
        if operator == "$lt":
            return bool(have < want)
        return bool(have <= want)
    except TypeError:  # a missing field or another type never matches an ordering
        return False


def _matches(have: Any, want: Any) -> bool:
    if isinstance(want, dict) and want and all(name in _OPERATORS for name in want):
        return all(_compare(have, operator, bound) for operator, bound in want.items())
    if isinstance(want, dict):
        return isinstance(have, dict) and all(
            _matches(have.get(name), bound) for name, bound in want.items()
        )
    return bool(have == want)


def matches_filter(value: dict[str, Any], condition: Mapping[str, Any] | None) -> bool:
    """Return whether a value passes a LangGraph filter: each field equals its value, or
    meets `$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`; nested objects match field by field.

    Raises:
        InvalidInput: an operator LangGraph's stores do not know (`$in`, ...).
    """
    if not condition:
        return True
    for name, want in condition.items():
        if isinstance(want, dict):
            unknown = [op for op in want if op.startswith("$") and op not in _OPERATORS]
            if unknown:
                raise InvalidInput(
                    f"filter on {name!r}: unknown operator {unknown[0]!r}; "
                    f"use one of {', '.join(_OPERATORS)}"
                )
        if not _matches(value.get(name), want):
            return False
    return True
