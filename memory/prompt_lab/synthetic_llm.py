"""Synthetic entries from a configured LLM (prompt file, JSON out, checked like the templates')."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from memory.errors import InvalidInput, ProviderError
from memory.ports import Completer, Message
from memory.prompt_lab.facts import fact_diff
from memory.prompt_lab.pasted import check_drafts
from memory.prompt_lab.records import DraftEntry, FactKind, PlantedFact, SyntheticSource
from memory.prompt_lab.synthetic import (
    FACT_SHARE,
    MAX_FACTS,
    SYNTHETIC_KEY,
    SyntheticSet,
    check_source,
)
from memory.prompts import render, template
from memory.providers import describe
from memory.providers.json_reply import parse_json_reply


class _Entry(BaseModel):
    model_config = ConfigDict(extra="ignore")

    content: str
    speaker: str | None = None
    role: str | None = None


class _Fact(BaseModel):
    model_config = ConfigDict(extra="ignore")

    kind: FactKind
    text: str
    value: str


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")

    entries: list[_Entry]
    facts: list[_Fact]


def llm_set(source: SyntheticSource, completer: Completer) -> SyntheticSet:
    """Return entries and planted facts written by the model behind `completer`.

    Raises:
        InvalidInput: a blank description or a count out of range.
        ProviderError: the model failed, or its reply is not JSON of the asked shape, has
            another number of entries, or a fact whose value no entry holds.
    """
    check_source(source)
    reply = completer.complete(messages(source))
    what = "synthetic entries"
    parsed = parse_json_reply(completer.model, reply, _Reply, what)
    conversation = source.bank_type == "conversation"
    entries = [
        DraftEntry(
            key=SYNTHETIC_KEY,
            content=e.content,
            speaker=e.speaker if conversation else None,
            role=e.role if conversation else None,
        )
        for e in parsed.entries
    ]
    problem = _problem(source, entries, parsed.facts)
    if problem is not None:
        raise ProviderError(f"model {completer.model!r} returned unusable {what}: {problem}")
    facts = [PlantedFact(kind=f.kind, text=f.text, value=f.value) for f in parsed.facts]
    return SyntheticSet(entries=entries, facts=facts, generator=describe(completer.model))


def messages(source: SyntheticSource) -> list[Message]:
    """Return the chat messages asking for `source`'s entries and planted facts."""
    conversation = source.bank_type == "conversation"
    speaker_rule = (
        'Each entry has a "speaker" (a first name, or "Support" for the agent) and a "role" '
        '("user" or "assistant").'
        if conversation
        else "Entries are standalone notes with no speaker."
    )
    shape = (
        '{"speaker": "...", "role": "user|assistant", "content": "..."}'
        if conversation
        else '{"content": "..."}'
    )
    user = render(
        "synthetic",
        count=source.count,
        bank_type=source.bank_type,
        description=" ".join(source.description.split()),
        speaker_rule=speaker_rule,
        facts=min(MAX_FACTS, max(4, source.count // FACT_SHARE)),
        seed=source.seed,
        entry_shape=shape,
    )
    return [
        Message(role="system", content=template("synthetic_system").strip()),
        Message(role="user", content=user),
    ]


def _problem(source: SyntheticSource, entries: list[DraftEntry], facts: list[_Fact]) -> str | None:
    """Return what makes the generated set unusable, or None."""
    if len(entries) != source.count:
        return f"{len(entries)} entries instead of {source.count}"
    if not facts:
        return "no planted facts"
    try:
        check_drafts(entries, source.bank_type, [f"entry {i}" for i in range(1, len(entries) + 1)])
    except InvalidInput as exc:
        return str(exc)
    text = "\n".join(e.content for e in entries)
    planted = [PlantedFact(kind=f.kind, text=f.text, value=f.value) for f in facts]
    diff = fact_diff(planted, text)
    missing = diff.dropped + diff.contradicted
    if missing:
        return f"fact {missing[0].text!r} = {missing[0].value!r} is in no entry"
    return None
