"""How a membank operation becomes an MCP tool: strict input, the caller's account, clear errors.

The SDK builds a tool's argument model from the function signature and ignores unknown
arguments; membank tools take a pydantic input model with `extra="forbid"` instead. The tool
advertises that model's JSON schema, receives the raw arguments and validates them itself,
so an unknown or misspelt argument is an error the model can read and fix, and "not sent"
stays distinct from an explicit null (`model_fields_set`), as in a REST body.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, TypeVar, get_type_hints

from mcp.server.mcpserver import Context as ToolContext
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, ValidationError

from memory.api.errors import tool_message
from memory.api.state import ApiState
from memory.api.writes import WritePool
from memory.context import Context
from memory.errors import MembankError
from memory.types.problems import one_line

In = TypeVar("In", bound=BaseModel)
AccountOf = Callable[[ToolContext], str]
"""Returns the account a tool call acts for (stdio: the process's; HTTP: the API key's)."""


class ToolInput(BaseModel):
    """Base of every tool's input: an unknown argument is an error, not silently dropped."""

    model_config = ConfigDict(extra="forbid")


class _RawArguments(ArgModelBase):
    """Hands the tool the arguments exactly as sent; the tool's own model validates them."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.model_extra or {})}


def problems(exc: ValidationError) -> str:
    """Return a validation error as one line: `field: message; field: message`."""
    return one_line(exc)


def parse(model: type[In], arguments: dict[str, Any]) -> In:
    """Return the arguments validated by `model`; a ToolError naming each bad field otherwise."""
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        fields = ", ".join(sorted(model.model_fields))
        raise ToolError(f"invalid arguments: {problems(exc)} (this tool takes: {fields})") from exc


@contextmanager
def tool_errors() -> Iterator[None]:
    """Turn membank's errors into tool errors whose message says what to change."""
    try:
        yield
    except MembankError as exc:
        raise ToolError(tool_message(exc)) from exc
    except ValidationError as exc:  # a record built from the input rejected it
        raise ToolError(f"invalid input: {problems(exc)}") from exc


@dataclass(frozen=True)
class Toolkit:
    """What every tool call needs: the server's state (base context, jobs, export folder)
    and how to find the account of a call."""

    state: ApiState
    account_of: AccountOf | None = None
    """None: every call acts for the base context's account (a local, trusted process)."""
    writes: WritePool | None = None
    """The REST app's write pool when mounted in it: pooled tools (entry writes) take turns
    with the account's REST writes there; None runs them on the SDK's worker thread."""

    def context(self, tool_ctx: ToolContext) -> Context:
        """Return the base context scoped to the account of this call."""
        if self.account_of is None:
            return self.state.base
        return replace(self.state.base, account=self.account_of(tool_ctx))

    def tool(
        self,
        run: Callable[..., Any],
        name: str | None = None,
        annotations: ToolAnnotations | None = None,
        *,
        pooled: bool = False,
    ) -> Tool:
        """Return `run(ctx, input[, state])` as an MCP tool named `name` (default: its name).

        The input model is `run`'s second parameter's annotation, the description its
        docstring, the output schema its return annotation; a third parameter gets the
        server's state (jobs, exports). A `pooled` tool runs in the write pool when the
        toolkit has one (fair between accounts, as REST entry writes are).
        """
        hints = get_type_hints(run)
        params = list(inspect.signature(run).parameters)
        model: type[BaseModel] = hints[params[1]]
        extra = (self.state,) if len(params) > 2 else ()
        pool = self.writes if pooled else None

        def call(arguments: dict[str, Any], context: ToolContext) -> Any:
            with tool_errors():  # also a rule of the input model that raises InvalidInput
                args = parse(model, arguments)
                return run(self.context(context), args, *extra)

        async def call_pooled(arguments: dict[str, Any], context: ToolContext) -> Any:
            assert pool is not None
            with tool_errors():
                args = parse(model, arguments)
                return await pool.run(self.context(context), lambda ctx: run(ctx, args, *extra))

        # The SDK reads this signature: the output schema from its return annotation, the
        # context parameter by name. A sync `call` runs in the SDK's worker thread; the
        # pooled one waits on the event loop for its turn in the pool.
        fn: Callable[..., Any] = call if pool is None else call_pooled
        fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [
                inspect.Parameter("arguments", inspect.Parameter.KEYWORD_ONLY, annotation=dict),
                inspect.Parameter(
                    "context", inspect.Parameter.KEYWORD_ONLY, annotation=ToolContext
                ),
            ],
            return_annotation=hints["return"],
        )
        tool = Tool.from_function(
            fn,
            name=name or run.__name__,
            description=inspect.getdoc(run) or "",
            context_kwarg="context",
            annotations=annotations,
        )
        meta = tool.fn_metadata.model_copy(update={"arg_model": _RawArguments})
        return tool.model_copy(
            update={"fn_metadata": meta, "parameters": model.model_json_schema()}
        )
