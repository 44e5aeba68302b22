"""Pages of entries as data: where a page starts (a cursor) and what it holds; the store
reads them (`memory.store.pages`), the surfaces show them (REST `next_cursor`)."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from memory.errors import Invalid
from memory.types.fields import as_utc

if TYPE_CHECKING:
    from memory.models import Entry


@dataclass(frozen=True)
class PageAfter:
    """Where a page starts: after the entry written at `created_at` with write order `seq`."""

    created_at: datetime
    seq: int

    def cursor(self) -> str:
        """Return this position as an opaque cursor (URL-safe text)."""
        data = json.dumps([self.created_at.isoformat(), self.seq]).encode()
        return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")

    @classmethod
    def parse(cls, cursor: str) -> PageAfter:
        """Return the position a cursor names.

        Raises:
            Invalid: not a cursor this API gave out.
        """
        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            when, seq = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
            return cls(as_utc(datetime.fromisoformat(when)), int(seq))
        except (ValueError, TypeError, UnicodeError, binascii.Error):
            raise Invalid(
                "cursor is not one this API gave out: send the next_cursor of the page before"
            ) from None


@dataclass(frozen=True)
class EntryPage:
    """One page of entries, oldest first, with the total and the cursor of the next page."""

    entries: list[Entry]
    total: int
    next_after: PageAfter | None
    """Where the next page starts (None: this is the last page)."""
