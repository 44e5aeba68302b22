"""`import memory.client` loads the client and the shared records, never the server: an agent
process that talks to a membank server does not pay for (or need) FastAPI."""

from __future__ import annotations

import subprocess
import sys

import pytest

SERVER_PACKAGES = ("fastapi", "starlette", "uvicorn")
PROBE = (
    "import sys, memory.client; "
    f"print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in {SERVER_PACKAGES!r})))"
)


@pytest.mark.process
def test_importing_the_client_loads_no_server_package() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "", f"import memory.client loaded: {done.stdout.strip()}"
