"""Pasted entries: JSON lines and `speaker: text` lines, roles, and errors naming the line."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.errors import InvalidInput
from memory.prompt_lab import DraftEntry, parse_pasted


def test_speaker_lines_take_chat_roles_and_custom_roles() -> None:
    text = (
        "system: You help with espresso machines.\n"
        "user: My grinder jams.\n"
        "\n"
        "Assistant: Which model is it?\n"
        "Dana (customer): A Brevo 3000, bought in May.\n"
        "Support Bot (agent): Noted: ticket 5521.\n"
    )

    drafts = parse_pasted(text, "conversation")

    assert [(d.speaker, d.role, d.content) for d in drafts] == [
        ("system", "system", "You help with espresso machines."),
        ("user", "user", "My grinder jams."),
        ("Assistant", "assistant", "Which model is it?"),
        ("Dana", "customer", "A Brevo 3000, bought in May."),
        ("Support Bot", "agent", "Noted: ticket 5521."),
    ]
    assert {d.key for d in drafts} == {"pasted"}


def test_json_lines_keep_their_fields_and_mix_with_speaker_lines() -> None:
    text = (
        '{"key": "c-7", "speaker": "Ravi", "role": "user", "content": "Order 88213 is late.",'
        ' "created_at": "2026-10-30T09:00:00Z"}\n'
        '{"speaker": "Support", "content": "It ships tomorrow."}\n'
        "Ravi: thanks\n"
    )

    drafts = parse_pasted(text, "conversation")

    assert drafts[0] == DraftEntry(
        key="c-7",
        speaker="Ravi",
        role="user",
        content="Order 88213 is late.",
        created_at=datetime(2026, 10, 30, 9, tzinfo=UTC),
    )
    assert (drafts[1].key, drafts[1].speaker, drafts[1].role) == ("pasted", "Support", None)
    assert (drafts[2].speaker, drafts[2].content) == ("Ravi", "thanks")


def test_a_byte_order_mark_and_windows_line_ends_are_ignored() -> None:
    drafts = parse_pasted("\ufeffuser: hi\r\nassistant: hello\r\n", "conversation")

    assert [(d.speaker, d.role, d.content) for d in drafts] == [
        ("user", "user", "hi"),
        ("assistant", "assistant", "hello"),
    ]


def test_an_indented_line_continues_the_entry_above() -> None:
    drafts = parse_pasted("user: first line\n  second line\nassistant: ok\n", "conversation")

    assert [d.content for d in drafts] == ["first line\nsecond line", "ok"]


def test_general_banks_take_plain_lines_without_speakers() -> None:
    drafts = parse_pasted("Dana prefers email.\nNote: the office moved.\n", "general")

    assert [(d.speaker, d.content) for d in drafts] == [
        (None, "Dana prefers email."),
        (None, "Note: the office moved."),
    ]


@pytest.mark.parametrize(
    ("text", "bank_type", "message"),
    [
        ("", "conversation", "nothing pasted"),
        ("\n  \n", "conversation", "nothing pasted"),
        ("user: hi\n{bad json\n", "conversation", "line 2: bad JSON"),
        ('user: hi\n\n["a list"]\n', "conversation", "line 3: expected `speaker: text`"),
        ('{"content": "x", "mood": "sad"}', "conversation", "line 1: mood: Extra inputs"),
        ('{"speaker": "a"}', "conversation", "line 1: content: Field required"),
        ('user: hi\n{"content": "no speaker"}', "conversation", "line 2: speaker is missing"),
        ("just words without a speaker", "conversation", "line 1: expected `speaker: text`"),
        ("user:   ", "conversation", "line 1: expected `speaker: text`"),
        ('note\n{"speaker": "Dana", "content": "x"}', "general", "line 2: speaker is 'Dana'"),
        ("compaction-summary: old", "conversation", "line 1: speaker 'compaction-summary'"),
    ],
)
def test_bad_paste_is_refused_naming_the_line(text: str, bank_type: str, message: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_pasted(text, bank_type)  # type: ignore[arg-type]

    assert message in str(caught.value)
