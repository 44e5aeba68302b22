"""The assistant and the synthetic generator through a model: a ScriptedCompleter named
like a litellm model stands for it (no server, no litellm; the adapter has its own tests)."""

from __future__ import annotations

import json

import pytest

from memory.assistant import propose
from memory.context import Context
from memory.errors import ProviderError
from memory.ports import Completer
from memory.prompt_lab import SyntheticSource, TestOptions, synthesize
from memory.prompt_lab.run import LabModels, run_checked
from memory.testing import ScriptedCompleter

MODEL = "openai/gpt-4o-mini"
LABEL = "openai/gpt-4o-mini (LLM via litellm)"
PROPOSAL = {
    "bank_type": "conversation",
    "compaction_prompt": "Keep issues, order numbers and promised dates.",
    "max_tokens": 8000,
    "max_turns": 200,
    "retention_days": 90,
    "rationale": ["50 messages/day x ~40 tokens = 2,000 tokens/day; 8,000 keeps ~4 days"],
}
GENERATED = {
    "entries": [
        {"speaker": "Dana", "role": "user", "content": "My order number is 48213."},
        {"speaker": "Support", "role": "assistant", "content": "Thanks, checking now."},
        {"speaker": "Dana", "role": "user", "content": "My account manager is Priya Raman."},
        {"speaker": "Support", "role": "assistant", "content": "Delivery date: May 3, 2026."},
    ],
    "facts": [
        {"kind": "number", "text": "order number", "value": "48213"},
        {"kind": "name", "text": "account manager", "value": "Priya Raman"},
        {"kind": "date", "text": "Delivery date", "value": "May 3, 2026"},
    ],
}


@pytest.fixture
def model() -> ScriptedCompleter:
    """The model: it answers with what a test enqueues, and records what it was sent."""
    return ScriptedCompleter(model=MODEL)


def sent(model: ScriptedCompleter) -> str:
    (messages,) = model.calls
    return json.dumps([m.content for m in messages])


def test_the_model_proposes_and_the_reply_becomes_a_proposal(model: ScriptedCompleter) -> None:
    model.enqueue("Here you go:\n```json\n" + json.dumps(PROPOSAL) + "\n```")

    proposal = propose("customer support, 50 messages a day", model=model)

    assert proposal.model_dump() == {**PROPOSAL, "assistant": LABEL, "offline": False, "mode": None}
    asked = sent(model)
    assert "customer support, 50 messages a day" in asked
    assert "customer-support (conversation)" in asked  # the templates are offered


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("I suggest 8000 tokens.", "replied without a JSON object"),
        ('{"bank_type": "conversation", ', "replied without a JSON object"),
        ('{"bank_type": "conversation",}', "returned invalid JSON"),
        (json.dumps({**PROPOSAL, "max_tokens": "lots"}), "max_tokens: Input should be a valid"),
        (json.dumps({**PROPOSAL, "colour": "red"}), "colour: Extra inputs are not permitted"),
        (json.dumps({**PROPOSAL, "max_turns": -5}), "max_turns must be 0-"),
        (json.dumps({**PROPOSAL, "bank_type": "general"}), "a general bank, but a conversation"),
        (json.dumps({**PROPOSAL, "rationale": []}), "no rationale"),
    ],
)
def test_an_unusable_proposal_is_a_clear_provider_error(
    model: ScriptedCompleter, reply: str, message: str
) -> None:
    model.enqueue(reply)

    with pytest.raises(ProviderError, match=message) as caught:
        propose("support chats", bank_type="conversation", model=model)

    assert MODEL in str(caught.value)


def test_the_model_writes_synthetic_entries_with_their_planted_facts(
    model: ScriptedCompleter,
) -> None:
    model.enqueue(json.dumps(GENERATED))
    source = SyntheticSource(description="espresso machine support", count=4, seed=9)

    made = synthesize(source, model)

    assert [(e.speaker, e.role, e.content) for e in made.entries] == [
        (e["speaker"], e["role"], e["content"]) for e in GENERATED["entries"]
    ]
    assert [f.model_dump(exclude={"previous"}) for f in made.facts] == GENERATED["facts"]
    assert made.generator == LABEL
    asked = sent(model)
    assert "espresso machine support" in asked and "Variation seed: 9" in asked


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"entries": GENERATED["entries"][:3]}, "3 entries instead of 4"),
        ({"facts": []}, "no planted facts"),
        (
            {"facts": [{"kind": "number", "text": "order number", "value": "99999"}]},
            "fact 'order number' = '99999' is in no entry",
        ),
        ({"facts": [{"kind": "colour", "text": "x", "value": "y"}]}, "facts.0.kind"),
        (
            {"entries": [{"content": "no speaker"}, *GENERATED["entries"][1:]]},
            "entry 1: speaker is missing",
        ),
    ],
)
def test_unusable_synthetic_entries_are_a_clear_provider_error(
    model: ScriptedCompleter, change: dict[str, object], message: str
) -> None:
    model.enqueue(json.dumps({**GENERATED, **change}))
    source = SyntheticSource(description="support", count=4)

    with pytest.raises(ProviderError, match=message):
        synthesize(source, model)


def test_a_run_on_model_written_entries_diffs_their_facts(
    model: ScriptedCompleter, ctx: Context
) -> None:
    model.enqueue(json.dumps(GENERATED))
    from memory.providers.extractive import offline_completer

    summarizer: Completer = offline_completer("membank/extractive")
    models = LabModels(summarizer=summarizer, generator=model)
    source = SyntheticSource(description="support", count=4)

    run = run_checked(ctx, source, TestOptions(prompt="Keep facts."), models)

    assert run.source_label == f"4 synthetic entries ({LABEL})"
    assert run.fact_diff is not None
    diff = run.fact_diff
    assert len(diff.kept) + len(diff.dropped) + len(diff.contradicted) == 3
    assert diff.kept[-1].value == "May 3, 2026"  # in the newest entry, kept verbatim
