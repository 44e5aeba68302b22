"""Banks, templates, agents, stats, the config assistant and the errors, through `Client`
against a real server (uvicorn on 127.0.0.1)."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from api_support import Api

from memory import errors as core
from memory.client import Client, Conflict, InvalidInput, NotFound, Unauthorized
from memory.models import Bank

pytestmark = pytest.mark.server


def test_create_get_update_delete(client: Client) -> None:
    made = client.banks.create(
        "My Memory Bank",
        description="Stores customer context",
        type="conversation",
        mode="balanced",
    )
    assert isinstance(made, Bank) and made.retention_days == 90  # the current version's default
    assert client.banks.get(made.id) == made
    assert client.banks.get("My Memory Bank").id == made.id  # by name too
    renamed = client.banks.update(made.id, name="Renamed Bank", compaction_prompt="Be brief.")
    assert (renamed.name, renamed.compaction_prompt) == ("Renamed Bank", "Be brief.")
    assert client.banks.delete(made.id).deleted is True
    with pytest.raises(NotFound):
        client.banks.get(made.id)


def test_an_explicit_null_retention_is_indefinite_and_unset_takes_the_default(
    client: Client,
) -> None:
    forever = client.banks.create("forever", type="conversation", retention_days=None)
    default = client.banks.create("default", type="conversation")
    assert (forever.retention_days, default.retention_days) == (None, 90)


def test_the_version_is_the_clients_legacy_without_one(api: Api) -> None:
    with Client(api.url, api.acme_key, version=None) as legacy:
        made = legacy.banks.create("old", type="conversation")
    assert made.retention_days == 30  # the flat legacy default


def test_list_pages_through_every_bank_and_filters_by_type(api: Api) -> None:
    asked: list[httpx.Request] = []
    http = httpx.Client(base_url=api.url, event_hooks={"request": [asked.append]})
    with Client(api.url, api.acme_key, http=http) as client:
        for i in range(5):
            client.banks.create(f"bank-{i}", type="general" if i == 2 else "conversation")
        asked.clear()
        names = [b.name for b in client.banks.list(page_size=2)]
        pages = len(asked)
        conversation = [b.name for b in client.banks.list(type="conversation", page_size=3)]
    http.close()
    assert names == [f"bank-{i}" for i in range(5)] and pages == 3
    assert conversation == ["bank-0", "bank-1", "bank-3", "bank-4"]


def test_templates_agents_and_stats(client: Client) -> None:
    templates = list(client.banks.templates(page_size=1))
    assert len(templates) >= 2 and all(t.name for t in templates)
    used = client.banks.create("customer-support", type="conversation")
    assert [(a.id, a.name) for a in client.banks.agents(used.id)] == [
        ("support-mail", "Support by e-mail")
    ]
    bank = client.banks.create("plain", type="conversation")
    assert list(client.banks.agents(bank.id)) == []
    for i in range(5):
        client.entries.write(bank.id, key=f"c{i % 2}", speaker="Dana", content=f"turn {i}")
    stats = client.banks.stats(bank.id, days=30)
    assert (stats.total_entries, stats.unique_keys, stats.unique_speakers) == (5, 2, 1)
    since = datetime(2026, 10, 1, tzinfo=UTC)
    assert client.banks.stats(bank.id, since=since, top=3).total_entries == 5


def test_delete_source_keeps_the_configuration(client: Client) -> None:
    bank = client.banks.create("reset-me", type="general")
    client.entries.write(bank.id, key="k", content="a fact")
    assert client.banks.delete_source(bank.id).source_reset is True
    assert client.banks.get(bank.id).name == "reset-me"
    assert list(client.entries.load(bank.id, "k")) == []


def test_the_assistant_proposes_and_accept_applies_exactly_the_proposal(client: Client) -> None:
    bank = client.banks.create("support", type="conversation")
    description = "customer support history, about 50 messages per day per customer"
    general = client.assistant.propose(description, type="general")
    proposal = client.assistant.propose_for_bank(bank.id, description)
    assert general.bank_type == "general" and proposal.bank_type == "conversation"
    assert proposal.rationale and proposal.offline is True
    assert client.banks.get(bank.id) == bank  # proposing changes nothing
    accepted = client.assistant.accept(bank.id, proposal)
    assert (accepted.compaction_prompt, accepted.max_turns, accepted.retention_days) == (
        proposal.compaction_prompt,
        proposal.max_turns,
        proposal.retention_days,
    )
    with pytest.raises(InvalidInput) as wrong_type:
        client.assistant.accept(bank.id, general)
    assert wrong_type.value.status == 400 and client.banks.get(bank.id) == accepted


def test_errors_are_typed_with_the_envelope(api: Api, client: Client) -> None:
    with pytest.raises(NotFound) as missing:
        client.banks.get("no-such-bank")
    assert missing.value.status == 404 and missing.value.code == "not_found"
    assert isinstance(missing.value, core.NotFound) and missing.value.request_id
    bank = client.banks.create("mine", type="conversation")
    with Client(api.url, api.beta_key) as beta, pytest.raises(NotFound):
        beta.banks.get(bank.id)  # another account's bank is a 404 like a missing one
    with pytest.raises(InvalidInput) as both:
        client.banks.stats(bank.id, days=3, since=datetime(2026, 10, 1, tzinfo=UTC))
    assert both.value.status == 400 and "either" in both.value.message
    with pytest.raises(Conflict) as change:
        client.banks.update(bank.id, type="general")
    assert change.value.status == 409 and client.banks.get(bank.id).type == "conversation"
    for key in ("mbk_not_a_key", None):
        with Client(api.url, key) as stranger, pytest.raises(Unauthorized) as refused:
            stranger.banks.get(bank.id)
        assert refused.value.status == 401 and "X-API-Key" in refused.value.message


def test_bad_input_is_refused_before_anything_is_sent(api: Api) -> None:
    asked: list[httpx.Request] = []
    http = httpx.Client(base_url=api.url, event_hooks={"request": [asked.append]})
    with Client(api.url, api.acme_key, http=http) as client:
        with pytest.raises(InvalidInput) as unknown:
            client.banks.create("x", colour="red")
        with pytest.raises(InvalidInput) as blank:
            client.banks.create("")
    http.close()
    assert "colour" in unknown.value.message and unknown.value.status is None
    assert "name" in blank.value.message and asked == []
