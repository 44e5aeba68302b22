"""The membank lab: banks, test compaction, statistics and the AI config assistant.

Run it with `membank lab [--port N]` (or `make lab`); the storage comes from MEMBANK_URI.
"""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="membank lab", layout="wide")
pages = [
    st.Page("pages/banks.py", title="Banks", default=True),
    st.Page("pages/test_compaction.py", title="Test compaction"),
    st.Page("pages/statistics.py", title="Statistics"),
    st.Page("pages/assistant.py", title="AI assistant"),
    st.Page("pages/users.py", title="Users"),
]
st.navigation(pages).run()
