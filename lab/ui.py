"""What every lab page shares: the context, the bank picker, error display, retention input.

The pages are thin: each widget reads or calls a `memory.ops` use case. The context comes from
`memory.wiring.open_context` (MEMBANK_URI, MEMBANK_ACCOUNT, default account "local"); a test
puts its own under `CONTEXT_KEY` in the session state instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

from memory.config import RETENTION_PRESETS
from memory.context import Context
from memory.errors import MembankError
from memory.models import Bank, BankType
from memory.ops import banks
from memory.wiring import open_context

CONTEXT_KEY = "membank_context"
"""Session-state key of a context to use instead of opening the storage (tests)."""
SELECTED_KEY = "selected_bank"
"""Session-state key of the bank id chosen on any page, so every page opens on it."""
CUSTOM, INDEFINITE = "Custom", "Indefinite"


@st.cache_resource(show_spinner=False)
def _opened() -> Context:
    return open_context()


def context() -> Context:
    """Return the context of this session: the test's, or the storage's from the environment."""
    injected = st.session_state.get(CONTEXT_KEY)
    if isinstance(injected, Context):
        return injected
    return _opened()


@contextmanager
def reported() -> Iterator[None]:
    """Show a membank error (what was wrong and how to fix it) instead of a traceback."""
    try:
        yield
    except MembankError as exc:
        st.error(str(exc))


def pick_bank(
    ctx: Context, *, label: str = "Bank", bank_type: BankType | None = None, where: str = "main"
) -> Bank | None:
    """Return the bank chosen in a select box (None when there is none); remembered across
    pages."""
    found = banks.list_banks(ctx, bank_type)
    if not found:
        st.info("No bank yet: create one on the Banks page.")
        return None
    ids = [b.id for b in found]
    chosen = st.session_state.get(SELECTED_KEY)
    index = ids.index(chosen) if chosen in ids else 0
    box = st.sidebar if where == "sidebar" else st
    names = {b.id: f"{b.name} ({b.type})" for b in found}
    picked = box.selectbox(label, ids, index=index, format_func=names.__getitem__)
    st.session_state[SELECTED_KEY] = picked
    return found[ids.index(picked)]


def retention_text(days: int | None) -> str:
    """Return a bank's retention as shown to a user."""
    return "indefinite" if days is None else f"{days} days"


def _choice(days: int) -> str:
    return f"{days} days"


def retention_input(key: str, current: int | None) -> int | None:
    """Return the retention chosen with the presets (7/30/90/365 days), Custom or Indefinite."""
    presets = [_choice(d) for d in RETENTION_PRESETS if d is not None]
    options = [*presets, CUSTOM, INDEFINITE]
    if current is None:
        index = options.index(INDEFINITE)
    elif _choice(current) in presets:
        index = presets.index(_choice(current))
    else:
        index = options.index(CUSTOM)
    choice = st.selectbox("Retention", options, index=index, key=f"{key}_retention")
    if choice == INDEFINITE:
        return None
    if choice == CUSTOM:
        return int(
            st.number_input(
                "Retention (days)", min_value=1, value=current or 30, step=1, key=f"{key}_days"
            )
        )
    return int(choice.split()[0])


def threshold_inputs(key: str, max_tokens: int | None, max_turns: int | None) -> tuple[int, int]:
    """Return (max_tokens, max_turns) from two number inputs; 0 turns a threshold off."""
    left, right = st.columns(2)
    tokens = left.number_input(
        "Max size (tokens, 0 = off)",
        min_value=0,
        value=max_tokens or 0,
        step=500,
        key=f"{key}_max_tokens",
    )
    turns = right.number_input(
        "Max turns (entries, 0 = off)",
        min_value=0,
        value=max_turns or 0,
        step=10,
        key=f"{key}_max_turns",
    )
    return int(tokens), int(turns)
