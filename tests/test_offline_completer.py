"""The offline extractive summarizer as a Completer: called directly, labelled, no litellm."""

from __future__ import annotations

import subprocess
import sys

import pytest

from memory.errors import InvalidInput
from memory.ports import Completer, Message
from memory.prompts import compaction_messages
from memory.providers import completer_for, describe, is_offline, llm
from memory.providers.extractive import ExtractiveCompleter
from memory.providers.summarize import LABEL
from memory.providers.tokens import count_tokens
from memory.settings import Settings

LINES = [
    "Alice: Hi Bob! How are you?",
    "Bob: Hey Alice! I moved to Lisbon on 3 May 2024 with my 2 cats, Miso and Tofu.",
    "Alice: Wow, that's great!",
    "Alice: I start my new job at Acme Corp on 12 June; the salary is 85,000 euros.",
    "Bob: Congrats! Talk soon!",
]


def test_the_default_model_is_the_extractive_completer() -> None:
    completer: Completer = completer_for(Settings(llm_model="membank/extractive"))
    assert isinstance(completer, ExtractiveCompleter)
    reply = completer.complete(compaction_messages("Keep facts.", "", LINES, budget_tokens=60))
    assert reply.startswith(LABEL + "\n")
    assert count_tokens(reply) <= 60
    assert "Bob: I moved to Lisbon on 3 May 2024 with my 2 cats" in reply
    assert "12 June" in reply and "85,000 euros" in reply
    assert "Talk soon" not in reply and "Hi Bob" not in reply


def test_a_litellm_name_gets_the_litellm_completer() -> None:
    completer = completer_for(Settings(llm_model="ollama/llama3.2", llm_retries=5))
    assert isinstance(completer, llm.LiteLLMCompleter)
    assert completer.model == "ollama/llama3.2" and completer.retries == 5


def test_the_previous_summary_is_carried_forward() -> None:
    previous = f"{LABEL}\nCarol: Carol is allergic to peanuts."
    messages = compaction_messages("", previous, LINES[:1], budget_tokens=40)
    reply = ExtractiveCompleter().complete(messages)
    assert "Carol: Carol is allergic to peanuts." in reply
    assert reply.count(LABEL) == 1


def test_unknown_offline_model_and_no_messages_are_invalid_input() -> None:
    with pytest.raises(InvalidInput, match=r"membank/nope.*known: membank/extractive"):
        completer_for(Settings(llm_model="membank/nope"))
    with pytest.raises(InvalidInput, match="no messages"):
        ExtractiveCompleter().complete([])


def test_offline_output_is_labelled() -> None:
    assert describe("membank/extractive") == "extractive summarizer (offline)"
    assert ExtractiveCompleter().label == "extractive summarizer (offline)"
    assert is_offline("membank/extractive") and not is_offline("openai/gpt-4o-mini")
    assert "LLM via litellm" in describe("openai/gpt-4o-mini")


def test_blocked_model_requests_do_not_stop_the_offline_completer() -> None:
    previous = llm.allow_model_requests(False)
    try:
        reply = completer_for(Settings()).complete([Message(role="user", content="\n".join(LINES))])
    finally:
        llm.allow_model_requests(previous)
    assert reply.startswith(LABEL)


@pytest.mark.process
def test_summarizing_offline_never_imports_litellm() -> None:
    code = (
        "import sys\n"
        "from memory.providers import completer_for\n"
        "from memory.prompts import compaction_messages\n"
        "from memory.settings import Settings\n"
        f"lines = {LINES!r}\n"
        "reply = completer_for(Settings()).complete(compaction_messages('', '', lines, 60))\n"
        "assert reply.startswith('[extractive summary]'), reply\n"
        "print('litellm' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
