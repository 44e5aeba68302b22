"""The `Seclai-Version` header: which API behaviour a request gets (SPEC "Banks").

A version is a date, `YYYY-MM-DD`. It resolves to the newest behaviour published on or
before it: `2026-08-03` (type-aware retention defaults, `max_age_days` retired) or `legacy`
(the flat 30-day default; `max_age_days` accepted and ignored), which is also what a request
without the header gets. A date after today names no published version: 400, like a value
that is not a date. The resolved version is echoed in the response's `Seclai-Version`.

The header is parsed once, by the request guard, into an `ApiVersion` (`ApiVersion.parse`,
the one parser); routes pass that value on to the bank use cases, never the header again.
"""

from __future__ import annotations

from datetime import date

from memory.errors import InvalidInput
from memory.ops.banks import CURRENT_API_VERSION, LEGACY_API_VERSION, ApiVersion

HEADER = "Seclai-Version"

__all__ = ["HEADER", "ApiVersion", "BadVersion", "resolve"]


class BadVersion(ValueError):
    """The header names no version; the message says what to send."""


def resolve(value: str | None, today: date) -> ApiVersion:
    """Return the resolved version of a header value (None: no header, the legacy one).

    Raises:
        BadVersion: not a YYYY-MM-DD date, or a date after `today`.
    """
    if value is None:
        return LEGACY_API_VERSION
    try:
        asked = ApiVersion.parse(value)
    except InvalidInput as exc:
        raise BadVersion(
            f"{HEADER} {value[:40]!r} is not a version: send a date such as "
            f"{CURRENT_API_VERSION} (YYYY-MM-DD), or leave the header out"
        ) from exc
    assert asked.asked is not None  # a value was sent
    if asked.asked > today:
        raise BadVersion(
            f"{HEADER} {asked.asked.isoformat()} is unknown: no version is published after "
            f"{today.isoformat()}; the current one is {CURRENT_API_VERSION}"
        )
    return asked
