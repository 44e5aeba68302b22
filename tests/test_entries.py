"""Entries on a real LanceDB: validation by bank type, atomic batches, order, chunking, forget."""

from __future__ import annotations

import math
import random
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memory import banks, entries, search, validation
from memory.clock import FixedClock
from memory.config import get_mode
from memory.context import Context
from memory.entries.chunking import chunk_many, chunk_text
from memory.errors import InvalidInput, NotFound
from memory.models import MEMORY_TYPES, SUMMARY_SPEAKER, Bank, BankCreate, EntryIn, SearchQuery
from memory.providers import tokens
from memory.store import filters
from memory.store.lance import LanceStore
from memory.store.segments import StoreTuning


@pytest.fixture
def conv(ctx: Context) -> Bank:
    """A conversation bank in the default mode."""
    return banks.create(ctx, BankCreate(name="conv", type="conversation"))


@pytest.fixture
def gen(ctx: Context) -> Bank:
    """A general bank in the default mode."""
    return banks.create(ctx, BankCreate(name="gen", type="general"))


def _rows(ctx: Context, bank: Bank, where: str | None = None) -> int:
    return ctx.store.count(bank.id, where)


def _said(key: str, content: str, speaker: str = "ann", **extra: Any) -> EntryIn:
    return EntryIn(key=key, content=content, speaker=speaker, **extra)


# validation ------------------------------------------------------------------------------


@pytest.mark.parametrize("speaker", [None, "", "   "])
def test_conversation_entry_needs_a_speaker(ctx: Context, conv: Bank, speaker: str | None) -> None:
    with pytest.raises(InvalidInput, match="speaker"):
        entries.write(ctx, conv, [EntryIn(key="k", content="hi", speaker=speaker)])
    assert _rows(ctx, conv) == 0


def test_the_summary_speaker_is_reserved(ctx: Context, conv: Bank) -> None:
    with pytest.raises(InvalidInput, match="reserved for compaction summaries"):
        entries.write(ctx, conv, [_said("k", "hi", speaker=SUMMARY_SPEAKER)])
    assert _rows(ctx, conv) == 0
    entries.write(ctx, conv, [_said("k", "a summary", speaker=SUMMARY_SPEAKER)], kind="summary")
    assert _rows(ctx, conv) == 1


def test_general_entry_rejects_speaker_and_role(ctx: Context, gen: Bank) -> None:
    with pytest.raises(InvalidInput, match="speaker"):
        entries.write(ctx, gen, [EntryIn(key="k", content="hi", speaker="ann")])
    with pytest.raises(InvalidInput, match="role"):
        entries.write(ctx, gen, [EntryIn(key="k", content="hi", role="user")])
    assert _rows(ctx, gen) == 0


@pytest.mark.parametrize("content", ["", " ", "\n\t  \r\n"])
def test_empty_content_is_invalid(ctx: Context, conv: Bank, gen: Bank, content: str) -> None:
    with pytest.raises(InvalidInput, match="empty"):
        entries.write(ctx, conv, [_said("k", content)])
    with pytest.raises(InvalidInput, match="empty"):
        entries.write(ctx, gen, [EntryIn(key="k", content=content)])
    assert _rows(ctx, conv) == _rows(ctx, gen) == 0


def test_oversized_content_is_invalid_counted_in_utf8_bytes(ctx: Context, gen: Bank) -> None:
    limit = validation.MAX_CONTENT_BYTES
    with pytest.raises(InvalidInput, match="split"):
        entries.write(ctx, gen, [EntryIn(key="k", content="a" * (limit + 1))])
    # fewer characters than the limit, but more bytes
    with pytest.raises(InvalidInput, match="bytes"):
        entries.write(ctx, gen, [EntryIn(key="k", content="é" * (limit // 2 + 1))])
    assert _rows(ctx, gen) == 0
    (entry,) = entries.write(ctx, gen, [EntryIn(key="k", content="word " * (limit // 5))])
    assert len(entries.load(ctx, gen, "k")[0].content.encode()) == limit
    assert entry.token_count > 0


@pytest.mark.parametrize(
    "item",
    [
        _said("k", "lone surrogate \ud800 here"),
        _said("k\udcff", "fine text"),
        _said("k", "fine text", speaker="ann\udc80"),
        _said("k", "fine text", tags=["ok", "bad\udfff"]),
        _said("k", "fine text", role="us\udfffer"),
        _said("k", "fine text", metadata={"source": "mail \udc80"}),
        _said("k", "fine text", attachments=[{"name": "f\ud800.pdf"}]),
    ],
    ids=["content", "key", "speaker", "tag", "role", "metadata", "attachments"],
)
def test_non_utf8_text_is_invalid(ctx: Context, conv: Bank, item: EntryIn) -> None:
    with pytest.raises(InvalidInput, match="UTF-8"):
        entries.write(ctx, conv, [item])
    assert _rows(ctx, conv) == 0


@pytest.mark.parametrize(
    "item",
    [
        _said("k", "null \x00 byte"),
        _said("k\x00", "text"),
        _said("k", "text", speaker="a\x00n"),
        _said("k", "text", role="us\x00er"),
        _said("k", "text", tags=["t\x00"]),
    ],
    ids=["content", "key", "speaker", "role", "tag"],
)
def test_nul_is_invalid(ctx: Context, conv: Bank, item: EntryIn) -> None:
    with pytest.raises(InvalidInput, match="NUL"):
        entries.write(ctx, conv, [item])
    assert _rows(ctx, conv) == 0


@pytest.mark.parametrize("key", ["", "   ", "k" * (validation.MAX_KEY_LENGTH + 1)])
def test_bad_key_is_invalid(ctx: Context, conv: Bank, key: str) -> None:
    with pytest.raises(InvalidInput, match="key"):
        entries.write(ctx, conv, [_said(key, "text")])
    assert _rows(ctx, conv) == 0


def test_memory_types(ctx: Context, conv: Bank, gen: Bank) -> None:
    written = entries.write(
        ctx, gen, [EntryIn(key="u1", content=f"a {t}", memory_type=t) for t in MEMORY_TYPES]
    )
    assert [e.memory_type for e in entries.load(ctx, gen, "u1")] == list(MEMORY_TYPES)
    assert [e.memory_type for e in written] == list(MEMORY_TYPES)
    with pytest.raises(InvalidInput, match="fact"):
        entries.write(ctx, gen, [EntryIn(key="u1", content="x", memory_type="opinion")])
    with pytest.raises(InvalidInput, match="general"):
        entries.write(ctx, conv, [_said("k", "x", memory_type="fact")])
    assert len(entries.load(ctx, gen, "u1")) == len(MEMORY_TYPES)
    assert _rows(ctx, conv) == 0


def test_roles_tags_metadata_and_attachments_round_trip(ctx: Context, conv: Bank) -> None:
    item = _said(
        "k",
        "see the attached invoice",
        role="tool",
        tags=["billing", "urgent"],
        metadata={"ticket": 42, "lang": "fr"},
        attachments=[{"name": "invoice.pdf", "size": 1200}],
    )
    (written,) = entries.write(ctx, conv, [item])
    (loaded,) = entries.load(ctx, conv, "k")
    assert loaded == written
    assert (loaded.speaker, loaded.role, loaded.tags) == ("ann", "tool", ["billing", "urgent"])
    assert loaded.metadata == {"ticket": 42, "lang": "fr"}
    assert loaded.attachments == [{"name": "invoice.pdf", "size": 1200}]
    assert loaded.token_count == tokens.count_tokens("see the attached invoice")


@pytest.mark.parametrize("role", ["", "  "])
def test_blank_role_is_invalid(ctx: Context, conv: Bank, role: str) -> None:
    with pytest.raises(InvalidInput, match="role"):
        entries.write(ctx, conv, [_said("k", "text", role=role)])
    assert _rows(ctx, conv) == 0


def test_metadata_must_be_plain_json(ctx: Context, conv: Bank) -> None:
    with pytest.raises(InvalidInput, match="metadata"):
        entries.write(ctx, conv, [_said("k", "text", metadata={"when": object()})])
    assert _rows(ctx, conv) == 0


def test_load_with_a_nul_key_is_invalid(ctx: Context, conv: Bank) -> None:
    with pytest.raises(InvalidInput, match="NUL"):
        entries.load(ctx, conv, "k\x00")


@pytest.mark.parametrize(
    "item",
    [
        _said("k\nk", "x"),
        _said("k", "x", speaker="a\tb"),
        _said("k", "x", speaker="s" * (validation.MAX_SPEAKER_LENGTH + 1)),
        _said("k", "x", role="r" * (validation.MAX_SPEAKER_LENGTH + 1)),
        _said("k", "x", role="user\n"),
        _said("k", "x", tags=["two\nlines"]),
    ],
    ids=["key-newline", "speaker-tab", "long-speaker", "long-role", "role-newline", "tag-newline"],
)
def test_labels_are_one_bounded_line(ctx: Context, conv: Bank, item: EntryIn) -> None:
    with pytest.raises(InvalidInput, match=r"key|speaker|role|tag"):
        entries.write(ctx, conv, [item])
    assert _rows(ctx, conv) == 0


@pytest.mark.parametrize("tag", ["", "  ", "t" * (validation.MAX_TAG_LENGTH + 1)])
def test_bad_tag_is_invalid(ctx: Context, gen: Bank, tag: str) -> None:
    with pytest.raises(InvalidInput, match="tag"):
        entries.write(ctx, gen, [EntryIn(key="k", content="x", tags=["fine", tag])])
    assert _rows(ctx, gen) == 0


@pytest.mark.parametrize(
    "bad",
    [
        EntryIn(key="k", content="no speaker"),
        _said("k", ""),
        _said("k", "x" * (validation.MAX_CONTENT_BYTES + 1)),
        _said("k", "bad \ud800"),
        _said("k", "nul \x00"),
        _said("", "no key"),
        _said("k", "bad tag", tags=[""]),
    ],
    ids=["speaker", "empty", "oversized", "surrogate", "nul", "key", "tag"],
)
def test_nothing_is_written_when_any_item_is_invalid(
    ctx: Context, conv: Bank, bad: EntryIn
) -> None:
    entries.write(ctx, conv, [_said("k", "already there")])
    before = _rows(ctx, conv)
    batch = [_said("k", "first good one"), _said("k", "second good one"), bad]
    with pytest.raises(InvalidInput):
        entries.write(ctx, conv, batch)
    assert _rows(ctx, conv) == before == 1
    assert [e.content for e in entries.load(ctx, conv, "k")] == ["already there"]


# load -------------------------------------------------------------------------------------


def test_load_returns_the_thread_in_write_order(ctx: Context, conv: Bank) -> None:
    # the clock does not move: order must come from the write order, not the timestamps
    entries.write(ctx, conv, [_said("t1", "zero", speaker="bob")])
    entries.write(ctx, conv, [_said("t1", "one"), _said("t2", "elsewhere"), _said("t1", "two")])
    entries.write(ctx, conv, [_said("t1", "three", speaker="bob")])
    entries.write(ctx, conv, [_said("t1", "four"), _said("t1", "five", speaker="bob")])
    thread = entries.load(ctx, conv, "t1")
    assert [e.content for e in thread] == ["zero", "one", "two", "three", "four", "five"]
    assert [e.speaker for e in thread] == ["bob", "ann", "ann", "bob", "ann", "bob"]
    assert [e.content for e in entries.load(ctx, conv, "t2")] == ["elsewhere"]
    assert entries.load(ctx, conv, "t3") == []


def test_load_orders_by_time_across_writes(ctx: Context, conv: Bank, clock: FixedClock) -> None:
    for i in range(5):
        entries.write(ctx, conv, [_said("k", f"turn {i}")])
        clock.advance(timedelta(seconds=30))
    thread = entries.load(ctx, conv, "k")
    assert [e.content for e in thread] == [f"turn {i}" for i in range(5)]
    assert [e.created_at for e in thread] == sorted(e.created_at for e in thread)


def test_get_entry_and_unknown_id(ctx: Context, conv: Bank) -> None:
    (entry,) = entries.write(ctx, conv, [_said("k", "hello")])
    assert entries.get_entry(ctx, conv, entry.id) == entry
    with pytest.raises(NotFound):
        entries.get_entry(ctx, conv, "no-such-id")
    with pytest.raises(NotFound):
        entries.forget(ctx, conv, "no-such-id")
    with pytest.raises(InvalidInput, match="entry id"):
        entries.forget(ctx, conv, "abc\udcff")


def test_forgetting_a_summary_updates_the_summary_count(ctx: Context, conv: Bank) -> None:
    (summary,) = entries.write(
        ctx, conv, [_said("k", "all of it", speaker="compaction-summary")], kind="summary"
    )
    banks.save(ctx, banks.get(ctx, conv.id).model_copy(update={"summary_count": 1}))
    entries.forget(ctx, conv, summary.id)
    assert banks.get(ctx, conv.id).summary_count == 0


# chunking ---------------------------------------------------------------------------------


def _long_text(words: int, tail: str = "") -> str:
    vocab = ["river", "stone", "lantern", "copper", "meadow", "harbor", "violet", "engine"]
    body = " ".join(f"{vocab[i % len(vocab)]}{i}" for i in range(words))
    return f"{body} {tail}".strip()


def _expected_chunks(text: str, size: int, overlap: int) -> list[str]:
    ids = tokens.encode(text)
    if len(ids) <= size:
        return [text]
    step = size - overlap
    count = 1 + math.ceil((len(ids) - size) / step)
    return [tokens.decode(ids[i * step : i * step + size]) for i in range(count)]


@pytest.mark.parametrize("mode", ["fast", "balanced", "accurate"])
def test_long_entry_is_chunked_by_the_mode(ctx: Context, mode: str) -> None:
    bank = banks.create(ctx, BankCreate(name=mode, type="general", mode=mode))
    spec = get_mode(mode)
    text = _long_text(400, tail="zanzibarquartz")
    short = EntryIn(key="k", content="a short note about river stones")
    (entry, note) = entries.write(ctx, bank, [EntryIn(key="k", content=text), short])

    expected = _expected_chunks(text, spec.chunk_size, spec.chunk_overlap)
    assert len(expected) >= 3
    table = ctx.store.scan(bank.id, where=filters.equals("entry_id", entry.id))
    rows = sorted(table.to_pylist(), key=lambda r: r["chunk_index"])
    assert [r["text"] for r in rows] == expected
    assert {r["chunk_count"] for r in rows} == {len(expected)}
    assert all(len(tokens.encode(r["text"])) <= spec.chunk_size for r in rows)
    assert _rows(ctx, bank, filters.equals("entry_id", note.id)) == 1
    assert entry.token_count == tokens.count_tokens(text)

    # one entry in load, with the whole text
    assert [(e.id, e.content) for e in entries.load(ctx, bank, "k")] == [
        (entry.id, text),
        (note.id, note.content),
    ]
    # one hit in search, found by its last chunk, carrying the whole text
    for method in ("hybrid", "fts", "vector"):
        hits = search.search(
            ctx,
            bank,
            SearchQuery(text="zanzibarquartz river0", method=method, k=10, min_score=0.0),
        )
        ids = [h.entry.id for h in hits]
        assert ids.count(entry.id) == 1, method
        assert len(ids) == len(set(ids))
    (hit,) = search.search(ctx, bank, SearchQuery(text="zanzibarquartz", method="fts"))
    assert hit.entry.id == entry.id
    assert hit.chunk == len(expected) - 1
    assert "zanzibarquartz" in hit.chunk_text
    assert hit.entry.content == text


def test_short_entry_is_one_chunk(ctx: Context, gen: Bank) -> None:
    (entry,) = entries.write(ctx, gen, [EntryIn(key="k", content="just a few words")])
    assert _rows(ctx, gen, filters.equals("entry_id", entry.id)) == 1


REPEATED_CJK = (
    "東京の天気は晴れです。明日は雨が降るでしょう。富士山が見えます。🚀🔭🎉 " * 12
).strip()
UNICODE_BLOCKS = [
    (0x21, 0x7E), (0xA1, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x590, 0x6FF),
    (0x900, 0x97F), (0x0E00, 0x0E7F), (0x2010, 0x2027), (0x3001, 0x30FF), (0x4E00, 0x9FFF),
    (0xAC00, 0xD7A3), (0x1F300, 0x1FAFF), (0x20000, 0x2A6DF), (0xFB00, 0xFB4F),
]  # fmt: skip


def _random_unicode(seed: int, length: int = 1500) -> str:
    """Return random characters from many scripts (astral ones too), with some whitespace."""
    rng = random.Random(seed)
    chars = []
    for _ in range(length):
        if rng.random() < 0.12:
            chars.append(rng.choice([" ", " ", "\n", "\t", "\u3000", "\u200d", "\ufe0f"]))
        else:
            low, high = rng.choice(UNICODE_BLOCKS)
            chars.append(chr(rng.randint(low, high)))
    return "".join(chars)


NON_ASCII_TEXTS = {
    "cjk": REPEATED_CJK,
    "chinese": "".join(f"第{i}章：我们明天在北京见面，然后一起去长城。" for i in range(60)),
    "korean": "".join(f"서울에서 {i}번 만나요. 내일은 비가 올 거예요. " for i in range(40)),
    "emoji": "".join(random.Random(9).choices("😀👍🏽👨‍👩‍👧‍👦🇫🇷❤️🎉🚀🔭🐍 ", k=1200)),
    "mixed": " ".join(
        f"naïve café Ærøskøbing Москва ΑΘΗΝΑ שלום مرحبا नमस्ते 東京で会いましょう {i} 我们明天见"
        " 서울에서 만나요 🙂🙂 ๑๒๓ สวัสดี 𠀀𠀁𠀂"
        for i in range(25)
    ),
    **{f"random{seed}": _random_unicode(seed) for seed in range(4)},
}


def _starts(content: str, chunks: list[str]) -> list[int] | None:
    """Return where each chunk lies in `content` when, with their overlaps removed, they
    make up `content` exactly (each starts after the previous one's start, no later than
    its end); None when they do not."""
    paths: dict[tuple[int, int], list[int]] = {(-1, 0): []}  # (start, end) -> starts so far
    for chunk in chunks:
        found: dict[tuple[int, int], list[int]] = {}
        for (start, end), starts in paths.items():
            at = content.find(chunk, start + 1)
            while 0 <= at <= end:
                if chunk and (at == 0 or starts):
                    found.setdefault((at, at + len(chunk)), [*starts, at])
                at = content.find(chunk, at + 1)
        paths = found
    whole = [starts for (_, end), starts in paths.items() if end == len(content)]
    return whole[0] if whole else None


def _check_chunks(
    content: str, texts: list[str], size: int, *, fits: bool = True, name: str = ""
) -> None:
    assert texts, name
    if "\ufffd" not in content:
        assert not [t for t in texts if "\ufffd" in t], f"{name}: a chunk splits a character"
    assert _starts(content, texts) is not None, f"{name}: the chunks do not make up the content"
    if fits:
        assert max(len(tokens.encode(t)) for t in texts) <= size, name


ASCII_TEXTS = [
    _long_text(400, tail="zanzibarquartz"),
    "def f(x):\n\treturn x ** 2  # twice\n\n" * 80,
    "I'm sure you'll LOVE it, isn't it? 1234567 items at 3.14159 each. " * 50,
]


@pytest.mark.parametrize("mode", ["fast", "balanced", "accurate"])
def test_chunks_never_split_a_character(mode: str) -> None:
    """ASCII text: the plain token windows, as before; other text: windows moved to
    character edges, within the mode's size, together making up the whole text."""
    spec = get_mode(mode)
    size, overlap = spec.chunk_size, spec.chunk_overlap
    for content in ASCII_TEXTS:
        texts = chunk_text(content, size=size, overlap=overlap).texts
        assert texts == _expected_chunks(content, size, overlap)
        _check_chunks(content, texts, size)
    for name, content in NON_ASCII_TEXTS.items():
        chunked = chunk_text(content, size=size, overlap=overlap)
        assert len(tokens.encode(content)) > 2 * size and len(chunked.texts) >= 3, name
        assert chunked.token_count == len(tokens.encode(content)), name
        _check_chunks(content, chunked.texts, size, name=name)
        assert chunk_many([content], size=size, overlap=overlap) == [chunked], name


@pytest.mark.parametrize(("size", "overlap"), [(1, 0), (2, 1), (3, 0), (4, 2), (7, 3), (16, 15)])
def test_tiny_windows_keep_characters_whole_and_end(size: int, overlap: int) -> None:
    """A window holding no character edge grows to the next one: such a chunk is the only
    kind over `size` tokens, and holds one character (or a few sharing a token)."""
    for name in ["emoji", "random0", "random1"]:
        content = NON_ASCII_TEXTS[name][:300]
        texts = chunk_text(content, size=size, overlap=overlap).texts
        _check_chunks(content, texts, size, fits=False, name=name)
        assert all(len(tokens.encode(t)) <= size or len(t) <= 3 for t in texts), name


# forget -----------------------------------------------------------------------------------


def _files_containing(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


@pytest.mark.parametrize("indexed", [False, True], ids=["unindexed", "indexed"])
def test_forget_removes_the_entry_everywhere_for_good(
    ctx: Context,
    conv: Bank,
    tmp_path: Path,
    indexed: bool,
) -> None:
    if indexed:  # fold every write into the key and full-text indices
        ctx.store = LanceStore(ctx.store.uri, tuning=StoreTuning(reindex_every=1))
    marker = "qxforgetmarker7731"
    secret = _long_text(300, tail=f"my card number is {marker}") + f" {marker}"
    keep = entries.write(ctx, conv, [_said("k", "first message about the weather")])[0]
    gone = entries.write(ctx, conv, [_said("k", secret)])[0]
    later = entries.write(ctx, conv, [_said("k", "last message about the weather")])[0]
    assert _rows(ctx, conv, filters.equals("entry_id", gone.id)) > 1
    assert _files_containing(tmp_path / "db", marker.encode())  # the scan can see it
    assert ctx.store.version_count(conv.id) > 1

    forgotten = entries.forget(ctx, conv, gone.id)

    assert forgotten.id == gone.id
    assert [e.id for e in entries.load(ctx, conv, "k")] == [keep.id, later.id]
    assert _rows(ctx, conv, filters.equals("entry_id", gone.id)) == 0
    for method in ("hybrid", "vector", "fts"):
        hits = search.search(ctx, conv, SearchQuery(text=f"card number {marker}", method=method))
        assert gone.id not in {h.entry.id for h in hits}, method
    assert search.search(ctx, conv, SearchQuery(text=marker, method="fts")) == []
    with pytest.raises(NotFound):
        entries.get_entry(ctx, conv, gone.id)
    assert ctx.store.version_count(conv.id) == 1
    assert _files_containing(tmp_path / "db", marker.encode()) == []
    with pytest.raises(NotFound):
        entries.forget(ctx, conv, gone.id)
    # the bank still works after pruning
    entries.write(ctx, conv, [_said("k", "after the forget")])
    assert [e.content for e in entries.load(ctx, conv, "k")][-1] == "after the forget"
