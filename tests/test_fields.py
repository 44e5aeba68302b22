"""The field rules on the types themselves (no storage), and one end-to-end check."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from memory import validation
from memory.errors import Invalid, InvalidInput
from memory.models import BankCreate, BankUpdate, SearchQuery
from memory.types.fields import (
    MAX_JSON_DEPTH,
    MAX_KEY_LENGTH,
    MAX_RETENTION_DAYS,
    MAX_THRESHOLD,
    Key,
    Label,
    Metadata,
    RetentionDays,
    Speaker,
    Tag,
    Threshold,
    TimeWindow,
)
from memory.types.problems import one_line


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def test_a_bool_is_not_a_number_of_days() -> None:
    with pytest.raises(Invalid, match="retention_days must be a whole number, not true"):
        BankUpdate.model_validate({"retention_days": True})
    with pytest.raises(Invalid, match="max_turns must be a whole number, not false"):
        BankCreate.model_validate({"name": "n", "max_turns": False})
    assert BankUpdate.model_validate({"retention_days": 7}).retention_days == 7


@pytest.mark.parametrize("days", [0, -1, MAX_RETENTION_DAYS + 1])
def test_retention_days_out_of_range_is_refused(days: int) -> None:
    with pytest.raises(Invalid, match=f"retention_days must be 1-{MAX_RETENTION_DAYS} days"):
        BankCreate(name="n", retention_days=days)


def test_thresholds_are_bounded_once() -> None:
    assert BankCreate(name="n", max_tokens=0).max_tokens == 0
    with pytest.raises(Invalid, match=f"max_tokens must be 0-{MAX_THRESHOLD}"):
        BankCreate(name="n", max_tokens=MAX_THRESHOLD + 1)


class _Labels(BaseModel):
    metadata: Metadata | None = None
    key: Key
    tag: Tag | None = None
    speaker: Speaker | None = None
    name: Label | None = None
    days: RetentionDays | None = None
    limit: Threshold | None = None


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"key": " "}, "key must be 1-512 characters, not blank"),
        ({"key": "k" * (MAX_KEY_LENGTH + 1)}, "key must be 1-512 characters"),
        ({"key": "a\nb"}, "holds a control character"),
        ({"key": "\ud800"}, "key is not valid UTF-8"),
        ({"key": "k", "tag": "t" * 65}, "tag must be 1-64 characters"),
        ({"key": "k", "speaker": "a\x00"}, "speaker contains a NUL character"),
        ({"key": "k", "name": ""}, "bank name must be 1-200 characters"),
    ],
)
def test_labels_carry_their_rule(fields: dict[str, str], message: str) -> None:
    with pytest.raises(Invalid, match=message):
        _Labels.model_validate(fields)


def test_a_refused_field_is_an_input_error_not_a_crash() -> None:
    with pytest.raises(InvalidInput):
        _Labels.model_validate({"key": "k", "days": True})


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_metadata_takes_finite_numbers_only(number: float) -> None:
    value = {"deep": [{"x": number}]}
    with pytest.raises(Invalid, match="JSON has no NaN or Infinity"):
        _Labels(key="k", metadata=value)
    with pytest.raises(Invalid, match="JSON has no NaN or Infinity"):  # what every write calls
        validation.check_json("metadata", value)


def test_metadata_nesting_is_bounded_so_it_can_be_read_back() -> None:
    fine = _nested(MAX_JSON_DEPTH)
    assert json.loads(validation.check_json("metadata", fine)) == fine
    assert _Labels(key="k", metadata=fine).metadata == fine
    with pytest.raises(Invalid, match=f"nested more than {MAX_JSON_DEPTH} levels"):
        _Labels(key="k", metadata=_nested(MAX_JSON_DEPTH + 1))
    with pytest.raises(Invalid, match=f"nested more than {MAX_JSON_DEPTH} levels"):
        validation.check_json("metadata", _nested(256))


def test_search_text_with_a_lone_surrogate_is_refused() -> None:
    with pytest.raises(Invalid, match="text is not valid UTF-8"):
        SearchQuery(text="a \ud800")


def test_time_window_since_before_until() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    assert TimeWindow(since=start, until=start + timedelta(seconds=1)).since == start
    assert TimeWindow(since=start).until is None
    for until in (start, start - timedelta(days=1)):
        with pytest.raises(Invalid, match="must be before until"):
            TimeWindow(since=start, until=until)
    with pytest.raises(Invalid, match="must be before until"):
        SearchQuery(text="x", since=start, until=start)


def test_time_window_is_in_utc() -> None:
    plus_two = timezone(timedelta(hours=2))
    window = TimeWindow(since=datetime(2026, 1, 1, 2, tzinfo=plus_two), until=datetime(2026, 2, 1))
    assert window.since == datetime(2026, 1, 1, tzinfo=UTC) and window.since.tzinfo is UTC
    assert window.until is not None and window.until.tzinfo is UTC


def test_one_formatter_for_pydantic_errors() -> None:
    with pytest.raises(ValidationError) as caught:
        BankUpdate.model_validate({"type": "other", "extra": 1})
    line = one_line(caught.value)
    assert line.startswith("type: Input should be") and "; extra: Extra inputs" in line
    assert one_line([{"loc": (), "msg": "bad", "type": "x"}]) == "input: bad"


def test_types_and_models_import_no_engine() -> None:
    code = (
        "import sys, memory.types.fields, memory.types.problems, memory.models; "
        "print(sorted(m for m in ('lancedb', 'numpy', 'pyarrow', 'polars') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
