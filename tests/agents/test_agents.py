"""The agents registry: YAML files (shipped and the user's), defined agents, bank references."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory import banks
from memory.agents import registry as agents
from memory.agents.config import parse_memory_config
from memory.agents.registry import Agent, BankRef, agents_using_bank, define_agent, get_agent
from memory.config import CONFIG_DIR_ENV
from memory.context import Context
from memory.errors import Conflict, InvalidInput, NotFound
from memory.models import BankCreate


def user_agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **files: str) -> Path:
    folder = tmp_path / "config"
    (folder / "agents").mkdir(parents=True)
    for name, text in files.items():
        (folder / "agents" / f"{name}.yaml").write_text(text, "utf-8")
    monkeypatch.setenv(CONFIG_DIR_ENV, str(folder))
    return folder


def test_shipped_agents_load_with_their_layers(ctx: Context) -> None:
    concierge = get_agent(ctx, "concierge")
    assert concierge.source == "shipped"
    assert concierge.memory.layers() == ["working", "session", "long_term"]
    assert get_agent(ctx, "support-mail").conversation_key == "{{metadata.email_from}}"
    assert {"concierge", "support-mail"} <= {a.id for a in agents.list_agents(ctx)}


def test_an_unknown_agent_is_not_found_with_where_agents_come_from(ctx: Context) -> None:
    with pytest.raises(NotFound, match="no agent 'nobody': see `membank agents list`"):
        get_agent(ctx, "nobody")


def test_a_user_yaml_agent_is_listed(
    ctx: Context, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_agents(tmp_path, monkeypatch, helper="name: Helper\nmemory: {session_memory: true}\n")
    helper = get_agent(ctx, "helper")
    assert helper.source == "user" and helper.memory.layers() == ["session"]


@pytest.mark.parametrize(
    "text,message",
    [
        ("name: [unclosed", "cannot be read as YAML"),
        ("name: A\nname: B\n", "'name' is given twice"),
        ("nmae: A\n", "nmae: Extra inputs are not permitted"),
        ("memory: {types: [{id: short_term}]}\n", "memory: types.0.id is 'short_term'"),
        ("id: other\n", "id 'other' differs from the file's name 'bad'"),
        ("- a list\n", "an agent is a mapping"),
        ("banks: [{bank: b, step: write, key: '{{customer.id}}'}]\n", "unknown placeholder"),
    ],
)
def test_a_bad_agent_file_names_the_file_and_the_problem(
    ctx: Context, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    folder = user_agents(tmp_path, monkeypatch, bad=text)
    with pytest.raises(InvalidInput) as caught:
        agents.list_agents(ctx)
    assert str(folder / "agents" / "bad.yaml") in str(caught.value)
    assert message in str(caught.value)


def test_a_user_file_cannot_redefine_a_shipped_agent(
    ctx: Context, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_agents(tmp_path, monkeypatch, concierge="name: Mine\n")
    with pytest.raises(InvalidInput, match="is shipped with membank and cannot be redefined"):
        agents.list_agents(ctx)


def test_a_defined_agent_is_stored_replaced_and_removed(ctx: Context) -> None:
    memory = parse_memory_config({"types": [{"id": "long_term"}]})
    define_agent(ctx, Agent(id="planner", name="Planner", memory=memory))
    define_agent(ctx, Agent(id="planner", name="Planner v2", memory=memory))
    found = get_agent(ctx, "planner")
    assert (found.name, found.source) == ("Planner v2", "defined")
    assert [a.id for a in agents.list_agents(ctx)].count("planner") == 1
    agents.remove_agent(ctx, "planner")
    with pytest.raises(NotFound):
        get_agent(ctx, "planner")


def test_define_refuses_a_yaml_agents_id(ctx: Context) -> None:
    with pytest.raises(Conflict, match="defined by a YAML file"):
        define_agent(ctx, Agent(id="concierge"))


def test_agents_using_a_bank_by_step_or_by_layer(ctx: Context) -> None:
    support = banks.create(ctx, BankCreate(name="customer-support", type="conversation"))
    other = banks.create(ctx, BankCreate(name="other", type="general"))
    define_agent(ctx, Agent(id="reader", banks=[BankRef(bank=other.id, step="search")]))
    assert [a.id for a in agents_using_bank(ctx, support)] == ["support-mail"]
    assert [a.id for a in agents_using_bank(ctx, other)] == ["reader"]
    working = banks.create(ctx, BankCreate(name=agents.WORKING_BANK, type="conversation"))
    assert {"concierge", "support-mail"} <= {a.id for a in agents_using_bank(ctx, working)}


def test_email_from_keys_need_sender_auth(ctx: Context) -> None:
    key = "{{metadata.email_from}}"
    define_agent(ctx, Agent(id="mail-ok", conversation_key=key))  # auth on: the default
    with pytest.raises(InvalidInput) as caught:
        define_agent(
            ctx, Agent(id="mail-open", email_require_sender_auth=False, conversation_key=key)
        )
    message = str(caught.value)
    assert "email_require_sender_auth" in message and "forged" in message
    with pytest.raises(NotFound):
        get_agent(ctx, "mail-open")  # nothing stored
    ref = BankRef(bank="b", step="write", key=key)
    with pytest.raises(InvalidInput, match=r"banks\.0: a key from"):
        define_agent(ctx, Agent(id="mail-open", email_require_sender_auth=False, banks=[ref]))


def test_an_email_from_agent_file_with_auth_off_is_refused(
    ctx: Context, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "email_require_sender_auth: false\nconversation_key: '{{metadata.email_from}}'\n"
    user_agents(tmp_path, monkeypatch, inbox=text)
    with pytest.raises(InvalidInput, match=r"inbox\.yaml: conversation_key: a key from"):
        agents.list_agents(ctx)
