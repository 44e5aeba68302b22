"""Find every partition over a threshold in one projected scan of a bank (polars over Lance).

polars is imported by the bank-wide scan only: the inline check after a write needs none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from memory.compaction.plan import threshold_reasons
from memory.models import Bank
from memory.store import filters

if TYPE_CHECKING:
    import polars as pl

    from memory.context import Context


@dataclass(frozen=True)
class PartitionSize:
    """One partition's size and the thresholds it is over."""

    key: str
    entries: int
    tokens: int
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class BankEvaluation:
    """The result of evaluating every partition of a bank against its thresholds."""

    bank_id: str
    partitions: int
    """Partitions checked."""
    over: list[PartitionSize]
    """Partitions over a threshold, largest first."""


def partition_sizes(table: pa.Table) -> pl.DataFrame:
    """Return entries and tokens per key of entry-level rows (columns key, token_count)."""
    import polars as pl

    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame.group_by("key").agg(
        pl.len().alias("entries"), pl.col("token_count").cast(pl.Int64).sum().alias("tokens")
    )


def over_thresholds(bank: Bank, sizes: pl.DataFrame) -> list[PartitionSize]:
    """Return the partitions of `sizes` that exceed the bank's thresholds, largest first."""
    import polars as pl

    condition = pl.lit(False)
    if bank.max_tokens:
        condition = condition | (pl.col("tokens") > bank.max_tokens)
    if bank.max_turns:
        condition = condition | (pl.col("entries") > bank.max_turns)
    over = sizes.filter(condition).sort(
        ["tokens", "entries", "key"], descending=[True, True, False]
    )
    return [
        PartitionSize(key, entries, tokens, threshold_reasons(bank, entries, tokens))
        for key, entries, tokens in over.select("key", "entries", "tokens").iter_rows()
    ]


def evaluate_bank(ctx: Context, bank: Bank) -> BankEvaluation:
    """Return every partition of `bank` over a threshold, from one scan of two columns."""
    if not bank.has_trigger():
        return BankEvaluation(bank.id, 0, [])
    table = ctx.store.scan(bank.id, columns=["key", "token_count"], where="chunk_index = 0")
    sizes = partition_sizes(table)
    return BankEvaluation(bank.id, sizes.height, over_thresholds(bank, sizes))


def partition_size(ctx: Context, bank: Bank, key: str) -> PartitionSize:
    """Return one partition's size (the inline check after a write)."""
    where = filters.conjoin("chunk_index = 0", filters.equals("key", key))
    table = ctx.store.scan(bank.id, columns=["token_count"], where=where)
    tokens = sum(int(v) for v in table.column("token_count").to_pylist())
    return PartitionSize(
        key, table.num_rows, tokens, threshold_reasons(bank, table.num_rows, tokens)
    )
