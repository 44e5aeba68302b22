"""A deepeval judge model over a membank Completer, with the JSON-mode fallback.

deepeval asks its model for JSON matching a pydantic schema. Over the litellm completer
(which takes a `response_format` and reports tokens), `JudgeModel.generate` asks the
provider for `json_schema` first; a provider that refuses it (a bad request) is asked with
`json_object`, then with a plain prompt that carries the schema, and the format that worked
is kept for the next calls. Any other Completer (`memory.testing.ScriptedCompleter`) is asked
with the plain prompt that carries the schema, and spends no counted tokens. The reply is
parsed here: text that is not valid JSON for the schema (local models often cut it short)
raises InvalidModelOutput, which fails only the criterion that asked. deepeval is imported
when the model is made, not before.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError

from memory import prompts
from memory.errors import FormatRejected, InvalidModelOutput
from memory.ports import Completer, Message

JSON_MODES = ("json_schema", "json_object", "prompt")
"""The ways of asking for JSON, tried in this order until the provider takes one."""
QUIET_DEEPEVAL = {
    "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "NO",
    "DEEPEVAL_DISABLE_DOTENV": "1",
    "DEEPEVAL_GRPC_LOGGING": "NO",
}
"""deepeval settings set (unless already set) before it is imported: no telemetry, no update
check, no .env files read."""


@dataclass
class Usage:
    """What the judge model was asked, in which format, and the tokens spent."""

    calls: int = 0
    tokens: int = 0
    modes: list[str] = field(default_factory=list)
    """The JSON mode of each call, in order."""


def quiet_deepeval() -> None:
    """Set deepeval's environment for quiet, offline-friendly use (before importing it)."""
    for name, value in QUIET_DEEPEVAL.items():
        os.environ.setdefault(name, value)


def judge_model(completer: Completer) -> Any:
    """Return a deepeval `DeepEvalBaseLLM` that answers through `completer`."""
    return _judge_class()(completer)


@cache
def _judge_class() -> type:
    """Return the DeepEvalBaseLLM subclass, defined once deepeval is imported."""
    quiet_deepeval()
    from deepeval.models import DeepEvalBaseLLM

    class JudgeModel(DeepEvalBaseLLM):  # type: ignore[no-untyped-call]  # its __init_subclass__
        """deepeval's judge model: membank's litellm completer with the JSON-mode fallback."""

        def __init__(self, completer: Completer) -> None:
            self.completer = completer
            self.formats = hasattr(completer, "reply")
            """Whether the completer takes a response_format (litellm's does)."""
            self.mode = 0 if self.formats else JSON_MODES.index("prompt")
            self.usage = Usage()
            super().__init__(completer.model)

        def load_model(self, *args: Any, **kwargs: Any) -> Any:
            return self.completer

        def get_model_name(self, *args: Any, **kwargs: Any) -> str:
            return self.completer.model

        def generate(self, prompt: str, schema: type[BaseModel] | None = None, **_: Any) -> Any:
            if schema is None:
                return self._ask([Message(role="user", content=prompt)], None)
            return _parsed(self.completer.model, schema, self._ask_json(prompt, schema))

        async def a_generate(
            self, prompt: str, schema: type[BaseModel] | None = None, **kwargs: Any
        ) -> Any:
            return self.generate(prompt, schema, **kwargs)

        def _ask_json(self, prompt: str, schema: type[BaseModel]) -> str:
            while True:
                mode = JSON_MODES[self.mode]
                try:
                    return self._ask(_json_messages(prompt, schema, mode), _format(schema, mode))
                except FormatRejected:
                    if self.mode == len(JSON_MODES) - 1:
                        raise
                    self.mode += 1

        def _ask(self, messages: list[Message], response_format: dict[str, Any] | None) -> str:
            self.usage.calls += 1
            self.usage.modes.append(str((response_format or {}).get("type", "prompt")))
            if not self.formats:
                return self.completer.complete(messages)
            formatted: Any = self.completer  # litellm's completer: `reply` takes a format
            reply = formatted.reply(messages, response_format=response_format)
            self.usage.tokens += reply.tokens
            return str(reply.text)

    return JudgeModel


def _format(schema: type[BaseModel], mode: str) -> dict[str, Any] | None:
    """Return the `response_format` of a JSON mode (None: ask in the prompt only)."""
    if mode == "json_schema":
        body = {"name": schema.__name__, "schema": schema.model_json_schema(), "strict": False}
        return {"type": "json_schema", "json_schema": body}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def _json_messages(prompt: str, schema: type[BaseModel], mode: str) -> list[Message]:
    """Return the chat for a JSON mode: without a schema-bound format, the prompt names it."""
    if mode == "json_schema":
        return [Message(role="user", content=prompt)]
    text = prompts.render(
        "judge_json", prompt=prompt.strip(), schema=json.dumps(schema.model_json_schema())
    )
    return [Message(role="user", content=text)]


def _parsed(model: str, schema: type[BaseModel], text: str) -> BaseModel:
    """Return the reply parsed as `schema`, or raise InvalidModelOutput saying why not."""
    start, end = text.find("{"), text.rfind("}")
    body = text[start : end + 1] if start != -1 and end > start else text
    try:
        return schema.model_validate_json(body)
    except ValidationError as exc:
        shown = " ".join(text.split())[:120]
        problem = exc.errors()[0]["msg"] if exc.errors() else "not JSON"
        raise InvalidModelOutput(
            f"judge model {model!r} returned invalid JSON for {schema.__name__} "
            f"({problem}): {shown!r}"
        ) from exc
