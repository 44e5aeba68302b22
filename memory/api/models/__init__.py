"""The REST API's request and result records, free of FastAPI: the routes take and answer
them, and `memory.client` sends and reads the same ones (`import memory.client` never
loads FastAPI; tests/client/test_client_imports.py holds it to that).

One module per area: `errors` (the JSON error envelope and the status of each core error),
`entries`, `layers` (long-term memory of users), `assistant`, `keys`, `audit`. The records
shared by many areas (pages, jobs, exports) are in `memory.api.schemas`.
"""
