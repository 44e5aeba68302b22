"""Token counting with the cl100k tokenizer shipped in membank (memory/data), offline.

`memory/data/cl100k_base.tiktoken` is tiktoken's cl100k_base ranks file (MIT, from
openaipublic; sha256 checked at load); tiktoken alone would download it.

Counting has an exact fast path for text whose only whitespace is single spaces between
words (most one-line prose): see `word_count`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib import resources
from itertools import islice
from typing import Protocol

WORD_CACHE_SIZE = 100_000
"""Words whose token counts are remembered (a few MB; each cache is emptied when full)."""
WORD_CACHE_LENGTH = 48
"""Longest word (characters) remembered; longer ones are counted every time."""


class _Encoding(Protocol):
    def encode_ordinary(self, text: str) -> list[int]: ...
    def decode(self, tokens: list[int]) -> str: ...
    def decode_single_token_bytes(self, token: int) -> bytes: ...


CL100K_FILE = "data/cl100k_base.tiktoken"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
"""cl100k_base's pre-tokenizer pattern, as tiktoken_ext.openai_public defines it."""
CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}


@cache
def encoding() -> _Encoding:
    """Return the cl100k_base encoding, loaded from the ranks file shipped in membank."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    path = resources.files("memory").joinpath(CL100K_FILE)
    with resources.as_file(path) as local:
        ranks = load_tiktoken_bpe(str(local), expected_hash=CL100K_SHA256)
    enc: _Encoding = tiktoken.Encoding(
        "cl100k_base",
        pat_str=CL100K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=CL100K_SPECIAL,
    )
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
    return COUNTER.count(text)


def truncate(text: str, budget: int, *, count: Callable[[str], int] = count_tokens) -> str:
    """Return `text` cut to at most `budget` tokens by `count`, ending in "…" when cut (a
    summary a model wrote a little past its budget)."""
    if count(text) <= budget:
        return text
    cut = decode(encode(text)[: max(0, budget - 1)]).rstrip()
    while cut and count(cut + "…") > budget:
        cut = cut[:-1]
    return cut + "…"


def word_count(text: str) -> int | None:
    """Return the token count of `text` from the shared counter's remembered word counts;
    None when only encoding tells (see `TokenCounter.word_count`)."""
    return COUNTER.word_count(text)


class WordCounts(dict[str, int]):
    """Remembered token counts of words, emptied when `limit` words are held."""

    def __init__(self, limit: int = WORD_CACHE_SIZE) -> None:
        super().__init__()
        self.limit = limit


class TokenCounter:
    """Exact cl100k token counts, with the token counts of words remembered for the fast
    path (`word_count`): measured to pay end to end (bench/token_cache.py, RESULTS).

    Args:
        encoding: returns the encoding that counts (default: the shipped cl100k).
        limit: words each cache remembers before it is emptied.
        longest: longest word (characters) remembered; longer ones are counted every time.
    """

    def __init__(
        self,
        encoding: Callable[[], _Encoding] = encoding,
        *,
        limit: int = WORD_CACHE_SIZE,
        longest: int = WORD_CACHE_LENGTH,
    ) -> None:
        self.encoding = encoding
        self.longest = longest
        self.first = WordCounts(limit)
        """Counts of words at the start of a text."""
        self.spaced = WordCounts(limit)
        """Counts of ` word`: a word after a space."""

    def count(self, text: str) -> int:
        """Return the number of cl100k tokens in `text`, exactly `len(encode(text))`."""
        found = self.word_count(text)
        return len(self.encoding().encode_ordinary(text)) if found is None else found

    def word_count(self, text: str) -> int | None:
        """Return the token count of `text` from remembered word counts; None when its
        whitespace is not only single spaces between words (then only encoding tells).

        Exact: cl100k cuts text into pieces with a regex and encodes each piece on its own;
        only whitespace-only pieces hold whitespace past their first character (here, a lone
        space), so every space starts a piece; the pattern's look-aheads (`$`, `(?!\\S)`)
        follow only whitespace and its runs stop at a space as at the end of the text, so
        ` word` is cut the same inside the text as alone (tests/test_write_fast_path.py
        checks the counts).
        """
        # isprintable: no whitespace but U+0020 (Unicode White_Space is all Cc, Zs, Zl or Zp)
        if not text.isprintable() or "  " in text or text.startswith(" ") or text.endswith(" "):
            return None
        words = text.split(" ")
        first = self.first.get(words[0])
        if first is None:
            first = self._remember(self.first, words[0], words[0])
        return first + self._spaced_count(words)

    def _spaced_count(self, words: list[str]) -> int:
        """Return the tokens of ` word` summed over every word but the first."""
        spaced = self.spaced
        try:
            return sum(map(spaced.__getitem__, islice(words, 1, None)))
        except KeyError:
            total = 0
            for word in islice(words, 1, None):
                found = spaced.get(word)
                total += self._remember(spaced, word, " " + word) if found is None else found
            return total

    def _remember(self, counts: WordCounts, word: str, piece: str) -> int:
        """Return the token count of `piece`, remembered under `word` when it is short."""
        found = len(self.encoding().encode_ordinary(piece))
        if len(word) <= self.longest:
            if len(counts) >= counts.limit:
                counts.clear()
            counts[word] = found
        return found


COUNTER = TokenCounter()
"""The counter `count_tokens` and `word_count` use (its caches shared by the process)."""
