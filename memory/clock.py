"""Clocks: the system clock and a fixed one for tests, behind the `Clock` protocol."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory.types.fields import as_utc

__all__ = ["FixedClock", "SystemClock", "as_utc", "days_before"]


def days_before(moment: datetime, days: int) -> datetime | None:
    """Return `moment` minus `days` days, or None when that is before the first datetime."""
    try:
        return moment - timedelta(days=days)
    except OverflowError:
        return None


class SystemClock:
    """Returns the current UTC time."""

    def now(self) -> datetime:
        """Return the current time, timezone-aware UTC."""
        return datetime.now(UTC)


class FixedClock:
    """A clock that only moves when told to (tests, benchmarks, replays)."""

    def __init__(self, start: datetime) -> None:
        self._now = start if start.tzinfo else start.replace(tzinfo=UTC)

    def now(self) -> datetime:
        """Return the clock's current time."""
        return self._now

    def advance(self, delta: timedelta) -> None:
        """Move the clock forward by `delta`."""
        self._now += delta
