"""The `Seclai-Version` header: which API behaviour a request gets (SPEC "Banks").

A version is a date, `YYYY-MM-DD`. It resolves to the newest behaviour published on or
before it: `2026-08-03` (type-aware retention defaults, `max_age_days` retired) or `legacy`
(the flat 30-day default; `max_age_days` accepted and ignored), which is also what a request
without the header gets. A date after today names no published version: 400, like a value
that is not a date. The resolved version is echoed in the response's `Seclai-Version`.

The header is parsed once, by the request guard, into an `ApiVersion`; routes read what the
bank rules take from it (`ApiVersion.core`), never the header again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from memory.banks import CURRENT_API_VERSION

HEADER = "Seclai-Version"
LEGACY = "legacy"
"""The resolved version of an unversioned request or of a date before 2026-08-03."""
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_CURRENT = date.fromisoformat(CURRENT_API_VERSION)


@dataclass(frozen=True)
class ApiVersion:
    """A request's resolved API version: the current behaviour, or the legacy one."""

    current: bool

    @property
    def label(self) -> str:
        """Return the version as the response's header says it (`2026-08-03` or `legacy`)."""
        return CURRENT_API_VERSION if self.current else LEGACY

    @property
    def core(self) -> str | None:
        """Return the `api_version` the bank rules take (None = unversioned, legacy)."""
        return CURRENT_API_VERSION if self.current else None


class BadVersion(ValueError):
    """The header names no version; the message says what to send."""


def resolve(value: str | None, today: date) -> ApiVersion:
    """Return the resolved version of a header value (None: no header, the legacy one).

    Raises:
        BadVersion: not a YYYY-MM-DD date, or a date after `today`.
    """
    if value is None:
        return ApiVersion(current=False)
    text = value.strip()
    try:
        if not _DATE.match(text):
            raise ValueError(text)
        asked = date.fromisoformat(text)
    except ValueError as exc:
        raise BadVersion(
            f"{HEADER} {value[:40]!r} is not a version: send a date such as "
            f"{CURRENT_API_VERSION} (YYYY-MM-DD), or leave the header out"
        ) from exc
    if asked > today:
        raise BadVersion(
            f"{HEADER} {text} is unknown: no version is published after {today.isoformat()}; "
            f"the current one is {CURRENT_API_VERSION}"
        )
    return ApiVersion(current=asked >= _CURRENT)
