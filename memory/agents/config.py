"""An agent's memory configuration, in the seed's shape (seed 003), validated.

```
{"session_memory": true,
 "types": [{"id": "working_memory", "enabled": true,
            "config": {"max_tokens": 4000, "compaction_strategy": "summarize"}},
           {"id": "long_term", "enabled": true, "config": {"max_memories": 50}}]}
```

`session_memory` is a top-level toggle; `types` holds working and long-term memory side by
side. The three layers are independent: any combination (none included) is valid.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from memory.errors import InvalidInput
from memory.validation import first_problem

DEFAULT_WORKING_TOKENS = 4000
"""Working memory's `max_tokens` when the config leaves it out (the seed's example)."""
DEFAULT_MAX_MEMORIES = 50
"""Long-term memories pre-loaded per user message when the config leaves it out."""
MIN_WORKING_TOKENS = 64
"""The smallest working-memory budget: room for a summary and one short turn."""


class WorkingConfig(BaseModel):
    """Working memory: the current conversation's turns, capped by `max_tokens`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_tokens: int = Field(
        default=DEFAULT_WORKING_TOKENS, ge=MIN_WORKING_TOKENS, le=2_000_000, strict=True
    )
    """The most tokens of conversation handed to the model at each turn."""
    compaction_strategy: Literal["summarize"] = "summarize"
    """What happens to the oldest turns past `max_tokens`: they are summarized."""


class LongTermConfig(BaseModel):
    """Long-term memory: tool-driven memories and their pre-load for each user message."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_memories: int = Field(default=DEFAULT_MAX_MEMORIES, ge=1, le=1000, strict=True)
    """The most memories pre-loaded into the prompt for one user message."""


class WorkingType(BaseModel):
    """The `working_memory` item of `types`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Literal["working_memory"]
    enabled: bool = True
    config: WorkingConfig = Field(default_factory=WorkingConfig)


class LongTermType(BaseModel):
    """The `long_term` item of `types`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Literal["long_term"]
    enabled: bool = True
    config: LongTermConfig = Field(default_factory=LongTermConfig)


MemoryType = Annotated[WorkingType | LongTermType, Field(discriminator="id")]
LAYER_IDS = ("working_memory", "long_term")


class AgentMemoryConfig(BaseModel):
    """An agent's memory layers: session memory (a toggle), working and long-term memory."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_memory: bool = False
    """One rolling summary per user x agent, merged at the end of each conversation."""
    types: list[MemoryType] = Field(default_factory=list)
    """Working memory and long-term memory, each at most once, each enabled or not."""

    @model_validator(mode="before")
    @classmethod
    def _check_ids(cls, data: Any) -> Any:
        """Name an unknown or repeated layer id plainly (the union's own error does not)."""
        if not isinstance(data, dict) or not isinstance(data.get("types"), list):
            return data
        seen: set[str] = set()
        for index, item in enumerate(data["types"]):
            layer = item.get("id") if isinstance(item, dict) else None
            if not isinstance(layer, str) or layer not in LAYER_IDS:
                raise ValueError(
                    f"types.{index}.id is {layer!r}: use one of {', '.join(LAYER_IDS)} "
                    "(session memory is the top-level `session_memory: true`)"
                )
            if layer in seen:
                raise ValueError(f"types.{index}: {layer!r} is given twice: keep one")
            seen.add(layer)
        return data

    def working(self) -> WorkingConfig | None:
        """Return working memory's config, or None when it is absent or disabled."""
        for item in self.types:
            if isinstance(item, WorkingType) and item.enabled:
                return item.config
        return None

    def long_term(self) -> LongTermConfig | None:
        """Return long-term memory's config, or None when it is absent or disabled."""
        for item in self.types:
            if isinstance(item, LongTermType) and item.enabled:
                return item.config
        return None

    def layers(self) -> list[str]:
        """Return the enabled layers' names: `working`, `session`, `long_term`."""
        found = ["working"] if self.working() else []
        found += ["session"] if self.session_memory else []
        return found + (["long_term"] if self.long_term() else [])


def parse_memory_config(data: Any, *, source: str = "memory") -> AgentMemoryConfig:
    """Return the validated memory config from YAML/JSON data.

    Args:
        data: The decoded config (a mapping in the seed's shape).
        source: Where it came from, named in the error (a file, `agent X`).

    Raises:
        InvalidInput: the first problem, with the field's path and how to fix it.
    """
    try:
        return AgentMemoryConfig.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(f"{source}: {_explain(exc)}") from None


def _explain(exc: ValidationError) -> str:
    problem = first_problem(exc, "memory config")
    if problem.type == "extra_forbidden":
        return f"{problem.field} is not a memory setting: remove it (see the seed's shape)"
    if problem.type == "value_error":
        return problem.message.removeprefix("Value error, ")
    return str(problem)
