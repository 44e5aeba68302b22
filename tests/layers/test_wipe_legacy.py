"""A wipe also removes layer rows written before identity tags existed (user only in metadata)."""

from __future__ import annotations

from memory import entries
from memory.context import Context
from memory.layers import wipe
from memory.layers.agents import SESSION_BANK, WORKING_BANK
from memory.layers.storage import layer_bank
from memory.models import EntryIn


def _legacy(ctx: Context, name: str, bank_type: str, key: str, user: str, text: str) -> None:
    bank = layer_bank(ctx, name, bank_type, "legacy")  # type: ignore[arg-type]
    speaker = user if bank_type == "conversation" else None
    item = EntryIn(key=key, content=text, speaker=speaker, metadata={"user": user})
    entries.write(ctx, bank, [item])


def test_rows_without_identity_tags_are_wiped_by_their_metadata_user(ctx: Context) -> None:
    _legacy(ctx, WORKING_BANK, "conversation", "conv-ann", "ann", "ann's old turn")
    _legacy(ctx, WORKING_BANK, "conversation", "conv-bob", "bob", "bob's old turn")
    _legacy(ctx, SESSION_BANK, "general", '["ann", "trip"]', "ann", "ann's old summary")
    _legacy(ctx, SESSION_BANK, "general", '["bob", "trip"]', "bob", "bob's old summary")

    wipe.wipe_user(ctx, "ann")

    for name in (WORKING_BANK, SESSION_BANK):
        bank = layer_bank(ctx, name, "conversation" if name == WORKING_BANK else "general", "")
        left = [e.content for e in entries.read(ctx, bank)]
        assert all("ann" not in text for text in left), left
        assert any("bob" in text for text in left)  # the positive control
