"""The small exception tree: the caller's mistakes vs. missing things vs. provider failures."""

from __future__ import annotations


class MembankError(Exception):
    """Base of every error membank raises on purpose."""


class InvalidInput(MembankError):
    """The caller asked for something invalid; the message says what and how to fix it."""


class NotFound(MembankError):
    """A bank, entry or other record does not exist (or is not visible to this account)."""


class BankNotFound(NotFound):
    """No bank `ref` in the account. The message may say where the store is (the CLI's
    user owns it); `public` is what a remote caller sees: the same for a bank of another
    account as for none, naming no storage location."""

    def __init__(self, message: str, ref: str) -> None:
        super().__init__(message)
        self.ref = ref

    @property
    def public(self) -> str:
        """Return the message for a remote caller (REST, MCP)."""
        return (
            f"no bank {self.ref[:80]!r} in this account: list its banks (`membank bank list`, "
            "GET /memory_banks, or the list_memory_banks tool)"
        )


class Conflict(MembankError):
    """The request contradicts stored state, e.g. changing a bank's immutable type or mode."""


class ProviderError(MembankError):
    """An LLM or embedding provider failed (error, timeout, unusable output)."""


class FormatRejected(ProviderError):
    """The provider refused the response format asked for (e.g. no `json_schema` support)."""


class InvalidModelOutput(ProviderError):
    """The model answered, but not in the form asked for (e.g. invalid JSON)."""


class ModelRequestsBlocked(ProviderError):
    """A real model call was attempted while model requests are blocked (tests)."""


class StorageError(MembankError):
    """The storage engine failed in a way the caller cannot fix by changing input."""


class Invalid(InvalidInput):
    """A value broke a rule: the message says which and how to fix it; `code` names the
    kind of problem (`bad_encoding`, `empty_content`, `missing_speaker`,
    `unexpected_speaker`, or `invalid` for every other rule)."""

    def __init__(self, message: str, code: str = "invalid") -> None:
        super().__init__(message)
        self.code = code


class IngestStopped(MembankError):
    """An ingest stopped midway (a storage failure, a full disk, Ctrl-C); the message says
    how many rows it had stored, and running the same ingest again skips those by id."""

    def __init__(self, message: str, *, stored: int, interrupted: bool = False) -> None:
        super().__init__(message)
        self.stored = stored
        self.interrupted = interrupted
