"""The long-term memory tools an LLM calls (`memory_remember`, `memory_recall`,
`memory_forget`): OpenAI-style schemas and the dispatcher that runs a model's tool call.

The schemas are made from the argument records below, so what the model is told and what
the dispatcher accepts cannot drift apart. A call with bad arguments (not JSON, an unknown
or missing field, a wrong type, an unknown type or scope, empty content, an unknown memory
id) is answered with a tool error saying what to send instead, and stores nothing.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError

from memory.agents import longterm
from memory.agents.memories import MAX_TAGS, Memory, MemoryType, RecalledMemory, Scope
from memory.errors import InvalidInput, NotFound

if TYPE_CHECKING:
    from memory.context import Context

REMEMBER = "memory_remember"
RECALL = "memory_recall"
FORGET = "memory_forget"


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class RememberArgs(_Args):
    """Store something worth keeping for next time: a fact about the user, a preference,
    a relationship, or a standing instruction."""

    content: StrictStr = Field(description="The memory, one self-contained sentence.")
    type: MemoryType = Field(default="fact", description="What kind of memory it is.")
    tags: list[StrictStr] = Field(
        default_factory=list,
        max_length=MAX_TAGS,
        description="A few short lowercase keywords, e.g. ['python', 'coding'].",
    )
    scope: Scope = Field(
        default="user",
        description="user: every agent of this user sees it; agent: only this agent.",
    )


class RecallArgs(_Args):
    """Search the user's past memories by meaning."""

    query: StrictStr = Field(description="What to look for, in any wording.")
    k: StrictInt = Field(default=5, ge=1, le=longterm.MAX_RECALL, description="How many.")


class ForgetArgs(_Args):
    """Delete one memory, when the user asks to forget it or it is outdated."""

    memory_id: StrictStr = Field(description="The id of the memory, as recall showed it.")


ARGS: dict[str, type[_Args]] = {REMEMBER: RememberArgs, RECALL: RecallArgs, FORGET: ForgetArgs}


class ToolResult(BaseModel):
    """What one tool call did; `content` is the text handed back to the model."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    ok: bool
    error: str | None = None
    """What was wrong with the call and how to fix it (when not ok)."""
    memory: Memory | None = None
    """The memory stored or forgotten."""
    memories: list[RecalledMemory] = Field(default_factory=list)
    """What recall found, best first."""

    @property
    def content(self) -> str:
        """Return the result as the JSON text of a `tool` message."""
        if not self.ok:
            return json.dumps({"error": self.error}, ensure_ascii=False)
        if self.tool == RECALL:
            found = [{**_brief(hit.memory), "score": round(hit.score, 4)} for hit in self.memories]
            return json.dumps({"memories": found}, ensure_ascii=False)
        done = "remembered" if self.tool == REMEMBER else "forgotten"
        assert self.memory is not None
        return json.dumps({done: _brief(self.memory)}, ensure_ascii=False)


def _brief(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "type": memory.type,
        "scope": memory.scope,
        "content": memory.content,
        "tags": memory.tags,
        "created_at": memory.created_at.isoformat(),
    }


def tool_schemas() -> list[dict[str, Any]]:
    """Return the three tools as OpenAI-style `tools` entries (JSON Schema parameters)."""
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": " ".join((args.__doc__ or "").split()),
                "parameters": _parameters(args),
            },
        }
        for name, args in ARGS.items()
    ]


def _parameters(args: type[_Args]) -> dict[str, Any]:
    schema = args.model_json_schema()
    schema.pop("title", None)
    schema.pop("description", None)
    for prop in schema["properties"].values():
        prop.pop("title", None)
    return schema


def dispatch(
    ctx: Context, user: str, agent: str | None, tool_call_name: str, arguments_json: str
) -> ToolResult:
    """Run one tool call of a model for `user` talking to `agent`; never raises on bad args.

    Args:
        ctx: the context.
        user: the user the conversation is with (never taken from the model).
        agent: the agent calling (its scope for remember, its view for recall and forget).
        tool_call_name: the tool the model called.
        arguments_json: the call's arguments as the model sent them (a JSON object).

    Returns:
        The result; on bad arguments `ok` is False, `error` says what to fix, nothing stored.
    """
    args_type = ARGS.get(tool_call_name)
    if args_type is None:
        known = ", ".join(ARGS)
        return _error(tool_call_name, f"unknown tool {tool_call_name!r}: call one of {known}")
    try:
        args = args_type.model_validate_json(arguments_json.strip() or "{}")
    except ValidationError as exc:
        return _error(tool_call_name, _explain(tool_call_name, args_type, exc))
    try:
        return _run(ctx, user, agent, tool_call_name, args)
    except (InvalidInput, NotFound) as exc:
        return _error(tool_call_name, str(exc))


def _run(ctx: Context, user: str, agent: str | None, name: str, args: _Args) -> ToolResult:
    if isinstance(args, RememberArgs):
        memory = longterm.remember(
            ctx,
            user=user,
            agent=agent,
            content=args.content,
            type=args.type,
            tags=args.tags,
            scope=args.scope,
        )
        return ToolResult(tool=name, ok=True, memory=memory)
    if isinstance(args, RecallArgs):
        found = longterm.recall(ctx, user=user, agent=agent, query=args.query, k=args.k)
        return ToolResult(tool=name, ok=True, memories=found)
    assert isinstance(args, ForgetArgs)
    memory = longterm.forget(ctx, user=user, agent=agent, memory_id=args.memory_id)
    return ToolResult(tool=name, ok=True, memory=memory)


def _error(tool: str, message: str) -> ToolResult:
    return ToolResult(tool=tool, ok=False, error=message)


def _explain(tool: str, args_type: type[_Args], exc: ValidationError) -> str:
    """Return the first problem of the arguments as a message a model can act on."""
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"])
    kind = first["type"]
    params = ", ".join(args_type.model_fields)
    required = [n for n, f in args_type.model_fields.items() if f.is_required()]
    if kind == "json_invalid":
        return (
            f"the arguments of {tool} are not valid JSON ({first['msg']}): send one JSON "
            f"object with {', '.join(required)}"
        )
    if kind == "model_type" or (kind == "dict_type" and not field):
        return f"the arguments of {tool} must be a JSON object with {', '.join(required)}"
    if kind == "extra_forbidden":
        return f"{field!r} is not a parameter of {tool}: its parameters are {params}"
    if kind == "missing":
        return f"{tool} needs {field!r}: its required parameters are {', '.join(required)}"
    if kind in {"literal_error", "enum"}:
        allowed = args_type.model_json_schema()["properties"][field.split(".")[0]]
        choices = ", ".join(allowed.get("enum", []))
        return f"{field} is {first.get('input')!r}: use one of {choices}"
    return f"{field or 'arguments'}: {first['msg']} (got {first.get('input')!r})"
