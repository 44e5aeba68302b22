"""Printing for the CLI: JSON on request, readable text otherwise."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel


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
    """Print `value` as JSON on stdout."""
    sys.stdout.write(json.dumps(to_jsonable(value), ensure_ascii=False, indent=2) + "\n")


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str]) -> str:
    """Return rows as a plain aligned text table."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """Return `count` with its noun, singular for one: `1 entry`, `2,000 entries`."""
    word = noun if count == 1 else plural or f"{noun}s"
    return f"{count:,} {word}"


def say(text: str) -> None:
    """Print a line of human-readable output on stdout."""
    sys.stdout.write(text + "\n")
