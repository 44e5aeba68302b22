"""The rules types cannot carry (they need the bank, the clock or several fields), and the
entry point every write calls; the field rules and limits themselves live in
`memory.types.fields` and are re-exported here for the callers that check bare values.

Every rule an input must pass, written once: text, labels, dates, bank fields, bank types.

Each way in calls these functions: `entries.write` and `entries.validate`, ingest, import,
the CLI's arguments, the read filters of load, search and export, and bank create/update
(later the REST API and the agent layers too). So a value one of them accepts, all accept,
and a refused value gets the same message everywhere. A broken rule raises `Invalid`, an
`InvalidInput` that also carries a short code, under which ingest files its rejected rows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from memory.errors import Invalid
from memory.models import MEMORY_TYPES, SUMMARY_SPEAKER, Bank, EntryIn, EntryKind
from memory.types.fields import (
    MAX_KEY_LENGTH,
    MAX_NAME_LENGTH,
    MAX_RETENTION_DAYS,
    MAX_SPEAKER_LENGTH,
    MAX_TAG_LENGTH,
    MAX_THRESHOLD,
    as_utc,
    check_json_safe,
    check_json_size,
    check_label,
    check_one_line,
    check_retention_days,
    check_text,
    check_threshold,
    check_utf8,
    is_utf8,
    shown,
)
from memory.types.problems import Problem, first_problem

__all__ = [
    "MAX_CONTENT_BYTES",
    "MAX_KEY_LENGTH",
    "MAX_NAME_LENGTH",
    "MAX_RETENTION_DAYS",
    "MAX_SPEAKER_LENGTH",
    "MAX_TAG_LENGTH",
    "MAX_THRESHOLD",
    "Invalid",
    "Problem",
    "as_utc",
    "check_bank_fields",
    "check_created_at",
    "check_entry",
    "check_filters",
    "check_json",
    "check_key",
    "check_label",
    "check_one_line",
    "check_text",
    "check_utf8",
    "first_problem",
    "is_utf8",
    "shown",
]

MAX_CONTENT_BYTES = 256_000
"""Largest entry accepted (UTF-8 bytes); split bigger documents before writing."""
FUTURE_SKEW = timedelta(days=1)
"""How far after the clock's now a `created_at` may be (clock skew); later is refused."""

_BANK_ID = re.compile(r"[0-9a-f]{32}")
_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False)
"""What `json.dumps(value, ensure_ascii=False)` uses, made once instead of per call; NaN
and Infinity are refused (JSON has neither)."""


def check_key(key: str) -> None:
    """Check a conversation or group key (see `check_label`)."""
    check_label("key", key, MAX_KEY_LENGTH)


def check_json(label: str, value: dict[str, Any] | list[dict[str, Any]]) -> str:
    """Return `value` as the JSON text stored for it.

    Raises:
        Invalid: it is not plain JSON data (NaN and Infinity included), is nested too
            deep to read back, or holds text that cannot be stored.
    """
    if not value:
        return "{}" if isinstance(value, dict) else "[]"
    check_json_safe(label, value)
    try:
        text = _JSON.encode(value)
    except (TypeError, ValueError) as exc:
        raise Invalid(f"{label} must be plain JSON data: {exc}") from exc
    check_text(label, text)
    check_json_size(label, text)
    return text


# dates ------------------------------------------------------------------------------------


def check_created_at(value: datetime | None, now: datetime) -> datetime | None:
    """Return an entry's `created_at` in UTC (None stays None: the write dates it).

    Raises:
        Invalid: the time is more than `FUTURE_SKEW` after `now` (its age would be negative
            and retention would never delete it), or out of range in UTC.
    """
    if value is None:
        return None
    when = as_utc(value, f"created_at {value.isoformat()}")
    if when > now + FUTURE_SKEW:
        raise Invalid(
            f"created_at {when.isoformat()} is in the future: at most one day after now "
            f"({now.isoformat(timespec='seconds')}) is accepted; fix the date"
        )
    return when


# entries ----------------------------------------------------------------------------------


def check_entry(
    bank: Bank, item: EntryIn, kind: EntryKind = "entry", *, now: datetime | None
) -> tuple[str, str]:
    """Check `item` as an entry of `kind` in `bank`; returns its metadata and attachments
    as the JSON text stored for them.

    Args:
        bank: the target bank; its type decides speaker, role and memory type rules.
        item: the entry to check.
        kind: `summary` may carry the reserved summary speaker, `entry` may not.
        now: the clock's time, for the `created_at` rule (None: the date is not checked;
            nor is a summary's, which is its oldest covered entry's).

    Raises:
        Invalid: the first rule the entry breaks; the message names the field.
    """
    size = check_text("content", item.content)
    if not item.content.strip():
        raise Invalid("content is empty: write some text", "empty_content")
    if size > MAX_CONTENT_BYTES:
        raise Invalid(f"content is {size} bytes, over the {MAX_CONTENT_BYTES}-byte limit: split it")
    check_label("key", item.key, MAX_KEY_LENGTH)
    if bank.type == "conversation":
        _check_conversation_fields(item, kind)
    else:
        _check_general_fields(item)
    if item.role is not None:
        if not item.role.strip():
            raise Invalid("role is blank: give a role (system, user, assistant, ...) or none")
        check_label("role", item.role, MAX_SPEAKER_LENGTH)
    for tag in item.tags:
        check_label("tag", tag, MAX_TAG_LENGTH)
    if item.id is not None:
        check_text("id", item.id)
        if not item.id.strip():
            raise Invalid("id is blank: give the entry an id, or none for a new one")
    # a summary is dated like the oldest entry it covers, already checked when it was
    # written (by a writer whose clock may run ahead of this one's)
    if now is not None and item.created_at is not None and kind != "summary":
        check_created_at(item.created_at, now)
    return check_json("metadata", item.metadata), check_json("attachments", item.attachments)


def _check_conversation_fields(item: EntryIn, kind: EntryKind) -> None:
    if item.speaker is None or not item.speaker.strip():
        raise Invalid(
            "speaker is missing: every entry of a conversation bank needs one",
            "missing_speaker",
        )
    check_label("speaker", item.speaker, MAX_SPEAKER_LENGTH)
    if kind == "entry" and item.speaker == SUMMARY_SPEAKER:
        raise Invalid(
            f"speaker {SUMMARY_SPEAKER!r} is reserved for compaction summaries: "
            "give the entry another speaker"
        )
    if item.memory_type is not None:
        raise Invalid(
            f"memory_type is {shown(item.memory_type)}: memory types belong to general banks"
        )


def _check_general_fields(item: EntryIn) -> None:
    if item.speaker is not None:
        raise Invalid(
            f"speaker is {shown(item.speaker)}: entries of a general bank have no speaker "
            "(drop it, or use a conversation bank)",
            "unexpected_speaker",
        )
    if item.role is not None:
        raise Invalid(f"role is {shown(item.role)}: roles belong to conversation banks")
    if item.memory_type is not None and item.memory_type not in MEMORY_TYPES:
        raise Invalid(
            f"unknown memory type {shown(item.memory_type)}: use one of {', '.join(MEMORY_TYPES)}"
        )


def check_filters(
    bank: Bank, *, key: str | None = None, speaker: str | None = None, tags: Sequence[str] = ()
) -> None:
    """Check the label filters of a read (load, search, export) as a write checks labels.

    Raises:
        Invalid: a label no entry could hold (blank, too long, NUL, not UTF-8, not one
            line), or a speaker filter on a general bank.
    """
    if speaker is not None and bank.type == "general":
        raise Invalid(
            f"bank {bank.name!r} is a general bank: entries have no speaker (drop --speaker)"
        )
    if key is not None:
        check_key(key)
    if speaker is not None:
        check_label("speaker", speaker, MAX_SPEAKER_LENGTH)
    for tag in tags:
        check_label("tag", tag, MAX_TAG_LENGTH)


# banks ------------------------------------------------------------------------------------


def check_bank_fields(
    *,
    name: str | None = None,
    description: str | None = None,
    compaction_prompt: str | None = None,
    max_tokens: int | None = None,
    max_turns: int | None = None,
    retention_days: int | None = None,
) -> None:
    """Check the bank fields given (None = not given, or null).

    Raises:
        Invalid: a name that is blank, too long, not one line or looks like a bank id;
            text that cannot be stored; a threshold or retention out of range.
    """
    if name is not None:
        check_label("bank name", name, MAX_NAME_LENGTH)
        if _BANK_ID.fullmatch(name):
            raise Invalid(
                f"bank name {name!r} looks like a bank id (32 hex digits): commands take a "
                "name or an id, so pick a name that is not one"
            )
    for label, text in (("description", description), ("compaction_prompt", compaction_prompt)):
        if text is not None:
            check_text(f"bank {label}", text)
    check_threshold("max_tokens", max_tokens)
    check_threshold("max_turns", max_turns)
    check_retention_days(retention_days)
