"""Users: the admin's view of an account's users: each one's long-term memories, session
summaries and conversations; forget one memory, or wipe the user (the receipt is shown).

Thin: every list and action is a `memory.ops.agents` use case (`list_users`, `show_user`,
`forget`, `wipe_user`), the same the CLI's `membank memory forget` and `membank user wipe`
call.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import streamlit as st

from lab import ui
from memory.context import Context
from memory.ops import agents
from memory.settings import checked_account

RECEIPT_KEY = "users_receipt"  # the last deletion's receipt, shown after the page reruns


def _show_receipt() -> None:
    done: dict[str, Any] | None = st.session_state.get(RECEIPT_KEY)
    if not done:
        return
    with st.container(border=True, key="deletion_receipt"):
        st.success(done["message"])
        if done.get("tables"):
            st.table(done["tables"])
        with st.expander("Receipt (JSON)"):
            st.json(done["receipt"])


def _forget(ctx: Context, user: str, memory_id: str) -> None:
    gone = agents.forget(ctx, agents.ForgetRequest(user=user, memory_id=memory_id))
    st.session_state[RECEIPT_KEY] = {
        "message": f"Forgot memory {gone.id} of {user!r} for good: {gone.content!r}",
        "receipt": gone.model_dump(mode="json"),
    }


def _wipe(ctx: Context, user: str) -> None:
    receipt = agents.wipe_user(ctx, agents.WipeRequest(user=user))
    counts = ", ".join(f"{layer} {n}" for layer, n in receipt.counts.items())
    st.session_state[RECEIPT_KEY] = {
        "message": f"Wiped user {user!r}: {receipt.rows_removed} rows removed ({counts}), "
        f"finished {receipt.finished_at:%Y-%m-%d %H:%M:%S} UTC",
        "tables": [line.model_dump() for line in receipt.tables],
        "receipt": receipt.model_dump(mode="json"),
    }


st.title("Users")
ctx = ui.context()
account = st.text_input("Account", value=ctx.account, help="The account whose users are shown")
_show_receipt()

with ui.reported():
    if account != ctx.account:
        ctx = replace(ctx, account=checked_account(account, ctx.settings))
    found = agents.list_users(ctx)
    if not found.users:
        st.info(
            f"No user in account {found.account!r} yet: users appear once an agent talks to them."
        )
        st.stop()
    st.table(
        [
            {
                "user": u.user,
                "memories": u.memories,
                "session summaries": ", ".join(u.agents),
                "conversations": u.conversations,
                "last active (UTC)": f"{u.last_active_at:%Y-%m-%d %H:%M}"
                if u.last_active_at
                else "",
            }
            for u in found.users
        ],
    )
    user = st.selectbox("User", [u.user for u in found.users], key="users_user")
    detail = agents.show_user(ctx, agents.UserRequest(user=user))

    st.subheader("Long-term memories")
    if detail.memories:
        st.table(
            [
                {
                    "id": m.id,
                    "type": m.type,
                    "scope": m.scope,
                    "agent": m.agent or "",
                    "content": m.content,
                    "tags": ", ".join(m.tags),
                    "saved (UTC)": f"{m.created_at:%Y-%m-%d %H:%M}",
                }
                for m in detail.memories
            ],
        )
        shown = {m.id: f"{m.content[:70]} ({m.id[:8]})" for m in detail.memories}
        left, right = st.columns([4, 1], vertical_alignment="bottom")
        picked = left.selectbox("Memory", list(shown), format_func=shown.__getitem__)
        if right.button("Forget memory", key="users_forget"):
            _forget(ctx, user, picked)
            st.rerun()
    else:
        st.caption("No long-term memory.")

    st.subheader("Session summary")
    for summary in detail.summaries:
        with st.container(border=True):
            st.markdown(
                f"**with {summary.agent}** · version {summary.version} · "
                f"{len(summary.conversations)} conversation(s) merged · {summary.summarizer}"
            )
            st.write(summary.summary)
    if not detail.summaries:
        st.caption("No session summary yet (written when a conversation ends).")

    st.subheader("Conversations")
    for talk in detail.conversations:
        title = (
            f"{talk.conversation} with {talk.agent or 'no agent'} · {len(talk.turns)} turns · "
            f"last {talk.last_at:%Y-%m-%d %H:%M} UTC"
        )
        with st.expander(title):
            for stored in talk.turns:
                st.markdown(f"**{stored.turn.role}**: {stored.turn.text()}")
    if not detail.conversations:
        st.caption("No conversation in working memory.")

    st.subheader("Wipe user")
    sure = st.checkbox(
        f"Delete every trace of {user!r} in every layer, for good (right to be forgotten)",
        key="users_sure",
    )
    if st.button("Wipe user", type="primary", disabled=not sure, key="users_wipe"):
        _wipe(ctx, user)
        st.rerun()
