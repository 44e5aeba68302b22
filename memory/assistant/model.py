"""The assistant through a configured LLM: prompt files in, JSON out, validated as a Proposal."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from memory.assistant.records import Proposal
from memory.config import templates
from memory.errors import InvalidInput, ProviderError
from memory.models import BankType
from memory.ports import Completer, Message
from memory.prompts import render, template
from memory.providers import describe
from memory.providers.json_reply import parse_json_reply
from memory.validation import check_bank_fields


class _Reply(BaseModel):
    """What the model must reply (unknown fields are an error: a misspelt field is not
    silently dropped from the proposal)."""

    model_config = ConfigDict(extra="forbid")

    bank_type: BankType
    compaction_prompt: str
    max_tokens: int | None
    max_turns: int | None
    retention_days: int | None
    rationale: list[str]


def messages(description: str, bank_type: BankType | None) -> list[Message]:
    """Return the chat messages asking the model for a proposal."""
    shown = "\n".join(
        f"- {t.name} ({t.type}): {t.description} max_tokens={t.max_tokens}, "
        f"max_turns={t.max_turns}, retention_days={t.retention_days}"
        for t in templates().values()
    )
    user = render(
        "assistant",
        bank_type=bank_type or "choose conversation or general",
        templates=shown,
        description=" ".join(description.split()),
    )
    return [
        Message(role="system", content=template("assistant_system").strip()),
        Message(role="user", content=user),
    ]


def propose_with_model(
    description: str, bank_type: BankType | None, completer: Completer
) -> Proposal:
    """Return the proposal of the model behind `completer`.

    Raises:
        ProviderError: the model failed, replied with no valid proposal JSON, proposed
            values a bank cannot take, or another bank type than the one asked for.
    """
    model = completer.model
    reply = completer.complete(messages(description, bank_type))
    parsed = parse_json_reply(model, reply, _Reply, "a bank configuration proposal")
    problem = _problem(parsed, bank_type)
    if problem is not None:
        raise ProviderError(f"model {model!r} proposed an unusable configuration: {problem}")
    return Proposal(
        **parsed.model_dump(),
        assistant=describe(model),
        offline=False,
    )


def _problem(reply: _Reply, bank_type: BankType | None) -> str | None:
    if bank_type is not None and reply.bank_type != bank_type:
        return f"a {reply.bank_type} bank, but a {bank_type} bank was asked for"
    if not reply.compaction_prompt.strip():
        return "an empty compaction prompt"
    if not reply.rationale:
        return "no rationale"
    try:
        check_bank_fields(
            compaction_prompt=reply.compaction_prompt,
            max_tokens=reply.max_tokens,
            max_turns=reply.max_turns,
            retention_days=reply.retention_days,
        )
    except InvalidInput as exc:
        return str(exc)
    return None
