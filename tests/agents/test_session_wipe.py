"""The per-user wipe over working and session memory: no trace of the user in their turns,
their summaries, any read path or any table file; other users untouched."""

from __future__ import annotations

from pathlib import Path

from session_support import AppendingCompleter, write_conversation

from memory.agents import session, wipe, working
from memory.context import Context
from memory.transfer import export


def test_the_wipe_covers_working_and_session_memory(ctx: Context, tmp_path: Path) -> None:
    ctx.completer = AppendingCompleter
    write_conversation(ctx, "g1", "gone", "bot", "zzgoneneedle lives on Elm Street.")
    write_conversation(ctx, "k1", "kept", "bot", "zzkeptneedle lives on Oak Street.")
    for user, conversation in (("gone", "g1"), ("kept", "k1")):
        session.merge_conversation(ctx, user=user, agent="bot", conversation=conversation)
    work, sess = working.working_bank(ctx), session.session_bank(ctx)

    receipt = wipe.wipe_user(ctx, "gone")

    assert receipt.counts["working"] == 2 and receipt.counts["session"] == 1
    assert {(t.layer, t.table) for t in receipt.tables} >= {
        ("working", work.id),
        ("session", sess.id),
    }
    assert working.turns(ctx, "g1") == [] and session.session_summary(ctx, "gone", "bot") is None
    assert session.start_conversation(ctx, user="gone", agent="bot") == []
    for bank in (work, sess):
        out = tmp_path / f"{bank.name}.json"
        export.export(ctx, bank, "json", out)
        assert "zzgoneneedle" not in out.read_text("utf-8")
        assert "zzkeptneedle" in out.read_text("utf-8")
        assert ctx.store.version_count(bank.id) == 1  # no old version keeps the rows
    files = [p for p in Path(ctx.store.uri).rglob("*") if p.is_file()]
    assert any(b"zzkeptneedle" in p.read_bytes() for p in files)  # a byte search finds text
    assert not any(b"zzgoneneedle" in p.read_bytes() for p in files)
    assert working.turns(ctx, "k1")[0].turn.content.startswith("zzkeptneedle")
