"""Storage, the only place LanceDB is used: the Store (`lance`, over `registry` and
`connection`), its maintenance and final deletion, audits, races, locks and escaped filters."""

from memory.store.lance import LanceStore
from memory.store.maintenance import StoreTuning
from memory.store.races import RetryPolicy

__all__ = ["LanceStore", "RetryPolicy", "StoreTuning"]
