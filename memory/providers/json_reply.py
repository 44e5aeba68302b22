"""A model's JSON reply parsed into a record: fences and chatter around the object tolerated,
anything else a ProviderError that names the model and the first problem."""

from __future__ import annotations

import json
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from memory.errors import ProviderError
from memory.validation import first_problem

T = TypeVar("T", bound=BaseModel)


def parse_json_reply(model: str, reply: str, record: type[T], what: str) -> T:
    """Return the JSON object in `reply` validated as `record`.

    Args:
        model: The model that replied (named in errors).
        reply: Its text; a ```json fence or words around the object are ignored.
        record: The pydantic record the object must be.
        what: What was asked for, e.g. "a bank configuration proposal" (named in errors).

    Raises:
        ProviderError: the reply holds no JSON object or the object is not a valid record.
    """
    start, end = reply.find("{"), reply.rfind("}")
    if start < 0 or end < start:
        raise ProviderError(
            f"model {model!r} was asked for {what} as JSON but replied without a JSON object: "
            f"{reply[:120]!r}"
        )
    try:
        value = json.loads(reply[start : end + 1])
    except json.JSONDecodeError as exc:
        raise ProviderError(
            f"model {model!r} returned invalid JSON for {what}: {exc.msg} at column {exc.colno}"
        ) from None
    try:
        return record.model_validate(value)
    except ValidationError as exc:
        raise ProviderError(
            f"model {model!r} returned {what} that is not valid: "
            f"{first_problem(exc, record.__name__)}"
        ) from None
