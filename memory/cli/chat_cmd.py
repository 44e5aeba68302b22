"""`membank chat --agent A --user U`: the example agent loop on the memory layers."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from memory.cli.args import context, non_negative
from memory.cli.output import say
from memory.errors import InvalidInput

if TYPE_CHECKING:
    from memory.agents.chat import ChatTurn


def register(commands: Any, common: argparse.ArgumentParser) -> None:
    """Add the chat command."""
    chat = commands.add_parser(
        "chat", parents=[common], help="chat with an agent that uses its memory layers"
    )
    chat.add_argument("--agent", required=True, help="the agent (see `membank agents list`)")
    chat.add_argument("--user", required=True, help="the user id")
    chat.add_argument("--conversation", help="the conversation id (default: a new one)")
    chat.add_argument(
        "--message",
        action="append",
        default=[],
        dest="messages",
        help="a user message; repeat for more (default: one per line of stdin)",
    )
    chat.add_argument(
        "--model",
        help="a litellm model name (default: MEMBANK_LLM_MODEL; an offline membank/ name "
        "runs the rule-based assistant)",
    )
    chat.add_argument(
        "--metadata",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a value the agent's key templates read as {{metadata.NAME}} (e.g. "
        "email_from=ann@example.com for support-mail); repeat for more",
    )
    chat.add_argument(
        "--token-budget", type=non_negative, default=2000, help="tokens the pre-load may take"
    )
    chat.set_defaults(handler=_chat)


def _messages(args: argparse.Namespace) -> Iterator[str]:
    if args.messages:
        yield from args.messages
        return
    interactive = sys.stdin.isatty()
    while True:
        if interactive:
            sys.stdout.write("you> ")
            sys.stdout.flush()
        line = sys.stdin.readline()
        if not line or line.strip() in {"/quit", "/exit"}:
            return
        if line.strip():
            yield line.rstrip("\n")


def _chat(args: argparse.Namespace) -> int:
    from memory.ops import agents

    ctx = context(args)
    request = agents.ChatRequest(
        agent=args.agent,
        user=args.user,
        conversation=args.conversation,
        metadata=_metadata(args.metadata),
        model=args.model,
        token_budget=args.token_budget,
    )
    chat = agents.start_chat(ctx, request)
    agent, assistant = chat.agent, chat.assistant
    if not args.json:
        layers = ", ".join(agent.memory.layers()) or "none"
        say(
            f"chat with agent {agent.id!r} as user {args.user!r} (conversation "
            f"{chat.conversation}, layers: {layers}): {assistant.label}"
        )
        if chat.session_intro:
            say("  starts from the session summary of earlier conversations")
    for message in _messages(args):
        turn = agents.chat_turn(chat, message)
        if args.json:  # one JSON object per turn (JSON Lines)
            sys.stdout.write(json.dumps(turn.model_dump(mode="json"), ensure_ascii=False) + "\n")
        else:
            _show(turn)
        sys.stdout.flush()
    # after the last reply, off the user's path: merged in this process when the chat ends
    # (through Prefect: end_conversation(..., trigger=flows.session_merge.deployment_trigger()))
    if agents.end_chat(ctx, chat) and not args.json:
        say("  conversation merged into the session summary")
    return 0


def _metadata(pairs: list[str]) -> dict[str, str]:
    """Return `--metadata NAME=VALUE` pairs as a mapping.

    Raises:
        InvalidInput: a pair without `=` or with an empty name.
    """
    found: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise InvalidInput(f"--metadata {pair!r}: give NAME=VALUE, e.g. email_from=a@b.com")
        found[name.strip()] = value
    return found


def _show(turn: ChatTurn) -> None:
    loaded = turn.preload
    if loaded is not None:
        say(
            f"  pre-loaded {len(loaded.memories)} memories ({loaded.tokens} of "
            f"{loaded.token_budget} tokens)"
        )
    if turn.working_summarized:
        say(f"  working memory: {turn.working_summarized} older turns handed over as a summary")
    for use in turn.tool_uses:
        outcome = "ok" if use.result.ok else f"error: {use.result.error}"
        say(f"  tool {use.call.name} {use.call.arguments} -> {outcome}")
    say(f"[{turn.assistant}] {turn.reply}")
