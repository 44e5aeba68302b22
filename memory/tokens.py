"""Token counting with litellm's bundled cl100k tokenizer files, without importing litellm.

litellm ships tiktoken's encoding files; pointing TIKTOKEN_CACHE_DIR at them lets tiktoken
load offline (plain tiktoken would try to download them).

Counting has an exact fast path for text whose only whitespace is single spaces between
words (most one-line prose): see `word_count`.
"""

from __future__ import annotations

import importlib.util
import os
from functools import cache
from itertools import islice
from pathlib import Path
from typing import Protocol

WORD_CACHE_SIZE = 100_000
"""Words whose token counts are remembered (a few MB; each cache is emptied when full)."""
WORD_CACHE_LENGTH = 48
"""Longest word (characters) remembered; longer ones are counted every time."""


class _Encoding(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...
    def decode(self, tokens: list[int]) -> str: ...
    def decode_single_token_bytes(self, token: int) -> bytes: ...


def _litellm_tokenizer_dir() -> Path:
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        raise RuntimeError("litellm is not installed; its bundled tokenizer is needed offline")
    return Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"


@cache
def encoding() -> _Encoding:
    """Return the cl100k_base encoding, loaded from litellm's bundled files."""
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(_litellm_tokenizer_dir()))
    import tiktoken

    enc: _Encoding = tiktoken.get_encoding("cl100k_base")
    return enc


def encode(text: str) -> list[int]:
    """Return the cl100k token ids of `text` (special tokens as plain text)."""
    return encoding().encode_ordinary(text)


def decode(tokens: list[int]) -> str:
    """Return the text of cl100k token ids."""
    return encoding().decode(tokens)


def starts_character(token: int) -> bool:
    """Return whether token id `token`'s bytes start a UTF-8 character (a cut before it
    splits no character); a multi-byte character can span several tokens."""
    return encoding().decode_single_token_bytes(token)[0] & 0xC0 != 0x80


def count_tokens(text: str) -> int:
    """Return the number of cl100k tokens in `text`, exactly `len(encode(text))`."""
    found = word_count(text)
    return len(encoding().encode_ordinary(text)) if found is None else found


def word_count(text: str) -> int | None:
    """Return the token count of `text` from remembered word counts; None when its
    whitespace is not only single spaces between words (then only encoding tells).

    Exact: cl100k cuts text into pieces with a regex and encodes each piece on its own;
    only whitespace-only pieces hold whitespace past their first character (here, a lone
    space), so every space starts a piece; the pattern's look-aheads (`$`, `(?!\\S)`) follow
    only whitespace and its runs stop at a space as at the end of the text, so ` word` is cut
    the same inside the text as alone (tests/test_write_fast_path.py checks the counts).
    """
    # isprintable: no whitespace but U+0020 (Unicode White_Space is all Cc, Zs, Zl or Zp)
    if not text.isprintable() or "  " in text or text.startswith(" ") or text.endswith(" "):
        return None
    words = text.split(" ")
    return _first_count(words[0]) + _spaced_count(words)


_first: dict[str, int] = {}
_spaced: dict[str, int] = {}


def _first_count(word: str) -> int:
    """Return the tokens of `word` at the start of a text."""
    found = _first.get(word)
    if found is None:
        found = _remember(_first, word, word)
    return found


def _spaced_count(words: list[str]) -> int:
    """Return the tokens of ` word` summed over every word but the first."""
    try:
        return sum(map(_spaced.__getitem__, islice(words, 1, None)))
    except KeyError:
        total = 0
        for word in islice(words, 1, None):
            found = _spaced.get(word)
            total += _remember(_spaced, word, " " + word) if found is None else found
        return total


def _remember(counts: dict[str, int], word: str, piece: str) -> int:
    """Return the token count of `piece`, remembered under `word` when the word is short."""
    found = len(encoding().encode_ordinary(piece))
    if len(word) <= WORD_CACHE_LENGTH:
        if len(counts) >= WORD_CACHE_SIZE:
            counts.clear()
        counts[word] = found
    return found
