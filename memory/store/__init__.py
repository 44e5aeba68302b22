"""Storage, the only place LanceDB is used: the Store (`lance`, over `registry` and
`connection`), its maintenance and final deletion, audits, races, locks and escaped filters.

Nothing is re-exported here, so importing a light module of this package (`filters`,
`schema`) does not load LanceDB: import `memory.store.lance.LanceStore` where it is built.
"""
