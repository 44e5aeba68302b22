"""Pasted entries: JSON lines or `speaker: text` lines, checked by the bank type's rules."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

from pydantic import ValidationError

from memory import validation
from memory.errors import InvalidInput
from memory.models import Bank, BankType, EntryIn
from memory.prompt_lab.records import DraftEntry

PASTED_KEY = "pasted"
"""Key of pasted entries that name none (a JSON line may give its own)."""
CHAT_ROLES = ("system", "user", "assistant")
"""Speakers that are also roles: `user: hi` is speaker `user` with role `user`."""

_SPEAKER_LINE = re.compile(r"^(?P<speaker>[^:()\s][^:()]*?)\s*(?:\((?P<role>[^()]+)\))?\s*:\s?")


def parse_pasted(text: str, bank_type: BankType) -> list[DraftEntry]:
    """Return the entries of pasted text, oldest first, checked as the bank type requires.

    Each line is a JSON object (fields of `DraftEntry`; `key` defaults to "pasted") or, in a
    conversation bank, `speaker: text`, with an optional custom role `Dana (customer): text`;
    `system:`, `user:` and `assistant:` set that role too. In a general bank a plain line is
    one entry's text. An indented line continues the entry above it; blank lines are skipped.

    Raises:
        InvalidInput: nothing was pasted, or a line breaks a rule (its number is named).
    """
    drafts: list[DraftEntry] = []
    numbers: list[int] = []
    for number, line in enumerate(text.removeprefix("\ufeff").splitlines(), start=1):
        if not line.strip():
            continue
        if line[0] in " \t" and drafts and not line.lstrip().startswith("{"):
            last = drafts[-1]
            drafts[-1] = last.model_copy(update={"content": f"{last.content}\n{line.strip()}"})
            continue
        drafts.append(_parse_line(line.strip(), number, bank_type))
        numbers.append(number)
    if not drafts:
        raise InvalidInput(
            "nothing pasted: give one entry per line, as JSON objects or `speaker: text` lines"
        )
    check_drafts(drafts, bank_type, [f"line {n}" for n in numbers])
    return drafts


def _parse_line(line: str, number: int, bank_type: BankType) -> DraftEntry:
    if line.startswith("{"):
        return _json_line(line, number)
    if bank_type == "general":
        return DraftEntry(key=PASTED_KEY, content=line)
    match = _SPEAKER_LINE.match(line)
    if match is None or not line[match.end() :].strip():
        raise InvalidInput(
            f"line {number}: expected `speaker: text` (e.g. `user: my order is late`) or a "
            f"JSON object, got {validation.shown(line)}"
        )
    speaker = match["speaker"].strip()
    role = match["role"].strip() if match["role"] else None
    if role is None and speaker.lower() in CHAT_ROLES:
        role = speaker.lower()
    return DraftEntry(
        key=PASTED_KEY, content=line[match.end() :].strip(), speaker=speaker, role=role
    )


def _json_line(line: str, number: int) -> DraftEntry:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"line {number}: bad JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(value, dict):
        raise InvalidInput(f"line {number}: a JSON line must be an object with `content`")
    value.setdefault("key", PASTED_KEY)
    try:
        return DraftEntry.model_validate(value)
    except ValidationError as exc:
        problem = validation.first_problem(exc, "entry")
        raise InvalidInput(
            f"line {number}: {problem} (fields: key, content, speaker, role, created_at)"
        ) from None


def draft_bank(bank_type: BankType, prompt: str | None = None) -> Bank:
    """Return an in-memory bank of `bank_type` (never stored) for checks and test runs."""
    now = datetime.now(UTC)
    return Bank(
        id=uuid.uuid4().hex,
        account="lab",
        name="lab draft",
        type=bank_type,
        mode="balanced",
        compaction_prompt=prompt,
        created_at=now,
        updated_at=now,
    )


def check_drafts(drafts: Sequence[DraftEntry], bank_type: BankType, where: Sequence[str]) -> None:
    """Check each draft as a write to a bank of `bank_type` would; `where` names each one.

    Raises:
        InvalidInput: the first rule a draft breaks, prefixed with where it is.
    """
    bank = draft_bank(bank_type)
    for draft, place in zip(drafts, where, strict=True):
        item = EntryIn(
            key=draft.key,
            content=draft.content,
            speaker=draft.speaker,
            role=draft.role,
            created_at=draft.created_at,
        )
        try:
            validation.check_entry(bank, item, now=None)
        except InvalidInput as exc:
            raise InvalidInput(f"{place}: {exc}") from None
