"""Checks shared by every label a user names things with (bank names, keys, speakers, tags)."""

from __future__ import annotations

import re

from memory.errors import InvalidInput

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
"""C0 and C1 control characters (newline, tab, ...)."""


def check_one_line(label: str, value: str) -> None:
    """InvalidInput when `value` holds a control character: a newline or tab in a name, key,
    speaker, role or tag breaks every listing that shows it."""
    if _CONTROL.search(value):
        raise InvalidInput(
            f"{label} {value[:80]!r} holds a control character (newline, tab, ...): "
            "make it one line of text"
        )
