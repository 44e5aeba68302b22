"""The membank lab: banks, test compaction, statistics and the AI config assistant.

Run it with `membank lab [--port N]` (or `make lab`); the storage comes from MEMBANK_URI.

The pages live in `views/`, not `pages/`: Streamlit takes a `pages/` folder next to the main
script for an old-style multipage app until `st.navigation` first runs, so a fresh server's
first request, a deep link such as /test_compaction, ran that page alone (its own navigation,
no `set_page_config`, the narrow layout).
"""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="membank lab", layout="wide")
pages = [
    st.Page("views/banks.py", title="Banks", default=True),
    st.Page("views/test_compaction.py", title="Test compaction"),
    st.Page("views/statistics.py", title="Statistics"),
    st.Page("views/assistant.py", title="AI assistant"),
    st.Page("views/users.py", title="Users"),
]
st.navigation(pages).run()
