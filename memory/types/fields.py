"""Field rules, written once: each limit and each rule on a value lives here, as an
`Annotated` type the request and config models carry, and as a plain check function the
few callers that hold a bare value (`memory.validation`, the CLI's parsers) call.

A broken rule raises `memory.errors.Invalid` (an `InvalidInput`), from the model too:
pydantic lets an exception that is not a `ValueError` through unchanged, so a refused value
gets the same message and the same status (exit 2, 400, tool error) whichever surface it
came in by, as it did when these checks ran after the model was built.

Pure pydantic: importing this module loads no storage engine and no numpy.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationInfo

from memory.errors import Invalid

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
MAX_JSON_DEPTH = 64
"""Deepest nesting of lists and objects in metadata and attachments: deeper data could be
stored but not read back (JSON readers stop at a recursion limit), so it is refused."""
MAX_JSON_BYTES = 65_536
"""Largest metadata (and, apart, attachments) as stored JSON text, in UTF-8 bytes: it is
copied onto every chunk row of the entry and returned by every load and search."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""C0 and C1 control characters (newline, tab, ...)."""


# text and labels --------------------------------------------------------------------------


def shown(value: str) -> str:
    """Return `value` as a message shows it: its repr, or its length and start when long."""
    return repr(value) if len(value) <= 80 else f"{len(value)} characters: {value[:60]!r}..."


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


def not_one_line(label: str, value: str) -> Invalid:
    """Return the error for a label holding a control character."""
    return Invalid(
        f"{label} {value[:80]!r} holds a control character (newline, tab, ...): "
        "make it one line of text"
    )


def check_one_line(label: str, value: str) -> None:
    """Raise Invalid when `value` holds a control character: a newline or tab in a name,
    key, speaker, role or tag breaks every listing that shows it."""
    if _CONTROL.search(value):
        raise not_one_line(label, value)


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
        raise not_one_line(label, value)


def _label(name: str, limit: int) -> AfterValidator:
    def check(value: str) -> str:
        check_label(name, value, limit)
        return value

    return AfterValidator(check)


def _utf8_text(value: str, info: ValidationInfo) -> str:
    check_text(info.field_name or "text", value)
    return value


Key = Annotated[str, _label("key", MAX_KEY_LENGTH)]
"""A conversation or group key: a one-line label of 1-512 characters."""
Tag = Annotated[str, _label("tag", MAX_TAG_LENGTH)]
"""A tag: a one-line label of 1-64 characters."""
Speaker = Annotated[str, _label("speaker", MAX_SPEAKER_LENGTH)]
"""A speaker (conversation banks): a one-line label of 1-200 characters."""
Role = Annotated[str, _label("role", MAX_SPEAKER_LENGTH)]
"""A role (system, user, assistant, ...): a one-line label of 1-200 characters."""
Label = Annotated[str, _label("bank name", MAX_NAME_LENGTH)]
"""A bank name: a one-line label of 1-200 characters."""
Text = Annotated[str, AfterValidator(_utf8_text)]
"""Free text that can be stored: valid UTF-8 (no lone surrogate), no NUL."""


# numbers ----------------------------------------------------------------------------------


def _not_a_bool(value: Any, info: ValidationInfo) -> Any:
    if isinstance(value, bool):  # a bool is an int to Python and to pydantic's lax mode
        raise Invalid(
            f"{info.field_name} must be a whole number, not {str(value).lower()}: "
            "give a number (or null)"
        )
    return value


def check_threshold(label: str, value: int | None) -> None:
    """Raise Invalid unless `value` is None or a compaction threshold in range."""
    if value is not None and not 0 <= value <= MAX_THRESHOLD:
        raise Invalid(f"{label} must be 0-{MAX_THRESHOLD} (0 or empty disables it), got {value}")


def check_retention_days(value: int | None) -> None:
    """Raise Invalid unless `value` is None (indefinite) or 1-MAX_RETENTION_DAYS days."""
    if value is not None and not 0 < value <= MAX_RETENTION_DAYS:
        raise Invalid(
            f"retention_days must be 1-{MAX_RETENTION_DAYS} days or null (indefinite), got {value}"
        )


def _threshold(value: int, info: ValidationInfo) -> int:
    check_threshold(info.field_name or "threshold", value)
    return value


def _retention(value: int) -> int:
    check_retention_days(value)
    return value


WholeNumber = Annotated[int, BeforeValidator(_not_a_bool)]
"""An int that is not a bool (`true` is not 1)."""
Threshold = Annotated[int, BeforeValidator(_not_a_bool), AfterValidator(_threshold)]
"""A compaction threshold (max_tokens, max_turns): 0 (off) to 2**31-1; not a bool."""
RetentionDays = Annotated[int, BeforeValidator(_not_a_bool), AfterValidator(_retention)]
"""Days an entry is kept: 1 to 3,650,000 (None, where allowed, is indefinite); not a bool."""


# JSON data --------------------------------------------------------------------------------


def check_json_size(label: str, text: str) -> None:
    """Raise Invalid when `text` (a value's stored JSON) is over `MAX_JSON_BYTES`."""
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_JSON_BYTES:
        raise Invalid(
            f"{label} is {size:,} bytes as JSON, over {MAX_JSON_BYTES:,}: keep large data "
            "in the entry's content or elsewhere, and store a reference"
        )


def check_json_safe(label: str, value: Any) -> None:
    """Raise Invalid unless `value` can be stored and read back as JSON: no NaN or
    Infinity (JSON has neither), nesting at most `MAX_JSON_DEPTH` deep, text valid UTF-8.
    Types other than JSON's are left to the encoder."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth >= MAX_JSON_DEPTH:
                raise Invalid(
                    f"{label} is nested more than {MAX_JSON_DEPTH} levels deep: "
                    "flatten it (deeper data could not be read back)"
                )
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
            if isinstance(item, dict):
                for key in item:
                    if isinstance(key, str):
                        check_text(f"{label} key", key)
        elif isinstance(item, float) and not math.isfinite(item):
            raise Invalid(
                f"{label} holds {item}: JSON has no NaN or Infinity, send a finite number or null"
            )
        elif isinstance(item, str):
            check_text(label, item)


def _json_safe(value: Any, info: ValidationInfo) -> Any:
    if value:
        check_json_safe(info.field_name or "metadata", value)
    return value


Metadata = Annotated[dict[str, Any], AfterValidator(_json_safe)]
"""Free-form JSON object: finite numbers, at most `MAX_JSON_DEPTH` deep, valid UTF-8."""
Attachments = Annotated[list[dict[str, Any]], AfterValidator(_json_safe)]
"""A list of JSON objects, under the same rules as `Metadata`."""


# time -------------------------------------------------------------------------------------


def as_utc(value: datetime, label: str = "time") -> datetime:
    """Return `value` in UTC (a naive value, as storage returns it, is taken as UTC).

    Raises:
        Invalid: the time has no UTC equivalent (a date at the very edge of the calendar).
    """
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    if value.tzinfo is UTC:
        return value
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise Invalid(
            f"{label} is out of range in UTC: use a date between 0001-01-02 and 9999-12-30"
        ) from None


def _utc(value: datetime, info: ValidationInfo) -> datetime:
    return as_utc(value, info.field_name or "time")


UtcTime = Annotated[datetime, AfterValidator(_utc)]
"""A point in time, normalised to UTC (a naive value is taken as UTC)."""


class TimeWindow(BaseModel):
    """A time frame [since, until): either end may be open; since must be before until."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    since: UtcTime | None = None
    """Entries created at or after this time."""
    until: UtcTime | None = None
    """Entries created before this time (exclusive)."""

    def model_post_init(self, context: Any, /) -> None:
        check_window(self.since, self.until)


def check_window(
    since: datetime | None, until: datetime | None, names: tuple[str, str] = ("since", "until")
) -> None:
    """Raise Invalid when both ends are given and `since` is not before `until`; `names`
    are what the caller calls the two ends (the CLI: `--since`, `--until`)."""
    if since is not None and until is not None and as_utc(since) >= as_utc(until):
        first, last = names
        raise Invalid(
            f"{first} ({since:%Y-%m-%d %H:%M}) must be before {last} "
            f"({until:%Y-%m-%d %H:%M}): the time frame is empty ({last} is exclusive)"
        )
