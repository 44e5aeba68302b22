"""Modes and templates loaded from configs/*.yaml (source checkout or the installed package)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, TypeAdapter, model_validator

from memory.errors import InvalidInput
from memory.models import BankType

RETENTION_PRESETS: tuple[int | None, ...] = (7, 30, 90, 365, None)
"""Retention choices offered by the lab and CLI help; any positive number of days is valid."""


class Mode(BaseModel):
    """A mode: embedding model, dims and chunking, fixed for a bank at creation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = ""
    description: str = ""
    embedder: str
    dims: int
    chunk_size: int
    chunk_overlap: int

    @model_validator(mode="after")
    def _check_chunking(self) -> Mode:
        if self.dims <= 0 or self.chunk_size <= 0 or not 0 <= self.chunk_overlap < self.chunk_size:
            raise ValueError("need dims > 0, chunk_size > 0 and 0 <= chunk_overlap < chunk_size")
        return self


class Template(BaseModel):
    """A template: prefilled settings for a common memory pattern."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = ""
    description: str = ""
    type: BankType
    mode: str
    compaction_prompt: str | None = None
    max_tokens: int | None = None
    max_turns: int | None = None
    retention_days: int | None = None


def configs_dir() -> Path:
    """Return the folder holding modes.yaml and templates.yaml."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_configs", here.parent / "configs"):
        if (candidate / "modes.yaml").is_file():
            return candidate
    raise FileNotFoundError("membank configs (modes.yaml, templates.yaml) are missing")


def _load_yaml(name: str) -> dict[str, Any]:
    data = yaml.safe_load((configs_dir() / name).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{name} must be a mapping of name -> settings")
    return data


@cache
def modes() -> dict[str, Mode]:
    """Return every mode by name."""
    raw = _load_yaml("modes.yaml")
    adapter = TypeAdapter(Mode)
    return {name: adapter.validate_python({**body, "name": name}) for name, body in raw.items()}


@cache
def templates() -> dict[str, Template]:
    """Return every template by name."""
    raw = _load_yaml("templates.yaml")
    adapter = TypeAdapter(Template)
    return {name: adapter.validate_python({**body, "name": name}) for name, body in raw.items()}


def get_mode(name: str) -> Mode:
    """Return the mode called `name`; InvalidInput lists the valid names otherwise."""
    found = modes().get(name)
    if found is None:
        raise InvalidInput(f"unknown mode {name!r}: choose one of {', '.join(sorted(modes()))}")
    return found


def get_template(name: str) -> Template:
    """Return the template called `name`; InvalidInput lists the valid names otherwise."""
    found = templates().get(name)
    if found is None:
        valid = ", ".join(sorted(templates()))
        raise InvalidInput(f"unknown template {name!r}: choose one of {valid}")
    return found
