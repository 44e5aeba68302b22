"""Printing for the CLI: JSON on request, readable text otherwise."""

from __future__ import annotations

import json
import re
import sys
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from pydantic import BaseModel

_CONTROLS = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")
"""C0 and C1 control characters and DEL, except newline: a terminal would act on them (an
OSC title, a screen clear) instead of showing them."""
_C1 = re.compile(r"[\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """Return `text` with control characters (but newline) shown as `\\xNN` escapes."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def width(text: str) -> int:
    """Return how many terminal columns `text` takes (wide East Asian characters take two,
    combining marks none)."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def to_jsonable(value: Any) -> Any:
    """Return `value` with pydantic models and datetimes turned into JSON-ready data."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def emit_json(value: Any) -> None:
    """Print `value` as JSON on stdout (C1 controls escaped too: JSON escapes only C0)."""
    text = json.dumps(to_jsonable(value), ensure_ascii=False, indent=2)
    sys.stdout.write(_C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n")


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> str:
    """Return rows as a plain aligned text table (cells terminal-safe, on one line each)."""
    cells = [[str(h) for h in headers]] + [
        ["" if c is None else terminal_safe(str(c)).replace("\n", " ") for c in r] for r in rows
    ]
    widths = [max(width(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(c + " " * (w - width(c)) for c, w in zip(row, widths, strict=True)).rstrip()
        for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """Return `count` with its noun, singular for one: `1 entry`, `2,000 entries`."""
    word = noun if count == 1 else plural or f"{noun}s"
    return f"{count:,} {word}"


def say(text: str) -> None:
    """Print a line of human-readable output on stdout, control characters escaped."""
    sys.stdout.write(terminal_safe(text) + "\n")


@contextmanager
def progress_bar(total: int | None, unit: str) -> Iterator[Callable[..., None] | None]:
    """Yield a progress callback drawing a tqdm bar on stderr, or None when not a terminal.

    The callback takes the count just done and, when the caller learns it on the way, the
    total (the bar then shows how far along it is and the time left)."""
    if not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm

    with tqdm(total=total, unit=unit, file=sys.stderr, leave=False) as bar:

        def advance(count: int, of: int | None = None) -> None:
            if of is not None and bar.total != of:
                bar.total = of
            bar.update(count)

        yield advance
