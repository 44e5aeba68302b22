"""The AI config assistant, propose-then-accept: a description in, a proposed compaction
prompt, thresholds and retention out (with the arithmetic behind them); nothing changes
until the proposal is accepted on a bank. Rule-based offline, any litellm model otherwise."""

from __future__ import annotations

from memory.assistant.records import OFFLINE_ASSISTANT_LABEL, Proposal
from memory.assistant.service import accept, propose

__all__ = ["OFFLINE_ASSISTANT_LABEL", "Proposal", "accept", "propose"]
