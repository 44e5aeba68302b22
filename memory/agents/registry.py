"""The agents registry: each agent's memory layers and the banks its memory steps use.

Agents come from YAML files, one agent per file named `<agent id>.yaml`: the shipped ones in
`configs/agents/` and the user's in `$MEMBANK_CONFIG_DIR/agents/`, and from `define_agent`,
which stores an agent in the account's `membank-agents` bank (the Python API; the REST API
builds on it). An id is defined once: a YAML agent cannot be redefined by another file or
through `define_agent`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memory import purge
from memory.agents import key_templates as keys
from memory.agents.config import AgentMemoryConfig, parse_memory_config
from memory.agents.storage import (
    AGENTS_BANK,
    LONG_TERM_BANK,
    SESSION_BANK,
    WORKING_BANK,
    append,
    existing_bank,
    layer_bank,
    rows,
)
from memory.config import configs_dir, read_yaml, user_configs_dir
from memory.errors import Conflict, InvalidInput, NotFound
from memory.models import Bank, EntryIn
from memory.types.entry_filter import EntryFilter
from memory.validation import check_label, first_problem

if TYPE_CHECKING:
    from memory.context import Context

__all__ = ["AGENTS_BANK", "LONG_TERM_BANK", "SESSION_BANK", "WORKING_BANK"]

LAYER_BANKS = {"working": WORKING_BANK, "session": SESSION_BANK, "long_term": LONG_TERM_BANK}
"""The bank each enabled layer of an agent uses."""
MAX_AGENT_ID = 200
Source = Literal["shipped", "user", "defined"]


class BankRef(BaseModel):
    """A memory step of an agent: which bank it writes, searches or loads, and by what key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bank: str
    """The bank's name or id."""
    step: Literal["write", "search", "load"]
    key: str = "{{conversation.id}}"
    """The key template, e.g. `{{conversation.id}}` or `{{metadata.email_from}}`."""
    speaker: str | None = None
    """For conversation banks: who the written turns are from (a template too)."""


class Agent(BaseModel):
    """An agent: its memory layers, the banks its steps use, and its conversation key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    name: str = ""
    description: str = ""
    memory: AgentMemoryConfig = Field(default_factory=AgentMemoryConfig)
    banks: list[BankRef] = Field(default_factory=list)
    conversation_key: str = "{{conversation.id}}"
    """The key template working memory files this agent's conversations under."""
    email_require_sender_auth: bool = True
    """Inbound e-mail must pass SPF or DMARC; only then may keys use `metadata.email_from`."""
    source: Source = "defined"
    """Where the definition came from (set by the registry, not by the definition)."""

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        check_label("agent id", value, MAX_AGENT_ID)
        return value

    def memory_banks(self) -> list[str]:
        """Return the banks this agent uses: its steps' and its enabled layers' banks."""
        found = [ref.bank for ref in self.banks]
        found += [LAYER_BANKS[layer] for layer in self.memory.layers() if layer in LAYER_BANKS]
        return list(dict.fromkeys(found))

    def uses(self, bank: Bank) -> bool:
        """Return True when one of the agent's steps or layers uses `bank` (by name or id)."""
        return bool({bank.name, bank.id} & set(self.memory_banks()))


def parse_agent(data: Any, *, agent_id: str, source: Source, where: str) -> Agent:
    """Return the validated agent from decoded YAML/JSON; InvalidInput names the problem.

    Args:
        data: The definition (a mapping; `id` may be left out, it is `agent_id`).
        agent_id: The agent's id (a YAML file's name without `.yaml`).
        source: Where the definition came from.
        where: Named in the error (the file, or `agent X`).
    """
    if not isinstance(data, dict):
        raise InvalidInput(f"{where}: an agent is a mapping of settings (name, memory, banks)")
    given = data.get("id", agent_id)
    if given != agent_id:
        raise InvalidInput(f"{where}: id {given!r} differs from the file's name {agent_id!r}")
    body = {k: v for k, v in data.items() if k not in ("id", "memory", "source")}
    memory = parse_memory_config(data.get("memory", {}), source=f"{where}: memory")
    try:
        agent = Agent.model_validate({**body, "id": agent_id, "memory": memory, "source": source})
    except ValidationError as exc:
        raise InvalidInput(f"{where}: {first_problem(exc, 'agent')}") from None
    check_keys(agent, where=where)
    return agent


def check_keys(agent: Agent, *, where: str) -> None:
    """Check every key template of the agent (the e-mail sender rule included)."""
    auth = agent.email_require_sender_auth
    keys.check_template(
        agent.conversation_key, require_sender_auth=auth, source=f"{where}: conversation_key"
    )
    for index, ref in enumerate(agent.banks):
        keys.check_template(ref.key, require_sender_auth=auth, source=f"{where}: banks.{index}")


def _yaml_agents(folder: Path | None, source: Source) -> dict[str, Agent]:
    if folder is None or not folder.is_dir():
        return {}
    found: dict[str, Agent] = {}
    for path in sorted(folder.glob("*.yaml")):
        agent_id = path.name.removesuffix(".yaml")
        found[agent_id] = parse_agent(
            read_yaml(path), agent_id=agent_id, source=source, where=str(path)
        )
    return found


def yaml_agents() -> dict[str, Agent]:
    """Return the agents of the shipped and the user's YAML files, by id."""
    found = _yaml_agents(configs_dir() / "agents", "shipped")
    user_dir = user_configs_dir()
    for agent_id, agent in _yaml_agents(user_dir / "agents" if user_dir else None, "user").items():
        if agent_id in found:
            raise InvalidInput(
                f"{user_dir}/agents/{agent_id}.yaml: agent {agent_id!r} is shipped with "
                "membank and cannot be redefined: give yours another file name"
            )
        found[agent_id] = agent
    return found


def _defined(ctx: Context) -> dict[str, Agent]:
    bank = existing_bank(ctx, AGENTS_BANK)
    if bank is None:
        return {}
    found: dict[str, Agent] = {}
    for entry in rows(ctx, bank, EntryFilter()):  # oldest first: a redefinition wins
        found[entry.key] = Agent.model_validate_json(entry.content)
    return found


def list_agents(ctx: Context) -> list[Agent]:
    """Return every agent (YAML files and defined ones), by id."""
    found = {**_defined(ctx), **yaml_agents()}
    return [found[agent_id] for agent_id in sorted(found)]


def get_agent(ctx: Context, agent_id: str) -> Agent:
    """Return the agent `agent_id`.

    Raises:
        NotFound: no such agent; the message lists where agents come from.
    """
    check_label("agent id", agent_id, MAX_AGENT_ID)
    found = yaml_agents().get(agent_id) or _defined(ctx).get(agent_id)
    if found is None:
        raise NotFound(
            f"no agent {agent_id!r}: see `membank agents list` (agents come from "
            "configs/agents/*.yaml, $MEMBANK_CONFIG_DIR/agents/*.yaml and define_agent)"
        )
    return found


def agents_using_bank(ctx: Context, bank: Bank) -> list[Agent]:
    """Return the agents whose memory steps or layers use `bank`, by id."""
    return [agent for agent in list_agents(ctx) if agent.uses(bank)]


def define_agent(ctx: Context, agent: Agent) -> Agent:
    """Store (or replace) an agent of the account; returns it as stored.

    Raises:
        InvalidInput: a key template is refused (the e-mail sender rule included).
        Conflict: a YAML file defines this id.
    """
    check_keys(agent, where=f"agent {agent.id}")
    if agent.id in yaml_agents():
        raise Conflict(
            f"agent {agent.id!r} is defined by a YAML file and cannot be redefined here: "
            "edit the file, or give this agent another id"
        )
    stored = agent.model_copy(update={"source": "defined"})
    bank = layer_bank(ctx, AGENTS_BANK)
    earlier = rows(ctx, bank, EntryFilter.key(agent.id))
    content = json.dumps(stored.model_dump(mode="json"), ensure_ascii=False)
    append(ctx, bank, [EntryIn(key=agent.id, content=content)])
    if earlier:  # the new record is stored first: a crash here leaves the newer one winning
        purge.delete_final(ctx, bank, EntryFilter.of_ids([entry.id for entry in earlier]))
    return stored


def remove_agent(ctx: Context, agent_id: str) -> Agent:
    """Delete a defined agent; returns it. NotFound when no defined agent has that id."""
    bank = existing_bank(ctx, AGENTS_BANK)
    found = _defined(ctx).get(agent_id) if bank is not None else None
    if bank is None or found is None:
        raise NotFound(f"no agent {agent_id!r} defined through the Python API")
    purge.delete_final(ctx, bank, EntryFilter.key(agent_id))
    return found
