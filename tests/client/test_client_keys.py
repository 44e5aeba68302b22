"""The key API and the tagged-entries list through `Client`, against a real server: a scoped
key made by `client.keys.create` can read but not write, sees only its bank, and stops
working once `client.keys.revoke` revokes it; `client.entries.tagged` pages a bank's entries
by tag."""

from __future__ import annotations

import pytest
from api_support import Api
from conftest import NO_WAIT

from memory.client import Client, Forbidden, NotFound, Unauthorized

pytestmark = pytest.mark.server


def test_a_scoped_key_made_by_the_client_reads_writes_nothing_and_is_revoked(
    api: Api, client: Client
) -> None:
    mine = client.banks.create("notes", type="general")
    other = client.banks.create("private", type="general")
    client.entries.write(mine.id, key="k", content="the boiler is serviced in May")
    made = client.keys.create(scopes=["read"], banks=[mine.id])
    assert made.key.startswith("mbk_") and made.scopes == ["read"] and made.banks == [mine.id]
    listed = {k.key_id: k for k in client.keys.list()}
    assert listed[made.key_id].scopes == ["read"] and listed[made.key_id].banks == [mine.id]
    assert all(not hasattr(k, "key") for k in listed.values())  # never the secret

    with Client(api.url, made.key, retry=NO_WAIT) as reader:
        assert [h.entry.content for h in reader.search(mine.id, text="boiler")] == [
            "the boiler is serviced in May"
        ]
        assert [b.id for b in reader.banks.list()] == [mine.id]
        with pytest.raises(Forbidden, match="write"):
            reader.entries.write(mine.id, key="k", content="not allowed")
        with pytest.raises(Forbidden):
            reader.banks.get(other.id)
        with pytest.raises(Forbidden, match="admin"):
            list(reader.keys.list())
        client.keys.revoke(made.key_id)
        with pytest.raises(Unauthorized):
            reader.banks.get(mine.id)
    assert [e.content for e in client.entries.load(mine.id, "k")] == [
        "the boiler is serviced in May"
    ]
    with pytest.raises(NotFound):
        client.keys.revoke("000000000000")


def test_tagged_entries_page_by_tag_oldest_first(client: Client) -> None:
    bank = client.banks.create("notes", type="general")
    for i in range(5):
        tags = ["even"] if i % 2 == 0 else ["odd"]
        client.entries.write(bank.id, key=f"k{i}", content=f"note {i}", tags=tags)
    even = [e.content for e in client.entries.tagged(bank.id, "even", page_size=2)]
    assert even == ["note 0", "note 2", "note 4"]
    assert len(list(client.entries.tagged(bank.id, page_size=2))) == 5
    assert list(client.entries.tagged(bank.id, "none")) == []
    with pytest.raises(NotFound):
        list(client.entries.tagged("no-such-bank", "even"))
