"""The assistant and the synthetic generator through a configured model: real litellm calls
to the fake OpenAI-compatible server on 127.0.0.1 (no network)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fake_llm_server import Script, openai_endpoint

from memory.assistant import propose
from memory.context import Context
from memory.errors import ProviderError
from memory.lab import SyntheticSource, run_test, synthesize
from memory.settings import Settings

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


@pytest.fixture(scope="module")
def served() -> Iterator[Script]:
    """One fake server for the module (its shutdown takes half a second), requests allowed
    and the OpenAI provider pointed at it."""
    script = Script()
    with pytest.MonkeyPatch.context() as patch, openai_endpoint(script, patch):
        yield script


@pytest.fixture
def script(served: Script) -> Script:
    """The module's server script, its requests cleared for this test."""
    served.requests.clear()
    served.reply = ""
    return served


def settings() -> Settings:
    return Settings(llm_model=MODEL, llm_retries=0)


def sent(script: Script) -> str:
    (body,) = [body for path, body in script.requests if path == "/v1/chat/completions"]
    return json.dumps(body["messages"])


def test_the_model_proposes_and_the_reply_becomes_a_proposal(script: Script) -> None:
    script.reply = "Here you go:\n```json\n" + json.dumps(PROPOSAL) + "\n```"

    proposal = propose("customer support, 50 messages a day", settings=settings())

    assert proposal.model_dump() == {**PROPOSAL, "assistant": LABEL, "offline": False}
    asked = sent(script)
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
    script: Script, reply: str, message: str
) -> None:
    script.reply = reply

    with pytest.raises(ProviderError, match=message) as caught:
        propose("support chats", bank_type="conversation", settings=settings())

    assert MODEL in str(caught.value)


def test_the_model_writes_synthetic_entries_with_their_planted_facts(script: Script) -> None:
    script.reply = json.dumps(GENERATED)
    source = SyntheticSource(description="espresso machine support", count=4, seed=9)

    made = synthesize(source, settings())

    assert [(e.speaker, e.role, e.content) for e in made.entries] == [
        (e["speaker"], e["role"], e["content"]) for e in GENERATED["entries"]
    ]
    assert [f.model_dump() for f in made.facts] == GENERATED["facts"]
    assert made.generator == LABEL
    asked = sent(script)
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
    script: Script, change: dict[str, object], message: str
) -> None:
    script.reply = json.dumps({**GENERATED, **change})
    source = SyntheticSource(description="support", count=4)

    with pytest.raises(ProviderError, match=message):
        synthesize(source, settings())


def test_a_run_on_model_written_entries_diffs_their_facts(script: Script, ctx: Context) -> None:
    script.reply = json.dumps(GENERATED)
    ctx.settings = settings()
    from memory.providers.extractive import offline_completer

    ctx.completer = lambda: offline_completer("membank/extractive")

    run = run_test(ctx, SyntheticSource(description="support", count=4), prompt="Keep facts.")

    assert run.source_label == f"4 synthetic entries ({LABEL})"
    assert run.fact_diff is not None
    diff = run.fact_diff
    assert len(diff.kept) + len(diff.dropped) + len(diff.contradicted) == 3
    assert diff.kept[-1].value == "May 3, 2026"  # in the newest entry, kept verbatim
