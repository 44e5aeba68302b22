"""Prompt files (`<name>.md` in this folder), rendered at call time with explicit variables.

Placeholders are written `{{name}}`. Rendering is one pass, so braces inside values are kept
as they are; every placeholder needs a value and every value needs a placeholder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from importlib import resources

from memory.errors import InvalidInput
from memory.ports import Message

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_NAME = re.compile(r"[a-z0-9_]+")


def available() -> list[str]:
    """Return the names of the prompt files shipped with membank, sorted."""
    folder = resources.files(__name__)
    return sorted(p.name[:-3] for p in folder.iterdir() if p.name.endswith(".md"))


def template(name: str) -> str:
    """Return the raw text of prompt `name` (placeholders not filled).

    Raises:
        InvalidInput: If no prompt file has that name.
    """
    path = resources.files(__name__) / f"{name}.md"
    if not _NAME.fullmatch(name) or not path.is_file():
        raise InvalidInput(f"unknown prompt {name!r}; available prompts: {', '.join(available())}")
    return path.read_text(encoding="utf-8").rstrip("\n") + "\n"


def variables(name: str) -> list[str]:
    """Return the placeholder names of prompt `name`, in order of first appearance."""
    return list(dict.fromkeys(_PLACEHOLDER.findall(template(name))))


def render(name: str, **values: str | int) -> str:
    """Return prompt `name` with every `{{placeholder}}` replaced by its value.

    Raises:
        InvalidInput: If the prompt is unknown, a placeholder has no value, or a value has no
            placeholder (a misspelt variable name).
    """
    text = template(name)
    needed = variables(name)
    missing = [key for key in needed if key not in values]
    if missing:
        raise InvalidInput(f"prompt {name!r} needs a value for: {', '.join(missing)}")
    unused = sorted(set(values) - set(needed))
    if unused:
        raise InvalidInput(
            f"prompt {name!r} has no placeholder for: {', '.join(unused)} "
            f"(it takes: {', '.join(needed)})"
        )
    return _PLACEHOLDER.sub(lambda match: str(values[match[1]]), text)


def entry_line(content: str, speaker: str | None = None) -> str:
    """Return an entry as one prompt line, "speaker: content" (whitespace collapsed)."""
    text = " ".join(content.split())
    return f"{' '.join(speaker.split())}: {text}" if speaker else text


def compaction_messages(
    instructions: str, previous_summary: str, entries: Sequence[str], budget_tokens: int
) -> list[Message]:
    """Return the system and user messages that ask a model for a compaction summary.

    Args:
        instructions: The bank's compaction prompt.
        previous_summary: The partition's current summary, or "" if there is none.
        entries: Entry lines oldest first, as made by `entry_line`.
        budget_tokens: The most tokens the summary may take.
    """
    if budget_tokens < 1:
        raise InvalidInput(f"budget_tokens must be positive, got {budget_tokens}")
    user = render(
        "compaction",
        instructions=instructions.strip(),
        previous_summary=previous_summary.strip(),
        entries="\n".join(entry_line(line) for line in entries),
        budget_tokens=budget_tokens,
    )
    return [
        Message(role="system", content=template("compaction_system").strip()),
        Message(role="user", content=user),
    ]
