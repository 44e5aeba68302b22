"""A bank's Configuration tab: settings, Compact now, Delete source, export, delete."""

from __future__ import annotations

import tempfile
from pathlib import Path

import streamlit as st

from lab import ui
from memory.context import Context
from memory.models import Bank, BankUpdate
from memory.ops import banks, exports
from memory.ops.compaction import CompactNow, compact_now
from memory.transfer import export


def configuration(ctx: Context, bank: Bank) -> None:
    """Draw the configuration of `bank` with its actions."""
    k = f"cfg_{bank.id}_{bank.updated_at.timestamp()}"
    left, right = st.columns(2)
    left.text_input("Type (locked)", bank.type, disabled=True, key=f"{k}_type")
    right.text_input("Mode (locked)", bank.mode, disabled=True, key=f"{k}_mode")
    st.caption("Type and mode are fixed at creation: the stored vectors depend on them.")
    name = st.text_input("Name", bank.name, key=f"{k}_name")
    description = st.text_input("Description", bank.description, key=f"{k}_description")
    prompt = st.text_area("Compaction prompt", bank.compaction_prompt or "", key=f"{k}_prompt")
    max_tokens, max_turns = ui.threshold_inputs(k, bank.max_tokens, bank.max_turns)
    retention = ui.retention_input(k, bank.retention_days)
    save, test, assist = st.columns(3)
    if save.button("Save configuration", type="primary", key="cfg_save"):
        with ui.reported():
            changes = BankUpdate(
                name=name,
                description=description,
                compaction_prompt=prompt or None,
                max_tokens=max_tokens,
                max_turns=max_turns,
                retention_days=retention,
            )
            updated = banks.update(ctx, banks.UpdateBank(bank.id, changes))
            st.session_state["saved"] = updated.name
            st.rerun()
    if test.button("Test compaction prompt", key="cfg_test"):
        st.session_state["draft_prompt"] = prompt
        st.session_state["draft_bank"] = bank.id
        st.switch_page("views/test_compaction.py")
    if assist.button("Use AI assistant", key="cfg_assistant"):
        st.session_state[ui.SELECTED_KEY] = bank.id
        st.session_state["as_target"] = "An existing bank"
        st.switch_page("views/assistant.py")
    saved = st.session_state.pop("saved", None)
    if saved:
        st.success(f"Saved the configuration of {saved!r}.")
    st.divider()
    _compact_now(ctx, bank)
    st.divider()
    _export(ctx, bank)
    st.divider()
    _danger(ctx, bank)


def _compact_now(ctx: Context, bank: Bank) -> None:
    st.subheader("Compact now")
    if not bank.has_trigger():
        st.caption("No threshold is set: compaction never runs on this bank.")
    if st.button("Compact now", key="cfg_compact", disabled=not bank.has_trigger()):
        with ui.reported(), st.status("Compacting every partition over a threshold...") as status:
            results = compact_now(ctx, CompactNow(bank.id)).partitions
            status.update(label=f"Compaction done: {len(results)} partition(s)", state="complete")
        if not results:
            st.info("No partition is over a threshold: nothing to compact.")
        for result in results:
            line = f"{result.key}: {result.status}, {result.covered} entries summarized"
            if result.summarizer:
                line += f" by {result.summarizer}"
            st.write(line + (f" ({result.error})" if result.error else ""))


def _export(ctx: Context, bank: Bank) -> None:
    st.subheader("Export")
    fmt = st.radio("Format", ["json", "parquet"], horizontal=True, key="cfg_export_format")
    with ui.reported():
        asked = exports.ExportRequest(resource_type="memory_bank", resource_id=bank.id, format=fmt)
        guess = exports.estimate(ctx, asked)
        st.write(f"{guess.entries:,} entries, about {guess.bytes:,} bytes ({guess.note}).")
        if st.button("Prepare the export", key="cfg_export"):
            with st.status("Exporting...") as status, tempfile.TemporaryDirectory() as tmp:
                out = Path(tmp) / f"{bank.name}.{fmt}"
                result = export.export(ctx, bank, fmt, out)  # type: ignore[arg-type]
                st.session_state["export_file"] = (bank.id, out.name, out.read_bytes())
                status.update(label=f"Exported {result.entries:,} entries", state="complete")
    ready = st.session_state.get("export_file")
    if ready and ready[0] == bank.id:
        st.download_button("Download", ready[2], file_name=ready[1], key="cfg_download")


def _danger(ctx: Context, bank: Bank) -> None:
    st.subheader("Content source")
    sure = st.checkbox(
        "I understand Delete source removes every entry of this bank for good",
        key=f"cfg_sure_{bank.id}",
    )
    if st.button("Delete source", disabled=not sure, key="cfg_reset"):
        with ui.reported():
            banks.reset_source(ctx, bank.id)
            st.success(f"Deleted every entry of {bank.name!r}; the configuration is kept.")
    typed = st.text_input(f"Type {bank.name!r} to delete the bank", key=f"cfg_name_{bank.id}")
    if st.button("Delete bank", disabled=typed != bank.name, key="cfg_delete"):
        with ui.reported():
            banks.delete(ctx, bank.id)
            st.session_state.pop(ui.SELECTED_KEY, None)
            st.rerun()
