"""The use cases every surface calls: one function per user action, a typed request in and a
typed result out. The CLI, REST, MCP, the lab and the Prefect tasks only translate.

`banks` (create, update, delete, reset-source, get, list, stats), `entries` (write = append
then compact the touched partitions, search, load, forget), `compaction` (compact,
compact_if_over, retention), `data` (ingest, import), `maintenance` (maintain, verify).
"""
