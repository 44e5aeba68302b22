"""The API version a client asks for: parsed once, then passed on as a value.

A version is a date, `YYYY-MM-DD`. From `2026-08-03` on a bank create gets type-aware
retention defaults and `max_age_days` is refused; an unversioned caller (or an older date)
gets the legacy behaviour (a flat 30-day default; `max_age_days` accepted and ignored).
`ApiVersion.parse` is the one parser (the REST header and Python callers alike); the bank
rules read `ApiVersion.current`. Pure: importing this module loads nothing else of membank.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from memory.errors import InvalidInput

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_CURRENT_DATE = date(2026, 8, 3)
LEGACY_LABEL = "legacy"
"""How the legacy behaviour is named (the REST response's `Seclai-Version` echo)."""


@dataclass(frozen=True)
class ApiVersion:
    """A parsed API version: the date asked for (None: unversioned, the legacy behaviour)."""

    asked: date | None = None

    @classmethod
    def parse(cls, text: str | None) -> ApiVersion:
        """Return the version `text` names (None: unversioned).

        Raises:
            InvalidInput: `text` is not a `YYYY-MM-DD` date.
        """
        if text is None:
            return cls()
        stripped = text.strip()
        try:
            if not _DATE.match(stripped):
                raise ValueError(stripped)
            return cls(date.fromisoformat(stripped))
        except ValueError as exc:
            raise InvalidInput(
                f"bad API version {text[:40]!r}: use a date such as {_CURRENT_DATE} (YYYY-MM-DD)"
            ) from exc

    @property
    def current(self) -> bool:
        """Return True when the version is 2026-08-03 or later (the current bank rules)."""
        return self.asked is not None and self.asked >= _CURRENT_DATE

    @property
    def label(self) -> str:
        """Return the behaviour this version gets, as a header says it (`2026-08-03`, `legacy`)."""
        return _CURRENT_DATE.isoformat() if self.current else LEGACY_LABEL

    def __str__(self) -> str:
        return self.label


CURRENT_API_VERSION = ApiVersion(_CURRENT_DATE)
"""From this API version on: type-aware retention defaults and `max_age_days` rejected."""
LEGACY_API_VERSION = ApiVersion()
"""An unversioned caller's version (the legacy behaviour)."""
