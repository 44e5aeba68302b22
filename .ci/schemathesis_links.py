"""Print the served OpenAPI document (`python .ci/schemathesis_links.py URL`, waiting up to
120 s for the server) with the CI's own links added, for the stateful phase of
`.ci/schemathesis.sh`; the served document is not changed.

A user id is the application's own (any one-line id is valid), so no operation of the API
answers one, and schemathesis starts no chain at an operation whose path needs one: the
user routes (remember, and the links from it: list, recall, forget, wipe; the end of a
conversation and its job) would never be reached. Here a bank's id, from a bank create,
stands in for a user id.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.request

WAIT_SECONDS = 120.0

USER = {"user_id": "$response.body#/id"}
STAND_INS = {
    "RememberForUser": {
        "operationId": "remember_users__user_id__memories_post",
        "parameters": USER,
    },
    "EndConversationOfUser": {
        "operationId": "end_conversation_users__user_id__conversations_end_post",
        "parameters": USER,
    },
    "WriteTurn": {
        "operationId": "write_entry_memory_banks__bank_id__entries_post",
        "parameters": {"bank_id": "$response.body#/id"},
        "requestBody": {"speaker": "$response.body#/name"},
    },
}


def served(url: str) -> dict:  # type: ignore[type-arg]
    """Return the document at `url`, asking again while the server is starting."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as answer:
                return json.load(answer)  # type: ignore[no-any-return]
        except (urllib.error.URLError, ConnectionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def main() -> None:
    doc = served(sys.argv[1])
    created = doc["paths"]["/memory_banks"]["post"]["responses"]["201"]
    links = created.setdefault("links", {})
    links.update(STAND_INS)
    json.dump(doc, sys.stdout)


if __name__ == "__main__":
    main()
