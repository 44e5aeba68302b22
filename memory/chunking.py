"""Split entry text into token windows of the mode's chunk size and overlap."""

from __future__ import annotations

from dataclasses import dataclass

from memory import tokens


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
    if len(ids) <= size:
        return Chunks([text], len(ids))
    step = size - overlap
    texts = []
    for start in range(0, len(ids), step):
        texts.append(tokens.decode(ids[start : start + size]))
        if start + size >= len(ids):
            break
    return Chunks(texts, len(ids))
