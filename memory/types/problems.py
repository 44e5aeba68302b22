"""The one pydantic-error formatter: a `ValidationError` as one line a user can act on."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem pydantic found in a record, for a one-line message."""

    field: str
    """Dotted path of the field (`tags.0`), or the name of the whole record."""
    type: str
    """pydantic's error type, e.g. `missing`, `string_type`."""
    message: str
    """pydantic's message, e.g. `Input should be a valid string`."""

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


def problem_of(error: Any, whole: str = "input") -> Problem:
    """Return one pydantic error (an item of `ValidationError.errors()`) as a Problem;
    `whole` names the record when the error is not about one field."""
    field = ".".join(str(part) for part in error.get("loc", ())) or whole
    return Problem(field=field, type=error.get("type", ""), message=error.get("msg", ""))


def first_problem(exc: ValidationError, whole: str) -> Problem:
    """Return the first error of `exc` (see `problem_of`)."""
    return problem_of(exc.errors()[0], whole)


def one_line(errors: ValidationError | Iterable[Any], whole: str = "input") -> str:
    """Return every error as one line: `field: message; field: message`."""
    items = errors.errors() if isinstance(errors, ValidationError) else errors
    return "; ".join(str(problem_of(error, whole)) for error in items)


_ENGINE_SOURCE = re.compile(r",?\s*(?:/[\w.@+-]+)+\.rs:\d+(?::\d+)?")
"""Where in its Rust source the storage engine raised an error (`, /home/.../commit.rs:1663:50`)."""
_DISK_FULL = ("No space left on device", "os error 28", "Disk quota exceeded", "os error 122")


def engine_text(error: BaseException | str) -> str:
    """Return a storage engine's error as a user reads it: without the engine's source paths,
    and a full disk said plainly ("disk full: free space ...") before the engine's words."""
    text = _ENGINE_SOURCE.sub("", str(error)).strip()
    if any(sign in text for sign in _DISK_FULL):
        return f"disk full: free space on the storage's disk ({text})"
    return text
