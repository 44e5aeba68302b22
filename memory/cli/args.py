"""Argument parsing helpers shared by CLI commands: context, dates, text input."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING

from memory.errors import InvalidInput
from memory.types.fields import check_window
from memory.validation import as_utc, check_utf8

if TYPE_CHECKING:
    from memory.context import Context

SINCE_HELP = "created at or after: YYYY-MM-DD or an ISO date-time (UTC unless it has an offset)"
UNTIL_HELP = (
    "created before: an ISO date-time is exclusive; a date YYYY-MM-DD includes that whole day"
)


ContextFactory = Callable[[str | None], "Context"]
"""Returns the context of a command from its --data value (None: MEMBANK_URI or the default)."""


def open_storage(data: str | None) -> Context:
    """Return the context on the storage named by --data or MEMBANK_URI: the CLI's default."""
    from memory.wiring import open_context  # lancedb is heavy: only commands that need it

    return open_context(data)


def context(args: argparse.Namespace) -> Context:
    """Return the command's context from the factory `main` was given (default `open_storage`)."""
    factory: ContextFactory = getattr(args, "context_factory", None) or open_storage
    return factory(getattr(args, "data", None))


def parse_time(value: str | None, flag: str, *, whole_day: bool = False) -> datetime | None:
    """Return an ISO date or datetime as aware UTC; InvalidInput names the flag otherwise.

    Args:
        value: `YYYY-MM-DD` (midnight UTC) or an ISO date-time (UTC unless it has an offset).
        flag: the option's name, for the error message.
        whole_day: a date-only value means the end of that day: the next midnight, for an
            exclusive `--until` that still includes the whole day it names.

    Raises:
        InvalidInput: not an ISO date or date-time, or out of the supported range.
    """
    if value is None:
        return None
    try:
        day = date.fromisoformat(value)
    except ValueError:
        day = None
    if day is not None:
        start = datetime.combine(day, time(), UTC)
        if not whole_day:
            return start
        if day == date.max:  # the end of 9999-12-31 is past the last representable time
            return datetime.max.replace(tzinfo=UTC)
        return start + timedelta(days=1)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise InvalidInput(
            f"{flag} {value!r} is not a date: use YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][+00:00]"
        ) from exc
    return as_utc(parsed, f"{flag} {value!r}")


def time_range(since: str | None, until: str | None) -> tuple[datetime | None, datetime | None]:
    """Return --since and --until parsed (a date-only --until ends with its day).

    Raises:
        InvalidInput: either is not a date, --since is not before --until, or --since is
            after now with no --until (the frame runs to now, so it is empty).
    """
    start = parse_time(since, "--since")
    end = parse_time(until, "--until", whole_day=True)
    check_window(start, end, ("--since", "--until"))
    if start is not None and end is None and start > datetime.now(UTC):
        raise InvalidInput(
            f"--since {since} is in the future: the time frame (to now) is empty; "
            "give an earlier --since"
        )
    return start, end


def add_tag_filter(parser: argparse.ArgumentParser) -> None:
    """Add the repeatable `--tag` filter (every given tag must match) to a subcommand."""
    parser.add_argument(
        "--tag",
        action="append",
        default=[],
        dest="tags",
        help="only entries with this tag; repeated tags must all match (AND)",
    )


def text_arg(value: str) -> str:
    """Return TEXT, reading stdin when it is `-`; rejects text that is not UTF-8."""
    if value == "-":
        data = sys.stdin.buffer.read()
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(
                f"input is not valid UTF-8 (byte {exc.start}): re-encode it as UTF-8"
            ) from exc
    check_utf8("TEXT", value)
    return value


def _whole_number(value: str) -> int:
    try:
        return int(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from exc


def non_negative(value: str) -> int:
    """Return an int >= 0 (argparse type, for limits where 0 disables); a clear error otherwise."""
    number = _whole_number(value)
    if number < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative: use 0 or more (0 disables)")
    return number


def positive(value: str) -> int:
    """Return an int >= 1 (argparse type); a clear error otherwise."""
    number = _whole_number(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value} is not allowed: use 1 or more")
    return number


def pool_name(value: str) -> str:
    """Return a Prefect work pool name (argparse type): one line, not blank, none of / % & > <."""
    if not value.strip() or any(c in value for c in "/%&><") or not value.isprintable():
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a work pool name: use one line of text without / % & > <"
        )
    return value


def port_number(value: str) -> int:
    """Return a TCP port, 1-65535 (argparse type); a clear error otherwise."""
    try:
        number = _whole_number(value)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{value!r} is not a port number: use 1-65535") from exc
    if not 1 <= number <= 65535:
        raise argparse.ArgumentTypeError(f"port {value} is out of range: use 1-65535")
    return number


def retention_days(value: str) -> int:
    """Return a retention in days, >= 1 (argparse type); a clear error otherwise."""
    number = _whole_number(value)
    if number < 1:
        raise argparse.ArgumentTypeError(
            f"{value} is not allowed: use 1 or more days, or --retention-indefinite to keep "
            "entries forever"
        )
    return number
