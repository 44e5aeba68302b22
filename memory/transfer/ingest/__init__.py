"""Ingest JSONL, CSV and Parquet files into a bank in batches; bad rows go to a rejects file.

`run` sequences an ingest (validate each row against the bank, stable ids, conflicts,
batches, inline compaction); `sources` finds the files and streams their rows (`csv_rows`
for CSV); `rejects` writes the rows that could not be used; `report` counts what happened.
"""

from __future__ import annotations

from memory.transfer.ingest.report import IngestReport, iter_report_lines
from memory.transfer.ingest.run import DEFAULT_BATCH, OnConflict, ingest, stable_id

__all__ = [
    "DEFAULT_BATCH",
    "IngestReport",
    "OnConflict",
    "ingest",
    "iter_report_lines",
    "stable_id",
]
