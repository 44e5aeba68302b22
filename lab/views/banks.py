"""Banks: the list, the create form (from a template or from scratch) and a bank's configuration."""

from __future__ import annotations

import streamlit as st

from lab import ui
from lab.bank_config import configuration
from memory.config import modes, templates
from memory.models import BankCreate, BankType
from memory.ops import banks, lab

SCRATCH = "(from scratch)"
TYPES: list[BankType] = ["conversation", "general"]

st.title("Memory banks")
ctx = ui.context()

shown = st.radio("Type", ["all", *TYPES], horizontal=True, key="list_type")
listed = banks.list_banks(ctx, None if shown == "all" else shown)  # type: ignore[arg-type]
if listed:
    st.dataframe(
        [
            {
                "name": b.name,
                "type": b.type,
                "mode": b.mode,
                "retention": ui.retention_text(b.retention_days),
                "max tokens": b.max_tokens or "off",
                "max turns": b.max_turns or "off",
                "summaries": b.summary_count,
                "description": b.description,
            }
            for b in listed
        ],
        hide_index=True,
        use_container_width=True,
    )
else:
    st.caption("No bank of this type yet.")

create_tab, config_tab = st.tabs(["Create a bank", "Configuration"])

with create_tab:
    found = templates()
    chosen = st.selectbox("Template", [SCRATCH, *found], key="create_template")
    template = found.get(chosen)
    if template is not None:
        st.caption(template.description)
    draft = st.session_state.get("assistant_draft")  # an accepted proposal of the assistant
    k = f"create_{chosen}_{id(draft)}"
    prefill = {
        "type": template.type if template else "conversation",
        "prompt": (template.compaction_prompt or "") if template else "",
        "max_tokens": template.max_tokens if template else None,
        "max_turns": template.max_turns if template else None,
        "mode": template.mode if template else "balanced",
    }
    if draft is not None:
        st.info(f"Prefilled from the proposal of {draft.assistant}.")
        prefill.update(
            prompt=draft.compaction_prompt or "",
            max_tokens=draft.max_tokens,
            max_turns=draft.max_turns,
            type=draft.bank_type or prefill["type"],
            mode=draft.mode or prefill["mode"],  # the template's mode the proposal matched
        )
    name = st.text_input("Name", key=f"{k}_name")
    description = st.text_input("Description", value="", key=f"{k}_description")
    left, right = st.columns(2)
    bank_type = left.selectbox(
        "Type (fixed after creation)",
        TYPES,
        index=TYPES.index(prefill["type"]),
        disabled=template is not None,
        key=f"{k}_type",
    )
    mode_names = list(modes())
    mode = right.selectbox(
        "Mode (fixed after creation)",
        mode_names,
        index=mode_names.index(prefill["mode"]) if prefill["mode"] in mode_names else 0,
        format_func=lambda m: f"{m}: {modes()[m].description}" if modes()[m].description else m,
        key=f"{k}_mode",
    )
    prompt = st.text_area(
        "Compaction prompt (empty: the oldest entries are deleted, not summarized)",
        value=prefill["prompt"],
        key=f"{k}_prompt",
    )
    max_tokens, max_turns = ui.threshold_inputs(k, prefill["max_tokens"], prefill["max_turns"])
    if draft is not None:
        default_retention = draft.retention_days
    elif template is not None:
        default_retention = template.retention_days
    else:
        default_retention = lab.default_retention(bank_type)
    retention = ui.retention_input(f"{k}_{bank_type}", default_retention)
    create, test, assist = st.columns([1, 1, 1])
    if test.button("Test prompt", key="create_test_prompt"):
        st.session_state["draft_prompt"] = prompt
        st.session_state["draft_type"] = bank_type
        st.switch_page("views/test_compaction.py")
    if assist.button("Use AI assistant", key="create_assistant"):
        st.switch_page("views/assistant.py")
    if create.button("Create", type="primary", key="create_bank"):
        with ui.reported():
            spec = BankCreate(
                name=name,
                type=bank_type,
                mode=mode,
                template=template.name if template else None,
                description=description,
                compaction_prompt=prompt or None,
                max_tokens=max_tokens,
                max_turns=max_turns,
                retention_days=retention,
            )
            bank = banks.create(ctx, banks.CreateBank(spec))
            st.session_state[ui.SELECTED_KEY] = bank.id
            st.session_state.pop("assistant_draft", None)
            st.session_state["created"] = bank.name
            st.rerun()
    created = st.session_state.pop("created", None)
    if created:
        st.success(f"Created bank {created!r}; its storage is provisioned.")

with config_tab:
    selected = ui.pick_bank(ctx, label="Bank to configure")
    if selected is not None:
        configuration(ctx, selected)
