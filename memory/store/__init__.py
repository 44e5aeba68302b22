"""Storage: LanceDB tables and the escaped filter builder."""

from memory.store.lance import LanceStore

__all__ = ["LanceStore"]
