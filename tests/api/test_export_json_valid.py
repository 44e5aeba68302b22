"""A JSON export stays valid JSON even for an entry stored before NaN was refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from memory.transfer.export.records import entry_record


def test_nan_and_infinity_stored_long_ago_export_as_null() -> None:
    row = {
        "id": "e1",
        "key": "k",
        "kind": "entry",
        "speaker": None,
        "role": None,
        "memory_type": None,
        "content": "c",
        "tags": [],
        "metadata": '{"a": NaN, "b": [Infinity, -Infinity, 1.5]}',
        "attachments": "[]",
        "summary_of": [],
        "created_at": datetime(2026, 1, 1, tzinfo=UTC),
        "token_count": 1,
    }
    text = json.dumps(entry_record(row), allow_nan=False)
    assert json.loads(text)["metadata"] == {"a": None, "b": [None, None, 1.5]}
