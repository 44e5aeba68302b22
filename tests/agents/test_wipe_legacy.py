"""A wipe also removes layer rows written before identity tags existed (user only in metadata)."""

from __future__ import annotations

from compaction_support import run

from memory import entries
from memory.agents import wipe
from memory.agents.identity import user_tag
from memory.agents.registry import SESSION_BANK, WORKING_BANK
from memory.agents.storage import layer_bank
from memory.context import Context
from memory.models import EntryIn


def _legacy(ctx: Context, name: str, bank_type: str, key: str, user: str, text: str) -> None:
    bank = layer_bank(ctx, name)
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
        bank = layer_bank(ctx, name)
        left = [e.content for e in entries.read(ctx, bank)]
        assert all("ann" not in text for text in left), left
        assert any("bob" in text for text in left)  # the positive control


def test_maintain_tags_old_rows_so_the_wipe_needs_no_fallback(ctx: Context) -> None:
    _legacy(ctx, WORKING_BANK, "conversation", "conv-ann", "ann", "ann's old turn")
    _legacy(ctx, WORKING_BANK, "conversation", "conv-bob", "bob", "bob's old turn")
    _legacy(ctx, SESSION_BANK, "general", '["ann", "trip"]', "ann", "ann's old summary")
    _legacy(ctx, SESSION_BANK, "general", '["bob", "trip"]', "bob", "bob's old summary")
    names = (WORKING_BANK, SESSION_BANK)
    before = {name: {e.id for e in entries.read(ctx, layer_bank(ctx, name))} for name in names}

    code, out, err = run("maintain", "--all", "--json", context=ctx)
    assert code == 0, err
    assert "2 layer rows written before identity tags now carry their user's tag" in out
    assert run("verify", "--all", context=ctx)[0] == 0  # the rewrite left nothing to prune

    for name in names:
        bank = layer_bank(ctx, name)
        stored = entries.read(ctx, bank)
        assert {e.id for e in stored} == before[name]  # the same rows, ids kept
        assert all(user_tag(e.metadata["user"]) in e.tags for e in stored)

    receipt = wipe.wipe_user(ctx, "ann", legacy=False)

    assert receipt.counts == {"working": 1, "session": 1}
    for name in names:
        bank = layer_bank(ctx, name)
        left = [e.content for e in entries.read(ctx, bank)]
        assert left and all("bob" in text for text in left), left


def test_without_maintain_the_fallback_is_what_finds_old_rows(ctx: Context) -> None:
    _legacy(ctx, WORKING_BANK, "conversation", "conv-ann", "ann", "ann's old turn")

    assert wipe.wipe_user(ctx, "ann", legacy=False).rows_removed == 0
    assert wipe.wipe_user(ctx, "ann").rows_removed == 1
