"""Long-term memory records and their rules: user and agent ids, types, scopes, tags.

A memory belongs to one user. Scope `user` makes it visible to every agent of that user;
scope `agent` to the agent that saved it only. Tags are short lowercase keywords: each is
stripped and lowercased, runs of spaces and underscores become one hyphen, and what is left
must be letters and digits in hyphen-joined words, at most `MAX_TAG_CHARS` characters; at
most `MAX_TAGS` tags, duplicates dropped (first kept). A rule broken is an `InvalidInput`
saying what to send instead; the CLI, the tool dispatcher and the Python API share them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Literal, cast, get_args

from pydantic import BaseModel, ConfigDict

from memory.errors import InvalidInput
from memory.validation import check_label

MemoryType = Literal["fact", "preference", "relationship", "instruction"]
Scope = Literal["user", "agent"]
MEMORY_TYPE_NAMES: tuple[str, ...] = get_args(MemoryType)
SCOPES: tuple[str, ...] = get_args(Scope)

MAX_ID_LENGTH = 200
"""Longest user or agent id (one line of text, any characters)."""
MAX_TAGS = 10
MAX_TAG_CHARS = 32
_SEPARATORS = re.compile(r"[\s_]+")
_KEYWORD = re.compile(r"[^\W_]+(?:-[^\W_]+)*")
"""Letters and digits (any script) in words joined by single hyphens."""


class Memory(BaseModel):
    """One stored long-term memory."""

    model_config = ConfigDict(extra="forbid")

    id: str
    user: str
    agent: str | None
    """The agent that saved it (None: saved without an agent, e.g. by the CLI)."""
    scope: Scope
    type: MemoryType
    content: str
    tags: list[str]
    created_at: datetime
    token_count: int


class RecalledMemory(BaseModel):
    """A memory found by recall, with how close it is to the query (1 = same direction)."""

    model_config = ConfigDict(extra="forbid")

    memory: Memory
    score: float


def check_user(user: str) -> str:
    """Return the user id; InvalidInput when it is blank, too long or not one line."""
    check_label("user id", user, MAX_ID_LENGTH)
    return user


def check_agent(agent: str | None) -> str | None:
    """Return the agent id (None stays None); InvalidInput as for user ids."""
    if agent is not None:
        check_label("agent id", agent, MAX_ID_LENGTH)
    return agent


def check_type(value: str) -> MemoryType:
    """Return `value` as a memory type; InvalidInput naming the types otherwise."""
    if value in MEMORY_TYPE_NAMES:
        return cast(MemoryType, value)
    raise InvalidInput(f"unknown memory type {value!r}: use one of {', '.join(MEMORY_TYPE_NAMES)}")


def check_scope(value: str, agent: str | None) -> Scope:
    """Return `value` as a scope; scope `agent` needs an agent.

    Raises:
        InvalidInput: an unknown scope, or scope `agent` with no agent.
    """
    if value not in SCOPES:
        raise InvalidInput(
            f"unknown scope {value!r}: use `user` (every agent of the user sees it) or "
            "`agent` (only this agent)"
        )
    if value == "agent" and agent is None:
        raise InvalidInput("scope `agent` needs an agent: give the agent id, or use scope `user`")
    return "agent" if value == "agent" else "user"


def normalise_tag(tag: str) -> str:
    """Return `tag` as a short lowercase keyword (see the module docstring).

    Raises:
        InvalidInput: the tag is empty once stripped, too long, or holds other characters
            than letters, digits, hyphens, spaces and underscores.
    """
    word = _SEPARATORS.sub("-", tag.strip().lower())
    if not word:
        raise InvalidInput("a tag is empty: give a short keyword such as `python`, or no tag")
    if len(word) > MAX_TAG_CHARS:
        raise InvalidInput(
            f"tag {word[:40]!r} is {len(word)} characters: use a keyword of at most {MAX_TAG_CHARS}"
        )
    if not _KEYWORD.fullmatch(word):
        raise InvalidInput(
            f"tag {tag!r} is not a keyword: use letters and digits, words joined by "
            "hyphens (e.g. `python`, `food-allergies`)"
        )
    return word


def normalise_tags(tags: Sequence[str]) -> list[str]:
    """Return the tags normalised, duplicates dropped in order; at most `MAX_TAGS`.

    Raises:
        InvalidInput: a tag breaks the rule, or there are too many distinct tags.
    """
    words = list(dict.fromkeys(normalise_tag(tag) for tag in tags))
    if len(words) > MAX_TAGS:
        raise InvalidInput(f"{len(words)} tags given: keep the {MAX_TAGS} that say most")
    return words
