"""Compaction per partition (per key): a pure plan (`plan`), then a summary-first, journaled
apply (`apply`), the whole-bank pass (`bank`) and the partition scan (`scan`).

Nothing is re-exported here, so `import memory.compaction.plan` stays pure and cheap.
"""
