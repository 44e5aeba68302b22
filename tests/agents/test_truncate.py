"""`tokens.truncate`: the one cut of text to a token budget (working and session summaries)."""

from __future__ import annotations

from memory.providers.tokens import count_tokens, truncate


def test_text_within_the_budget_is_kept_whole() -> None:
    assert truncate("a short summary", 10) == "a short summary"


def test_a_cut_fits_the_budget_and_ends_in_an_ellipsis() -> None:
    text = "word " * 100
    cut = truncate(text, 12)
    assert cut.endswith("…") and count_tokens(cut) <= 12 and cut[:-1] in text


def test_the_given_counter_decides_what_fits() -> None:
    def chars(text: str) -> int:
        return len(text)

    cut = truncate("abcdefghij klmnop", 6, count=chars)
    assert len(cut) <= 6 and cut.endswith("…")
