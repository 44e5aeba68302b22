"""A LangGraph agent loop whose long-term memory is membank, through LangMem's tools.

The agent is a two-node graph (model -> tools -> model ...) compiled with `MembankStore` as
its store; LangMem's `create_manage_memory_tool` and `create_search_memory_tool` read and
write it under the namespace `("memories", "{langgraph_user_id}")`. The store is made with
`user_at=1` (that label is the user), so each memory the agent saves is a long-term memory
of that user: the same one `membank memory recall`, the lab's Users page and the REST API's
`/users/{id}/memories` show, and `membank user wipe` deletes. The chat model is a scripted
fake (langchain_core's `GenericFakeChatModel`), so the example runs offline and with no API
key; put a real chat model in `build_agent` and the same loop decides its own tool calls.

Run it, then find the memory with membank's own long-term memory commands:

    python examples/langgraph_memory.py --data ./agent-memory
    membank memory recall --user alice "dark mode" --data ./agent-memory
    membank memory list --user alice --data ./agent-memory

Needs the extra: `pip install 'membank[langgraph]'`.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langmem import create_manage_memory_tool, create_search_memory_tool

from memory.integrations.langgraph import MembankStore
from memory.wiring import open_context

NAMESPACE = ("memories", "{langgraph_user_id}")


class ScriptedChatModel(GenericFakeChatModel):
    """A fake chat model that answers from a script and accepts tools (it calls the ones
    its scripted messages name)."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        return self


def script() -> Iterator[AIMessage]:
    """The model's turns for the two conversations below, tool calls included."""
    yield AIMessage(
        content="",
        tool_calls=[
            {
                "name": "manage_memory",
                "args": {"content": "The user prefers dark mode in every app", "action": "create"},
                "id": "call-remember",
            }
        ],
    )
    yield AIMessage(content="Noted: dark mode from now on.")
    yield AIMessage(
        content="",
        tool_calls=[
            {
                "name": "search_memory",
                "args": {"query": "which theme does the user like?"},
                "id": "call-recall",
            }
        ],
    )
    yield AIMessage(content="You told me you prefer dark mode.")


def build_agent(store: MembankStore, model: GenericFakeChatModel) -> CompiledStateGraph[Any]:
    """Return the agent loop: the model, then the tools it called, until it answers."""
    tools = [create_manage_memory_tool(NAMESPACE), create_search_memory_tool(NAMESPACE)]
    bound = model.bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [bound.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile(store=store)


def run(store: MembankStore, user: str = "alice") -> list[BaseMessage]:
    """Run two conversations of `user`: one that saves a memory, one that recalls it;
    returns the second conversation's messages."""
    agent = build_agent(store, ScriptedChatModel(messages=script()))
    config = {"configurable": {"langgraph_user_id": user}}
    agent.invoke({"messages": [HumanMessage("I always use dark mode.")]}, config)
    second = agent.invoke({"messages": [HumanMessage("Which theme do I like?")]}, config)
    return list(second["messages"])


def main(argv: Sequence[str] | None = None) -> int:
    """Run the example on the storage folder `--data` (default: MEMBANK_URI)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="storage folder or URI (default: MEMBANK_URI)")
    parser.add_argument("--user", default="alice")
    args = parser.parse_args(argv)
    store = MembankStore(context=open_context(args.data), user_at=1)
    for message in run(store, args.user):
        if isinstance(message, ToolMessage):
            print(f"[{message.name}] {message.content}")
        elif message.content:
            print(f"{type(message).__name__.removesuffix('Message').lower()}: {message.content}")
    data = f" --data {args.data}" if args.data else ""
    print(f"saved as long-term memories of {args.user!r}; see them with:")
    print(f'  membank memory recall --user {args.user} "dark mode"{data}')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
