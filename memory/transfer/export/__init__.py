"""Exports of a bank, and imports of them: one JSON file (configuration + entries, importable)
or Parquet for analysts (docs/export-schema.md).

`run` sequences an export; `records` holds what every export shares (filters, results, the
header, one entry's record); `scan` streams the bank; `json_file` and `parquet` write the two
formats; `files` makes the writes atomic (a temp sibling renamed into place).
"""

from __future__ import annotations

from memory.transfer.export.json_file import is_json_export
from memory.transfer.export.records import (
    JSON_FORMAT,
    JSON_SCHEMA_VERSION,
    ExportEstimate,
    ExportFilters,
    ExportFormat,
    ExportResult,
    PartitionBy,
    Progress,
)
from memory.transfer.export.run import count_entries, estimate, export
from memory.transfer.export.scan import SCAN_BATCH, SCAN_BYTES

__all__ = [
    "JSON_FORMAT",
    "JSON_SCHEMA_VERSION",
    "SCAN_BATCH",
    "SCAN_BYTES",
    "ExportEstimate",
    "ExportFilters",
    "ExportFormat",
    "ExportResult",
    "PartitionBy",
    "Progress",
    "count_entries",
    "estimate",
    "export",
    "is_json_export",
]
