"""Modes and templates loaded from configs/*.yaml (source checkout or the installed package),
plus the user's own from the folder named by `MEMBANK_CONFIG_DIR`.

The user's `modes.yaml` and `templates.yaml` there (each optional, same format) add modes and
templates, e.g. a mode whose embedder is any litellm embedding model. They cannot redefine
a shipped name: a bank keeps its mode's name for life, so a shipped mode must mean the same
everywhere.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from memory.errors import InvalidInput
from memory.models import BankType
from memory.types.fields import RetentionDays, Threshold
from memory.types.problems import first_problem

CONFIG_DIR_ENV = "MEMBANK_CONFIG_DIR"
"""Environment variable naming a folder of the user's own modes.yaml and templates.yaml."""
T = TypeVar("T", bound=BaseModel)
RETENTION_PRESETS: tuple[int | None, ...] = (7, 30, 90, 365, None)
"""Retention choices offered by the lab and CLI help; any positive number of days is valid."""


class Mode(BaseModel):
    """A mode: embedding model, dims and chunking, fixed for a bank at creation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = ""
    description: str = ""
    embedder: str
    dims: int = Field(strict=True)
    chunk_size: int = Field(strict=True)
    chunk_overlap: int = Field(strict=True)

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
    max_tokens: Threshold | None = Field(default=None, strict=True)
    max_turns: Threshold | None = Field(default=None, strict=True)
    retention_days: RetentionDays | None = Field(default=None, strict=True)


def configs_dir() -> Path:
    """Return the folder holding modes.yaml and templates.yaml."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_configs", here.parent / "configs"):
        if (candidate / "modes.yaml").is_file():
            return candidate
    raise FileNotFoundError("membank configs (modes.yaml, templates.yaml) are missing")


def user_configs_dir() -> Path | None:
    """Return the folder named by MEMBANK_CONFIG_DIR, or None when it is not set."""
    value = os.environ.get(CONFIG_DIR_ENV, "").strip()
    if not value:
        return None
    folder = Path(value).expanduser()
    if not folder.is_dir():
        raise InvalidInput(
            f"{CONFIG_DIR_ENV}={value!r} is not a folder: point it at a folder holding your "
            "modes.yaml and/or templates.yaml, or unset it"
        )
    return folder


class _DuplicateKey(yaml.constructor.ConstructorError):
    """A mapping holds one key twice (plain YAML loading keeps the last, silently)."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a key given twice in one mapping (a mode or a setting)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *base` may be overridden
                continue
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:  # unhashable: the base loader says so
                continue
            if duplicate:
                raise _DuplicateKey(
                    problem=f"{key!r} is given twice: keep one (YAML would silently use the last)",
                    problem_mark=key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: Path) -> Any:
    """Return the decoded YAML file; InvalidInput with the path, line and problem otherwise
    (a key given twice in one mapping included)."""
    try:
        # a SafeLoader subclass: as safe as yaml.safe_load
        return yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)
    except _DuplicateKey as exc:
        raise InvalidInput(f"{path}: {_yaml_problem(exc)}") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InvalidInput(f"{path}: cannot be read as YAML: {_yaml_problem(exc)}") from None


def _load_yaml(path: Path) -> dict[str, Any]:
    data = read_yaml(path)
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise InvalidInput(f"{path}: must be a mapping of name -> settings")
    return data


def _yaml_problem(exc: Exception) -> str:
    """Return one line saying what is wrong and where (YAML errors span several lines)."""
    mark = getattr(exc, "problem_mark", None)
    if isinstance(exc, yaml.MarkedYAMLError) and mark is not None:
        return f"line {mark.line + 1}, column {mark.column + 1}: {exc.problem}"
    return " ".join(str(exc).split())


def _load(file: str, model: type[T], user_dir: str | None) -> dict[str, T]:
    """Return the shipped entries of `file`, then the user's from `user_dir`, by name."""
    adapter = TypeAdapter(model)
    found = {
        name: adapter.validate_python({**body, "name": name})
        for name, body in _load_yaml(configs_dir() / file).items()
    }
    path = Path(user_dir) / file if user_dir else None
    if path is None or not _user_file_present(path):
        return found
    for name, body in _load_yaml(path).items():
        if name in found:
            raise InvalidInput(
                f"{path}: {name!r} is shipped with membank and cannot be redefined: "
                "give yours another name"
            )
        try:
            found[name] = adapter.validate_python({**body, "name": name})
        except ValidationError as exc:
            problem = first_problem(exc, "settings")
            raise InvalidInput(f"{path}: {name!r}: {problem}") from None
        except InvalidInput as exc:  # a field rule (memory.types.fields) refused a value
            raise InvalidInput(f"{path}: {name!r}: {exc}") from None
    return found


def _user_file_present(path: Path) -> bool:
    """Return True when the user's `path` is a file to read, False when it is absent (each
    file is optional); InvalidInput when something else stands in its place."""
    if path.is_file():
        return True
    if path.is_symlink():
        raise InvalidInput(
            f"{path}: is a symbolic link to {os.readlink(path)!r}, which does not exist: "
            "point it at your file or remove it"
        )
    if path.is_dir():
        raise InvalidInput(
            f"{path}: is a folder, not a file: put your {path.name} there as a file "
            "(or remove the folder)"
        )
    if path.exists():
        raise InvalidInput(f"{path}: is not a regular file: make it a file or remove it")
    return False


def modes() -> dict[str, Mode]:
    """Return every mode by name: the shipped ones, then the user's."""
    return _modes(_user_dir_text())


def templates() -> dict[str, Template]:
    """Return every template by name: the shipped ones, then the user's."""
    return _templates(_user_dir_text())


def _user_dir_text() -> str | None:
    folder = user_configs_dir()
    return None if folder is None else str(folder)


@cache
def _modes(user_dir: str | None) -> dict[str, Mode]:
    found = _load("modes.yaml", Mode, user_dir)
    if user_dir:
        _check_offline_embedders(Path(user_dir) / "modes.yaml", found)
    return found


def _check_offline_embedders(path: Path, found: dict[str, Mode]) -> None:
    """Refuse a user mode whose offline embedder does not exist or has other dims: a bank
    made with it could never take a write, and its mode never changes."""
    from memory.providers.embed import check_embedder

    for mode in found.values():
        try:
            check_embedder(mode.embedder, mode.dims)
        except InvalidInput as exc:
            raise InvalidInput(f"{path}: {mode.name!r}: {exc}") from None


@cache
def _templates(user_dir: str | None) -> dict[str, Template]:
    found = _load("templates.yaml", Template, user_dir)
    known = _modes(user_dir)
    for template in found.values():
        if template.mode not in known:
            where = f"{Path(user_dir) / 'templates.yaml'}: " if user_dir else ""
            raise InvalidInput(
                f"{where}template {template.name!r} uses unknown mode {template.mode!r}: "
                f"choose one of {', '.join(sorted(known))}"
            )
    return found


def get_mode(name: str, *, bank: str | None = None) -> Mode:
    """Return the mode called `name`: the one mode look-up.

    Args:
        name: The mode's name.
        bank: The name of the stored bank whose mode this is (None: a name being chosen).

    Raises:
        InvalidInput: no such mode. For a name being chosen the message lists the valid
            names; for a stored bank's mode (which never changes) it says how to bring the
            mode back: the folder whose modes.yaml defines it.
    """
    found = modes().get(name)
    if found is not None:
        return found
    if bank is None:
        where = os.environ.get(CONFIG_DIR_ENV, "").strip() or "unset"
        raise InvalidInput(
            f"unknown mode {name!r}: choose one of {', '.join(sorted(modes()))} (modes of "
            f"your own come from $MEMBANK_CONFIG_DIR/modes.yaml; {CONFIG_DIR_ENV} is {where})"
        )
    folder = user_configs_dir()
    where = (
        f"{CONFIG_DIR_ENV} is unset"
        if folder is None
        else f"{folder / 'modes.yaml'} does not define it"
    )
    raise InvalidInput(
        f"bank {bank!r} uses unknown mode {name!r} ({where}): set {CONFIG_DIR_ENV} "
        f"to the folder whose modes.yaml defines {name!r} (load, stats, export, "
        "forget and retention work without it)"
    )


def get_template(name: str) -> Template:
    """Return the template called `name`; InvalidInput lists the valid names otherwise."""
    found = templates().get(name)
    if found is None:
        valid = ", ".join(sorted(templates()))
        raise InvalidInput(f"unknown template {name!r}: choose one of {valid}")
    return found
