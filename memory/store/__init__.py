"""Storage: LanceDB tables, their maintenance and final deletion, the escaped filter builder."""

from memory.store.lance import LanceStore
from memory.store.maintenance import StoreTuning
from memory.store.races import RetryPolicy

__all__ = ["LanceStore", "RetryPolicy", "StoreTuning"]
