"""The config assistant: propose a configuration from a description (nothing changes), then
accept a proposal onto a bank (exactly the proposed prompt, thresholds and retention)."""

from __future__ import annotations

from fastapi import APIRouter

from memory.api.deps import Ctx
from memory.api.models.assistant import AcceptRequest, ConfigForBank, ConfigRequest
from memory.assistant import Proposal
from memory.models import Bank
from memory.ops import lab

router = APIRouter(prefix="/memory_banks", tags=["config assistant"])


@router.post("/generate_memory_bank_config", summary="Propose a bank configuration")
def generate_config(ctx: Ctx, body: ConfigRequest) -> Proposal:
    """A proposed compaction prompt, thresholds and retention with a short rationale; nothing
    is stored (the offline rule-based assistant unless a model is configured; labelled)."""
    return lab.propose(ctx, lab.ProposeRequest(description=body.description, type=body.type))


@router.post("/{bank_id}/generate_memory_bank_config", summary="Propose a config for a bank")
def generate_config_for_bank(ctx: Ctx, bank_id: str, body: ConfigForBank) -> Proposal:
    """A proposal for an existing bank (of its type); the bank does not change."""
    return lab.propose(ctx, lab.ProposeRequest(description=body.description, bank=bank_id))


@router.post("/{bank_id}/generate_memory_bank_config/accept", summary="Accept a proposal")
def accept_config(ctx: Ctx, bank_id: str, body: AcceptRequest) -> Bank:
    """Apply exactly the proposal to the bank; a proposal for another bank type is a 400."""
    return lab.accept(ctx, bank_id, body.proposal)
