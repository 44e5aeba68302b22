"""Argument parsing helpers shared by CLI commands: context, dates, text input."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from memory.errors import InvalidInput

if TYPE_CHECKING:
    from memory.context import Context


def context(args: argparse.Namespace) -> Context:
    """Return the context for the storage URI given by --data or MEMBANK_URI."""
    from memory.context import open_context  # lancedb is heavy: only commands that need it

    return open_context(getattr(args, "data", None))


def parse_time(value: str | None, flag: str) -> datetime | None:
    """Return an ISO date or datetime as aware UTC; InvalidInput names the flag otherwise."""
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise InvalidInput(
            f"{flag} {value!r} is not a date: use YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][+00:00]"
        ) from exc
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


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
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput("TEXT is not valid UTF-8: re-encode it as UTF-8") from exc
    return value


def non_negative(value: str) -> int:
    """Return an int >= 0 (argparse type); a clear error otherwise."""
    try:
        number = int(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from exc
    if number < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative: use 0 or more (0 disables)")
    return number


def positive(value: str) -> int:
    """Return an int >= 1 (argparse type); a clear error otherwise."""
    number = non_negative(value)
    if number < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return number
