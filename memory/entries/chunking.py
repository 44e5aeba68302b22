"""Split entry text into token windows of the mode's chunk size and overlap."""

from __future__ import annotations

from dataclasses import dataclass

from memory.providers import tokens


@dataclass(frozen=True, slots=True)
class Chunks:
    """An entry's chunks and its total token count."""

    texts: list[str]
    """Chunk texts in order; one chunk when the entry fits the chunk size."""
    token_count: int
    """Tokens in the whole entry."""


def chunk_text(text: str, *, size: int, overlap: int) -> Chunks:
    """Return `text` split into windows of `size` tokens, consecutive windows sharing `overlap`."""
    _check_window(size, overlap)
    return _split(text, tokens.encode(text), size=size, overlap=overlap)


def chunk_many(texts: list[str], *, size: int, overlap: int) -> list[Chunks]:
    """Return `chunk_text` of every text; a text known to fit one chunk is not encoded."""
    _check_window(size, overlap)
    return [
        Chunks([text], found)
        if (found := tokens.word_count(text)) is not None and found <= size
        else _split(text, tokens.encode(text), size=size, overlap=overlap)
        for text in texts
    ]


def _check_window(size: int, overlap: int) -> None:
    if size <= 0 or not 0 <= overlap < size:
        raise ValueError("chunk size must be > 0 and 0 <= overlap < size")


def _split(text: str, ids: list[int], *, size: int, overlap: int) -> Chunks:
    """Cut `ids` into windows of `size` tokens, `overlap` shared, each edge moved (back when
    it can) to a token that starts a character, so no chunk splits a multi-byte character.

    ASCII text has an edge after every token: its windows are exactly `size` tokens, every
    `size - overlap`. A window is longer than `size` only when no token in it after its
    start begins a character (a character of more than `size` tokens); the shared part may
    differ from `overlap` by the tokens of a character.
    """
    count = len(ids)
    if count <= size:
        return Chunks([text], count)
    cuts = _cuts_anywhere if text.isascii() else _cuts_on_characters
    texts = []
    start = 0
    while start + size < count:
        end = cuts(ids, start + size, start + 1, count)
        texts.append(tokens.decode(ids[start:end]))
        if end >= count:
            return Chunks(texts, count)
        start = cuts(ids, end - overlap, start + 1, end)
    texts.append(tokens.decode(ids[start:]))
    return Chunks(texts, count)


def _cuts_anywhere(ids: list[int], at: int, low: int, high: int) -> int:
    """Return `at` within [low, high]: every token edge of ASCII text is a character edge."""
    return min(max(at, low), high)


def _cuts_on_characters(ids: list[int], at: int, low: int, high: int) -> int:
    """Return the last character edge in [low, at], else the first in (at, high]; `high` is
    an edge (the end of `ids` or of a window)."""
    at = min(max(at, low), high)
    for edge in range(at, low - 1, -1):
        if edge == high or tokens.starts_character(ids[edge]):
            return edge
    for edge in range(at + 1, high):
        if tokens.starts_character(ids[edge]):
            return edge
    return high
