"""Moving entries in and out of banks: ingest (files in), export (JSON and Parquet out),
import_json (a JSON export into a new bank)."""
