"""Every rule an input must pass, written once: text, labels, dates, bank fields, bank types.

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
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ValidationError

from memory.errors import InvalidInput
from memory.models import MEMORY_TYPES, SUMMARY_SPEAKER, Bank, EntryIn, EntryKind

MAX_CONTENT_BYTES = 256_000
"""Largest entry accepted (UTF-8 bytes); split bigger documents before writing."""
MAX_KEY_LENGTH = 512
MAX_TAG_LENGTH = 64
MAX_SPEAKER_LENGTH = 200
"""Longest speaker or role: they are labels, embedded and indexed with every chunk."""
MAX_NAME_LENGTH = 200
"""Longest bank name."""
MAX_THRESHOLD = 2**31 - 1
"""Largest max_tokens / max_turns: far above any partition, and safe in every export format."""
MAX_RETENTION_DAYS = 3_650_000
"""Largest retention: 10,000 years (longer than the calendar behind it expires nothing)."""
FUTURE_SKEW = timedelta(days=1)
"""How far after the clock's now a `created_at` may be (clock skew); later is refused."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""C0 and C1 control characters (newline, tab, ...)."""
_BANK_ID = re.compile(r"[0-9a-f]{32}")
_JSON = json.JSONEncoder(ensure_ascii=False)
"""What `json.dumps(value, ensure_ascii=False)` uses, made once instead of per call."""


class Invalid(InvalidInput):
    """A value broke a rule: the message says which and how to fix it; `code` names the
    kind of problem (`bad_encoding`, `empty_content`, `missing_speaker`,
    `unexpected_speaker`, or `invalid` for every other rule)."""

    def __init__(self, message: str, code: str = "invalid") -> None:
        super().__init__(message)
        self.code = code


# text and labels --------------------------------------------------------------------------


def is_utf8(value: str) -> bool:
    """Return whether `value` can be stored as UTF-8: no lone surrogate (such as bytes
    decoded with `surrogateescape` leave)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_utf8(label: str, value: str) -> None:
    """Raise Invalid (`bad_encoding`) when `value` cannot be stored as UTF-8."""
    if not is_utf8(value):
        raise Invalid(
            f"{label} is not valid UTF-8 text: re-encode the input as UTF-8", "bad_encoding"
        )


def check_text(label: str, value: str) -> int:
    """Return the UTF-8 size of `value`.

    Raises:
        Invalid: `value` is not valid UTF-8 or holds a NUL character.
    """
    if value.isascii():  # the common case: no encode needed to know it is valid
        size = len(value)
    else:
        check_utf8(label, value)
        size = len(value.encode("utf-8"))
    if "\x00" in value:
        raise Invalid(f"{label} contains a NUL character: remove it")
    return size


def check_one_line(label: str, value: str) -> None:
    """Raise Invalid when `value` holds a control character: a newline or tab in a name,
    key, speaker, role or tag breaks every listing that shows it."""
    if _CONTROL.search(value):
        raise _not_one_line(label, value)


def _not_one_line(label: str, value: str) -> Invalid:
    return Invalid(
        f"{label} {value[:80]!r} holds a control character (newline, tab, ...): "
        "make it one line of text"
    )


def check_label(label: str, value: str, limit: int) -> None:
    """Check a one-line label: UTF-8, no NUL, not blank, at most `limit` characters, no
    control characters. Reads check their filters the same way: a label no write accepts
    matches nothing.

    Raises:
        Invalid: the label breaks one of these rules.
    """
    check_text(label, value)
    if not value.strip() or len(value) > limit:
        raise Invalid(f"{label} must be 1-{limit} characters, not blank, got {shown(value)}")
    if _CONTROL.search(value):  # check_one_line, inlined: this runs for every label written
        raise _not_one_line(label, value)


def check_key(key: str) -> None:
    """Check a conversation or group key (see `check_label`)."""
    check_label("key", key, MAX_KEY_LENGTH)


def shown(value: str) -> str:
    """Return `value` as a message shows it: its repr, or its length and start when long."""
    return repr(value) if len(value) <= 80 else f"{len(value)} characters: {value[:60]!r}..."


def check_json(label: str, value: dict[str, Any] | list[dict[str, Any]]) -> str:
    """Return `value` as the JSON text stored for it.

    Raises:
        Invalid: it is not plain JSON data, or holds text that cannot be stored.
    """
    if not value:
        return "{}" if isinstance(value, dict) else "[]"
    try:
        text = _JSON.encode(value)
    except (TypeError, ValueError) as exc:
        raise Invalid(f"{label} must be plain JSON data: {exc}") from exc
    check_text(label, text)
    return text


# dates ------------------------------------------------------------------------------------


def as_utc(value: datetime, label: str) -> datetime:
    """Return `value` in UTC (a naive value is taken as UTC).

    Raises:
        Invalid: the time has no UTC equivalent (a date at the very edge of the calendar).
    """
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise Invalid(
            f"{label} is out of range in UTC: use a date between 0001-01-02 and 9999-12-30"
        ) from None


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
    for label, value in (("max_tokens", max_tokens), ("max_turns", max_turns)):
        if value is not None and not 0 <= value <= MAX_THRESHOLD:
            raise Invalid(
                f"{label} must be 0-{MAX_THRESHOLD} (0 or empty disables it), got {value}"
            )
    if retention_days is not None and not 0 < retention_days <= MAX_RETENTION_DAYS:
        raise Invalid(
            f"retention_days must be 1-{MAX_RETENTION_DAYS} days or null (indefinite), "
            f"got {retention_days}"
        )


# pydantic errors ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Problem:
    """The first problem pydantic found in a record, for a one-line message."""

    field: str
    """Dotted path of the field (`tags.0`), or the name of the whole record."""
    type: str
    """pydantic's error type, e.g. `missing`, `string_type`."""
    message: str
    """pydantic's message, e.g. `Input should be a valid string`."""

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


def first_problem(exc: ValidationError, whole: str) -> Problem:
    """Return the first error of `exc`; `whole` names the record when the error is not
    about one field (the whole input is of the wrong type)."""
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or whole
    return Problem(field=field, type=first["type"], message=first["msg"])
