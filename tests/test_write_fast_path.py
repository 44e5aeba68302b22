"""The write path's shortcuts give what the plain code gives: token counts, chunks, records."""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import random
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
import regex
import tiktoken

from memory import banks, entries, validation
from memory.config import get_mode
from memory.context import Context
from memory.entries.chunking import chunk_many, chunk_text
from memory.errors import InvalidInput
from memory.models import Bank, BankCreate, Entry, EntryIn
from memory.providers import tokens
from memory.store import filters
from memory.store.lance import LanceStore
from memory.store.schema import ENTRY_COLUMNS
from memory.testing import CountingEncoding, HashingEmbedder, RecordingEmbedder

VARIED = [
    "",
    " ",
    "hello",
    "Hello world.",
    "I'm sure you'll LOVE it, isn't it? We've said: 'they'd go' & they'RE gone!",
    "prices: 1234567 items at 3.14159 each, 2026-11-01T12:00:00Z, +33 6 12 34 56 78",
    "naïve café déjà-vu Ærøskøbing straße İstanbul ΑΘΗΝΑ Москва",
    "東京で会いましょう 我们明天见 서울에서 만나요",
    "שלום עולם مرحبا بالعالم नमस्ते दुनिया",
    "emoji 😀 👍🏽 👨‍👩‍👧‍👦 🇫🇷 flags and ❤️ hearts 🎉🎉🎉",
    "combining e\u0301 a\u0308 o\u0302 marks",
    "special tokens <|endoftext|> and <|fim_prefix|> stay plain text",
    "code: def f(x): return x**2  # two spaces before the comment",
    "tabs\tand\nnewlines\r\nand  double  spaces   and trailing ",
    " leading space",
    "trailing space ",
    "no\u00a0break\u00a0space and thin\u2009space and ideographic\u3000space",
    "line\u2028separator and paragraph\u2029separator and next\u0085line",
    "zero\u200bwidth\u200bspace and word\u2060joiner",
    "\n\n\n   \t\t  \n",
    "a " * 600 + "end",
    "supercalifragilisticexpialidocious " * 40 + "antidisestablishmentarianism",
    "x" * 5000,
    "https://example.com/path?query=1&other=two#frag user@example.com",
    "'s 's 're 've 'm 'll 'd 'S 'RE",
    "!!! ??? ... --- *** ''' \"\"\" ``` ~~~",
    "12 123 1234 12345 123456 1 22 333 4444",
]

PIECES = [
    "the", "The", "THE", "cat's", "don't", "we'd", "'re", "'ll", "x", "42", "1234567",
    "3.14", "a,b", "end.", "end...", "(paren)", "[x]", "{y}", "é", "naïve", "Ωmega",
    "東京", "😀", "👍🏽", "🇫🇷", "e\u0301", "<|endoftext|>", "-", "--", "'", "\"q\"",
    "#tag", "@user", "a/b", "c:\\dir", "¿qué?", "¡sí!", "mañana", "ﬁ", "Ⅻ", "٣٤٥",
    "x²", "½", "—", "…", "🙂🙂", "a'b", "'", "''", "n't", "'S",
]  # fmt: skip


def _random_texts(count: int, seed: int) -> list[str]:
    """Return texts of random pieces joined by single spaces (the counting fast path)."""
    rng = random.Random(seed)
    return [" ".join(rng.choices(PIECES, k=rng.randint(1, 80))) for _ in range(count)]


def _plain_encoding() -> tiktoken.Encoding:
    """Return tiktoken's own cl100k encoding, from litellm's copy of the file (a reference
    independent of the file and pattern membank ships)."""
    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.origin is not None
    bundled = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(bundled))
    return tiktoken.get_encoding("cl100k_base")


def _plain_count(text: str) -> int:
    """Return the token count as the code before the fast path computed it."""
    return len(_plain_encoding().encode(text, disallowed_special=()))


@pytest.mark.parametrize("text", VARIED)
def test_count_tokens_is_exact_on_varied_texts(text: str) -> None:
    expected = _plain_count(text)
    assert tokens.count_tokens(text) == expected
    assert tokens.count_tokens(text) == expected  # again, from the word caches
    assert tokens.encode(text) == _plain_encoding().encode(text, disallowed_special=())


def test_count_tokens_is_exact_on_random_word_texts() -> None:
    texts = _random_texts(3000, seed=1)
    expected = [_plain_count(t) for t in texts]
    counting = CountingEncoding(tokens.encoding())
    counter = tokens.TokenCounter(lambda: counting)
    assert [counter.count(t) for t in texts] == expected
    # warm caches give the same counts, without encoding anything: all took the fast path
    counting.calls.clear()
    assert [counter.count(t) for t in texts] == expected
    assert counting.calls == []


BLOCKS = [
    (0x21, 0x7E), (0xA1, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x590, 0x6FF),
    (0x900, 0x97F), (0x2010, 0x2027), (0x3001, 0x30FF), (0x4E00, 0x4F00), (0xAC00, 0xAC80),
    (0x1F300, 0x1F6FF), (0xFB00, 0xFB4F),
]  # fmt: skip


def _random_unicode_texts(count: int, seed: int) -> list[str]:
    """Return texts of random printable characters from many scripts, some with whitespace."""
    rng = random.Random(seed)

    def char() -> str:
        while True:
            low, high = rng.choice(BLOCKS)
            found = chr(rng.randint(low, high))
            if found.isprintable() and found != " ":
                return found

    def word() -> str:
        return "".join(char() for _ in range(rng.randint(1, 8)))

    texts = []
    for _ in range(count):
        text = " ".join(word() for _ in range(rng.randint(1, 30)))
        if rng.random() < 0.3:  # some leave the fast path
            other = rng.choice(["  ", "\n", " \n", "\t", "\u00a0", "\r\n"])
            text = text.replace(" ", other, rng.randint(1, 3))
        texts.append(text)
    return texts


def test_count_tokens_is_exact_on_random_unicode() -> None:
    texts = _random_unicode_texts(2000, seed=3)
    counter = tokens.TokenCounter()
    assert sum(counter.word_count(t) is not None for t in texts) > 1000
    assert [counter.count(t) for t in texts] == [_plain_count(t) for t in texts]


def test_the_fast_path_counts_from_words() -> None:
    second = "please we'd like two coffees 😀"
    expected = _plain_count(second)
    counting = CountingEncoding(tokens.encoding())
    counter = tokens.TokenCounter(lambda: counting)
    counter.count("we'd like two 😀 coffees, please")
    # each word once (with its space), never the whole text
    assert counting.calls == ["we'd", " like", " two", " 😀", " coffees,", " please"]
    counting.calls.clear()
    assert counter.count(second) == expected
    assert counting.calls == ["please", " we'd", " coffees"]  # only words new in that place
    counting.calls.clear()
    counter.count("two  spaces")
    assert counting.calls == ["two  spaces"]  # other whitespace: the whole text
    assert counter.word_count("two  spaces") is None
    assert counter.word_count("new\nline") is None and counter.word_count(" lead") is None


def test_only_the_plain_space_is_printable_whitespace() -> None:
    """The fast path's guard: `isprintable()` rules out every other Unicode White_Space."""
    everything = "".join(map(chr, range(0x110000)))
    white = regex.findall(r"\p{White_Space}", everything)
    assert " " in white and "\u3000" in white and len(white) >= 25
    assert [c for c in white if c.isprintable()] == [" "]
    # what the cl100k pattern calls \s is the same set
    assert regex.findall(r"\s", everything) == white


def test_the_word_caches_stay_bounded() -> None:
    counter = tokens.TokenCounter(limit=50)
    text = " ".join(f"w{i}" for i in range(200)) + " " + "y" * 100
    assert counter.count(text) == _plain_count(text)
    assert 0 < len(counter.spaced) <= 50
    assert "y" * 100 not in counter.spaced  # long words are counted, not remembered


@pytest.mark.parametrize(("size", "overlap"), [(8, 2), (32, 8), (256, 32), (10_000, 0)])
def test_chunk_many_matches_chunk_text(size: int, overlap: int) -> None:
    texts = VARIED[2:] + _random_texts(200, seed=2)
    assert chunk_many(texts, size=size, overlap=overlap) == [
        chunk_text(t, size=size, overlap=overlap) for t in texts
    ]


def test_chunk_many_rejects_a_bad_window() -> None:
    with pytest.raises(ValueError, match="chunk size"):
        chunk_many(["text"], size=4, overlap=4)


def test_built_entries_are_ordinary_entries(ctx: Context) -> None:
    bank = banks.create(ctx, BankCreate(name="g", type="general"))
    item = EntryIn(key="k", content="a fact", tags=["t"], metadata={"a": [1, "é"]})
    (written,) = entries.write(ctx, bank, [item])
    values = {name: getattr(written, name) for name in Entry.model_fields}
    assert written == Entry.model_construct(**values) == Entry.model_validate(values)
    assert list(written.__dict__) == list(Entry.model_fields)
    assert written.model_fields_set == set(Entry.model_fields)
    # `_entry` skips what model_construct would run for these; Entry has none of them
    assert Entry.__pydantic_post_init__ is None and not Entry.__private_attributes__
    assert Entry.model_config.get("extra") != "allow"
    assert Entry.model_validate_json(written.model_dump_json()) == written
    copied = written.model_copy(update={"content": "changed"})
    assert (copied.content, written.content) == ("changed", "a fact")
    # the entry does not share the item's mutable values
    assert written.tags is not item.tags and written.metadata is not item.metadata


def _stored(ctx: Context, bank: Bank) -> list[dict[str, Any]]:
    table = ctx.store.scan(bank.id, columns=ENTRY_COLUMNS)
    docs = {  # what the full-text index sees, carried text included (store.carried)
        (d["entry_id"], d["chunk_index"]): d
        for d in ctx.store.index_documents(bank.id).to_pylist()  # type: ignore[attr-defined]
    }
    rows = [
        {
            **r,
            **{
                c: docs[(r["entry_id"], r["chunk_index"])][c] for c in ("search_text", "context_id")
            },
        }
        for r in table.to_pylist()
    ]
    return sorted(rows, key=lambda r: (r["seq"], r["chunk_index"]))


def test_mixed_batch_rows(ctx: Context) -> None:
    bank = banks.create(ctx, BankCreate(name="c", type="conversation", mode="balanced"))
    spec = get_mode("balanced")
    long_text = " ".join(f"word{i}" for i in range(spec.chunk_size * 2))
    items = [
        EntryIn(key="a", speaker="ann", content="short one", metadata={"n": 1}),
        EntryIn(key="b", speaker="bob", role="user", content=long_text, tags=["x", "y"]),
        EntryIn(key="a", speaker="ann", content="naïve café 😀", attachments=[{"f": "é"}]),
    ]
    written = entries.write(ctx, bank, items)
    expected_chunks = chunk_text(long_text, size=spec.chunk_size, overlap=spec.chunk_overlap)
    assert len(expected_chunks.texts) > 1
    rows = _stored(ctx, bank)
    assert [r["entry_id"] for r in rows] == [
        written[0].id,
        *[written[1].id] * len(expected_chunks.texts),
        written[2].id,
    ]
    long_rows = [r for r in rows if r["entry_id"] == written[1].id]
    assert [r["text"] for r in long_rows] == expected_chunks.texts
    assert [r["chunk_index"] for r in long_rows] == list(range(len(long_rows)))
    assert {r["chunk_count"] for r in long_rows} == {len(long_rows)}
    assert [r["content"] for r in long_rows] == [long_text] + [None] * (len(long_rows) - 1)
    assert {(r["key"], r["speaker"], r["role"], tuple(r["tags"])) for r in long_rows} == {
        ("b", "bob", "user", ("x", "y"))
    }
    assert len({r["seq"] for r in long_rows}) == 1
    assert rows[0]["seq"] < long_rows[0]["seq"] < rows[-1]["seq"]
    assert [(r["metadata"], r["attachments"]) for r in (rows[0], rows[-1])] == [
        ('{"n": 1}', "[]"),
        ("{}", '[{"f": "é"}]'),
    ]
    assert [e.token_count for e in written] == [_plain_count(i.content) for i in items]
    # conversation turns are indexed with their day (issue 14), then speaker and text, then
    # the text of the turn before in the same key (key b's entry in between is not it)
    assert [r["search_text"] for r in (rows[0], rows[-1])] == [
        "1 November 2026\nann: short one",
        "1 November 2026\nann: naïve café 😀\x1eshort one",
    ]
    assert [r["context_id"] for r in (rows[0], rows[-1])] == [None, written[0].id]
    assert entries.load(ctx, bank, "a") == [written[0], written[2]]
    assert ctx.store.count(bank.id, filters.equals("key", "b")) == len(long_rows)


def test_metadata_is_serialised_as_before(ctx: Context) -> None:
    bank = banks.create(ctx, BankCreate(name="g", type="general"))
    metadata = {"b": 1, "a": [1.5, None, True], "é": {"nested": "ü"}, "big": 1e300}
    entries.write(ctx, bank, [EntryIn(key="k", content="x", metadata=metadata)])
    (row,) = _stored(ctx, bank)
    assert row["metadata"] == json.dumps(metadata, ensure_ascii=False)
    with pytest.raises(InvalidInput, match="NaN"):  # not JSON: refused before anything is written
        entries.write(ctx, bank, [EntryIn(key="k", content="y", metadata={"n": float("nan")})])
    assert len(_stored(ctx, bank)) == 1


def test_validate_still_returns_the_item(ctx: Context) -> None:
    bank = banks.create(ctx, BankCreate(name="g", type="general"))
    item = EntryIn(key="k", content="fine")
    assert entries.validate(bank, item) is item
    with pytest.raises(InvalidInput, match="NUL"):
        entries.validate(bank, EntryIn(key="k", content="ascii \x00 nul"))
    with pytest.raises(InvalidInput, match="NUL"):
        entries.validate(bank, EntryIn(key="k", content="non-ascii é \x00 nul"))
    with pytest.raises(InvalidInput, match="UTF-8"):
        entries.validate(bank, EntryIn(key="k", content="both \x00 and \ud800"))
    with pytest.raises(InvalidInput, match="bytes"):
        limit = validation.MAX_CONTENT_BYTES
        entries.validate(bank, EntryIn(key="k", content="€" * (limit // 3 + 1)))
    entries.validate(bank, EntryIn(key="k", content="€" * (limit // 3)))


@pytest.mark.parametrize("enabled", [True, False])
def test_write_leaves_the_garbage_collector_as_it_found_it(ctx: Context, enabled: bool) -> None:
    bank = banks.create(ctx, BankCreate(name="c", type="conversation"))
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        entries.write(ctx, bank, [EntryIn(key="k", speaker="a", content="hello")])
        assert gc.isenabled() is enabled
        with pytest.raises(InvalidInput):
            entries.write(ctx, bank, [EntryIn(key="k", content="no speaker")])
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


def test_arrow_columns_have_the_stored_types(ctx: Context) -> None:
    bank = banks.create(ctx, BankCreate(name="g", type="general"))
    entries.write(ctx, bank, [EntryIn(key="k", content="one"), EntryIn(key="k", content="two")])
    table = ctx.store.scan(bank.id, where=None)
    assert table.schema.field("created_at").type == pa.timestamp("us", tz="UTC")
    assert table.num_rows == 2


def test_a_big_write_embeds_in_bounded_batches_in_order(tmp_path: Path) -> None:
    recorder = RecordingEmbedder(384)
    ctx = Context(store=LanceStore(str(tmp_path / "db")), embedder=lambda mode: recorder)
    bank = banks.create(ctx, BankCreate(name="big", type="general", mode="accurate"))
    words = [f"w{i % 997}" for i in range(40_000)]
    (entry,) = entries.write(ctx, bank, [EntryIn(key="k", content=" ".join(words))])
    rows = ctx.store.scan(bank.id, columns=["chunk_index", "text", "vector"]).to_pylist()
    rows.sort(key=lambda r: r["chunk_index"])
    assert len(rows) > 2 * entries.EMBED_BATCH  # several batches
    assert recorder.batches[:-1] == [entries.EMBED_BATCH] * (len(recorder.batches) - 1)
    assert sum(recorder.batches) == len(rows)
    expected = HashingEmbedder(384).embed([r["text"] for r in rows])
    assert np.allclose(np.array([r["vector"] for r in rows]), expected)  # each chunk its own
    assert entries.load(ctx, bank, "k")[0].id == entry.id
