"""The agent memory config: the seed's shape, any combination of layers, clear errors."""

from __future__ import annotations

import itertools

import pytest

from memory.agents.config import (
    DEFAULT_MAX_MEMORIES,
    DEFAULT_WORKING_TOKENS,
    AgentMemoryConfig,
    parse_memory_config,
)
from memory.errors import InvalidInput

SEED = {
    "session_memory": True,
    "types": [
        {
            "id": "working_memory",
            "enabled": True,
            "config": {"max_tokens": 4000, "compaction_strategy": "summarize"},
        },
        {"id": "long_term", "enabled": True, "config": {"max_memories": 50}},
    ],
}


def test_the_seed_config_loads_with_all_three_layers() -> None:
    config = parse_memory_config(SEED)
    working, long_term = config.working(), config.long_term()
    assert working is not None and working.max_tokens == 4000
    assert working.compaction_strategy == "summarize"
    assert long_term is not None and long_term.max_memories == 50
    assert config.session_memory is True
    assert config.layers() == ["working", "session", "long_term"]
    assert AgentMemoryConfig.model_validate(config.model_dump()) == config


COMBINATIONS = list(itertools.product([False, True], repeat=3))


@pytest.mark.parametrize("working,session,long_term", COMBINATIONS)
def test_any_combination_of_layers_is_valid(working: bool, session: bool, long_term: bool) -> None:
    types = [
        {"id": "working_memory", "enabled": working},
        {"id": "long_term", "enabled": long_term},
    ]
    config = parse_memory_config({"session_memory": session, "types": types})
    assert (config.working() is not None) is working
    assert config.session_memory is session
    assert (config.long_term() is not None) is long_term


def test_left_out_settings_take_the_defaults() -> None:
    config = parse_memory_config({"types": [{"id": "working_memory"}, {"id": "long_term"}]})
    working, long_term = config.working(), config.long_term()
    assert working is not None and working.max_tokens == DEFAULT_WORKING_TOKENS
    assert long_term is not None and long_term.max_memories == DEFAULT_MAX_MEMORIES
    assert parse_memory_config({}).layers() == []


@pytest.mark.parametrize(
    "data,message",
    [
        ({"types": [{"id": "episodic"}]}, "types.0.id is 'episodic': use one of working_memory"),
        ({"types": [{"id": "long_term"}, {"id": "long_term"}]}, "'long_term' is given twice"),
        ({"sesion_memory": True}, "sesion_memory is not a memory setting"),
        (
            {"types": [{"id": "working_memory", "config": {"max_token": 10}}]},
            "max_token is not a memory setting",
        ),
        (
            {"types": [{"id": "working_memory", "config": {"max_tokens": "lots"}}]},
            "max_tokens: Input should be a valid integer",
        ),
        (
            {"types": [{"id": "working_memory", "config": {"compaction_strategy": "drop"}}]},
            "compaction_strategy: Input should be 'summarize'",
        ),
        ({"types": [{"id": "long_term", "config": {"max_memories": 0}}]}, "max_memories"),
        ({"types": "working_memory"}, "types: Input should be a valid list"),
    ],
)
def test_a_bad_config_says_which_field_and_why(data: object, message: str) -> None:
    with pytest.raises(InvalidInput, match="agent x: memory: ") as caught:
        parse_memory_config(data, source="agent x: memory")
    assert message in str(caught.value)
