"""The arithmetic of search scores: the calibration of raw relevance to a hit's score, the
exact vector scores of chunks a search already read, the k-th certain score, and one row
per entry (`memory.search` runs the queries)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Row = dict[str, Any]
"""One chunk a search found: its entry's fields, `chunk`, `chunk_text`, (`carries`), `_score`."""


@dataclass(frozen=True)
class Calibration:
    """How raw relevance maps to a hit's score (tuned on the LoCoMo sample, see RESULTS)."""

    cosine_floor: float = 0.25
    """Cosine similarity scored 0: unrelated texts fall under it (MiniLM)."""
    cosine_full: float = 0.65
    """Cosine similarity scored 1: a close paraphrase."""
    bm25_unit: float = 10.0
    """BM25 points counted as a text score of 1."""
    text_match: float = 1.0
    """BM25 points added for matching at all (so a match in a small bank still counts)."""
    vector_weight: float = 0.35
    """Share of the vector score in the hybrid score."""
    text_weight: float = 0.65
    """Share of the text score in the hybrid score."""

    def vector(self, raw: float) -> float:
        """Return the vector score of a store `_score` ((1 + cosine) / 2)."""
        cosine = 2.0 * raw - 1.0
        span = self.cosine_full - self.cosine_floor
        return min(1.0, max(0.0, (cosine - self.cosine_floor) / span))

    def text(self, raw: float) -> float:
        """Return the text score of a matching entry's BM25 score."""
        return (self.text_match + max(0.0, raw)) / self.bm25_unit

    def hybrid(self, vector_raw: float | None, text_raw: float | None) -> float:
        """Return the hybrid score of an entry's two raw scores (None: no match there)."""
        score = 0.0
        if vector_raw is not None:
            score += self.vector_weight * self.vector(vector_raw)
        if text_raw is not None:
            score += self.text_weight * self.text(text_raw)
        return score


CALIBRATION = Calibration()


def local_scores(chunks: dict[str, Any], entry_ids: Sequence[str], vector: Any) -> dict[str, float]:
    """Return the raw vector score (as the store gives it: (1 + cosine) / 2) of the best
    chunk of each of `entry_ids` whose chunk vectors are in `chunks`."""
    ids = [e for e in entry_ids if e in chunks]
    if not ids:
        return {}
    query = np.asarray(vector, np.float32)
    query = query / (np.float32(np.linalg.norm(query)) or np.float32(1.0))
    matrix = np.concatenate([chunks[e] for e in ids])
    norms = np.linalg.norm(matrix, axis=1)
    norms[norms == 0] = 1.0
    cosine = matrix @ query / norms
    starts = np.cumsum([0] + [len(chunks[e]) for e in ids[:-1]])
    best = np.maximum.reduceat(cosine, starts)
    return {e: (1.0 + float(c)) / 2.0 for e, c in zip(ids, best, strict=True)}


def kth_score(
    entry_ids: Sequence[str],
    raw_vector: dict[str, float],
    raw_text: dict[str, float],
    k: int,
    calibration: Calibration,
    unseen: tuple[float, float] | None,
) -> float | None:
    """Return the k-th best hybrid score of the scored `entry_ids` that are certain (above
    `unseen`; None: all are), or None when fewer than k are."""
    certain = []
    for e in entry_ids:
        score = calibration.hybrid(raw_vector.get(e), raw_text.get(e))
        if unseen is None or (score, raw_vector.get(e, 0.0)) > unseen:
            certain.append(score)
    if len(certain) < k:
        return None
    certain.sort(reverse=True)
    return certain[k - 1]


def matrix_of(column: Any) -> Any:
    """Return a fixed-size-list column of vectors as a 2-D float32 array (nulls as zeros)."""
    values = column.combine_chunks()
    width = values.type.list_size
    if values.null_count:
        values = values.fill_null([0.0] * width)
    flat = np.asarray(values.flatten().to_numpy(zero_copy_only=False), np.float32)
    return flat.reshape(len(values), width)


def chunk_vectors(rows: Sequence[Row], matrix: Any, ranked: Sequence[Row]) -> dict[str, Any]:
    """Return, for each entry of `ranked` all of whose chunks are among `rows` (row i's
    vector is `matrix[i]`), its chunks' vectors (one row each; None `matrix`: none)."""
    if matrix is None:
        return {}
    wanted = {row["id"]: int(row.get("chunk_count") or 1) for row in ranked}
    chunks: dict[str, dict[int, int]] = {}
    for index, row in enumerate(rows):
        if row["id"] in wanted:
            chunks.setdefault(row["id"], {})[int(row["chunk"])] = index
    return {e: matrix[list(c.values())] for e, c in chunks.items() if len(c) == wanted[e]}


def best_per_entry(rows: Sequence[Row]) -> list[Row]:
    """Return one row per entry (its best-scoring chunk), by score then entry id."""
    best: dict[str, Row] = {}
    for row in sorted(rows, key=lambda r: (-float(r["_score"]), r.get("chunk", 0))):
        best.setdefault(row["id"], row)
    return sorted(best.values(), key=lambda r: (-float(r["_score"]), r["id"]))
