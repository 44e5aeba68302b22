"""Key templates of an agent's memory steps (`{{conversation.id}}`, `{{metadata.email_from}}`)
and the rule on e-mail senders as keys (seed 000).

A conversation keyed by the e-mail sender (`{{metadata.email_from}}`) trusts whoever the
`From:` header names. That is safe only when the sender is authenticated (SPF or DMARC must
pass: `email_require_sender_auth`, on by default); on an open inbox anyone can forge the
header and read or write another sender's history. So a key template using `email_from` is
refused while sender authentication is off.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from memory.errors import InvalidInput
from memory.validation import check_key

PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
FIXED_NAMES = ("conversation.id", "user.id", "agent.id")
"""Placeholders every template may use, besides `metadata.NAME`."""
EMAIL_FROM = "metadata.email_from"


def placeholders(template: str) -> list[str]:
    """Return the names of the template's `{{...}}` placeholders, in order."""
    return [match[1] for match in PLACEHOLDER.finditer(template)]


def check_template(template: str, *, require_sender_auth: bool, source: str) -> None:
    """Check a key template; InvalidInput names the problem and the fix.

    Args:
        template: e.g. `{{conversation.id}}` or `support-{{metadata.email_from}}`.
        require_sender_auth: the agent's `email_require_sender_auth`.
        source: what holds the template, for the message (`agent support: banks.0.key`).

    Raises:
        InvalidInput: blank, an unknown placeholder, stray braces, or `email_from` while
            sender authentication is off.
    """
    if not template.strip():
        raise InvalidInput(f"{source}: the key template is blank: use e.g. {{{{conversation.id}}}}")
    names = placeholders(template)
    rest = PLACEHOLDER.sub("", template)
    if "{{" in rest or "}}" in rest:
        raise InvalidInput(f"{source}: {template!r} has unbalanced braces: write {{{{name}}}}")
    for name in names:
        if name not in FIXED_NAMES and not re.fullmatch(r"metadata\.[A-Za-z_][A-Za-z0-9_]*", name):
            raise InvalidInput(
                f"{source}: unknown placeholder {{{{{name}}}}} in {template!r}: use "
                f"{', '.join('{{' + n + '}}' for n in FIXED_NAMES)} or {{{{metadata.NAME}}}}"
            )
    if EMAIL_FROM in names and not require_sender_auth:
        raise InvalidInput(sender_auth_message(source))


def sender_auth_message(source: str) -> str:
    """Return why an `email_from` key is refused with sender authentication off."""
    return (
        f"{source}: a key from {{{{{EMAIL_FROM}}}}} needs email_require_sender_auth on: "
        "without SPF/DMARC checks the sender address is unverified and can be forged, so "
        "anyone could read or write another sender's conversation history. Turn "
        "email_require_sender_auth back on (the default), or key the conversation by "
        "{{conversation.id}}"
    )


def render(
    template: str,
    *,
    conversation: str | None = None,
    user: str | None = None,
    agent: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    require_sender_auth: bool = True,
    source: str = "key",
) -> str:
    """Return the key a template gives for one conversation, checked as a key.

    Raises:
        InvalidInput: the template is refused (see `check_template`), a value it needs is
            missing, or the result is not a valid key.
    """
    check_template(template, require_sender_auth=require_sender_auth, source=source)
    values: dict[str, Any] = {
        "conversation.id": conversation,
        "user.id": user,
        "agent.id": agent,
    }
    for name, value in (metadata or {}).items():
        values[f"metadata.{name}"] = value

    def fill(match: re.Match[str]) -> str:
        value = values.get(match[1])
        if value is None or not str(value).strip():
            raise InvalidInput(f"{source}: {{{{{match[1]}}}}} has no value for this conversation")
        return str(value)

    key = PLACEHOLDER.sub(fill, template)
    check_key(key)
    return key
