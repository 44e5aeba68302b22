"""Embedders: the offline MiniLM (real, no network), its sha256 check, the resolver, hashing."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import memory.providers.embed as embed
from memory.config import modes
from memory.errors import InvalidInput, ProviderError
from memory.testing import HashingEmbedder


@pytest.fixture(scope="module")
def minilm() -> embed.MiniLMEmbedder:
    """The real offline MiniLM, loaded once for the module."""
    return embed.MiniLMEmbedder()


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_minilm_gives_384_dim_unit_vectors(minilm: embed.MiniLMEmbedder) -> None:
    texts = ["hello world", "x", "a much longer sentence " * 200, "ünïcödé 日本語"]
    vectors = minilm.embed(texts)
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert np.isfinite(vectors).all()
    assert minilm.embed([]).shape == (0, 384)


def test_minilm_is_deterministic_and_batch_independent(minilm: embed.MiniLMEmbedder) -> None:
    texts = [f"sentence number {i} about topic {i % 3}" for i in range(70)]
    whole = minilm.embed(texts)
    single = minilm.embed([texts[65]])[0]
    assert np.allclose(whole[65], single, atol=1e-4)
    assert np.allclose(minilm.embed(texts), whole)


class _RecordedSession:
    """Wraps an onnxruntime session, recording the (rows, width) of every run."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.shapes: list[tuple[int, int]] = []

    def run(self, names: Any, feeds: dict[str, np.ndarray]) -> Any:
        self.shapes.append(feeds["input_ids"].shape)
        return self.inner.run(names, feeds)


@pytest.mark.slow
def test_minilm_runs_long_texts_in_batches_of_bounded_tokens() -> None:
    minilm = embed.MiniLMEmbedder()
    recorded = _RecordedSession(minilm._session)
    minilm._session = recorded
    long = [
        f"note {i}: " + "the order shipped on monday and cost forty dollars " * 40
        for i in range(40)
    ]
    short = [f"short {i}" for i in range(90)]
    texts = [t for pair in zip(long, short, strict=False) for t in pair] + short[40:]
    vectors = minilm.embed(texts)
    assert sum(rows for rows, _ in recorded.shapes) == len(texts)
    assert all(rows * width <= embed.BATCH_TOKENS for rows, width in recorded.shapes)
    assert max(width for _, width in recorded.shapes) == embed.MINILM_MAX_TOKENS  # truncated
    assert max(rows for rows, _ in recorded.shapes) == 64  # short texts still share a run
    for index in (0, 1, 78, len(texts) - 1):  # the same vector as when embedded alone
        assert np.allclose(vectors[index], minilm.embed([texts[index]])[0], atol=1e-5)


def test_minilm_puts_similar_sentences_closer(minilm: embed.MiniLMEmbedder) -> None:
    cat, kitten, tax, train = minilm.embed(
        [
            "The cat is sleeping on the sofa.",
            "A kitten naps on the couch.",
            "Quarterly tax filings are due next month.",
            "The train to Berlin leaves at noon.",
        ]
    )
    assert _cos(cat, kitten) > _cos(cat, tax) + 0.2
    assert _cos(cat, kitten) > _cos(cat, train) + 0.2
    assert _cos(kitten, cat) > _cos(kitten, tax)


def test_minilm_rejects_a_tampered_model_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, tokenizer = embed.minilm_files()
    copy = tmp_path / "model.onnx"
    shutil.copyfile(model, copy)
    monkeypatch.setattr(embed, "minilm_files", lambda: (copy, tokenizer))
    embed.MiniLMEmbedder()  # the intact copy is accepted
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(data))
    with pytest.raises(ProviderError, match="sha256"):
        embed.MiniLMEmbedder()


def test_embedder_for_resolves_offline_names() -> None:
    minilm = embed.embedder_for(embed.MINILM_NAME, 384)
    assert isinstance(minilm, embed.MiniLMEmbedder)
    assert embed.embedder_for(embed.MINILM_NAME, 384) is minilm  # loaded once
    hashing = embed.embedder_for(embed.HASHING_NAME, 64)
    assert isinstance(hashing, HashingEmbedder) and hashing.dims == 64
    remote = embed.embedder_for("openai/text-embedding-3-small", 1536)
    assert isinstance(remote, embed.LiteLLMEmbedder) and remote.dims == 1536


@pytest.mark.parametrize("name", ["membank/nope", "membank/minilm-l12", "membank/"])
def test_embedder_for_rejects_unknown_membank_names(name: str) -> None:
    with pytest.raises(InvalidInput, match="unknown offline embedder"):
        embed.embedder_for(name, 384)


def test_embedder_for_rejects_wrong_minilm_dims() -> None:
    with pytest.raises(InvalidInput, match="384"):
        embed.embedder_for(embed.MINILM_NAME, 768)


def test_every_mode_names_a_resolvable_embedder() -> None:
    for mode in modes().values():
        if mode.embedder.startswith("membank/"):
            assert embed.embedder_for(mode.embedder, mode.dims).dims == mode.dims


def test_hashing_embedder_is_deterministic_and_normalised() -> None:
    texts = ["the quick brown fox", "The quick brown fox!", "lazy dog", ""]
    first = HashingEmbedder(128).embed(texts)
    second = HashingEmbedder(128).embed(texts)
    assert first.shape == (4, 128) and first.dtype == np.float32
    assert np.array_equal(first, second)
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    assert np.allclose(first[0], first[1])  # same words, case and punctuation ignored
    assert _cos(first[0], first[2]) < 0.5
