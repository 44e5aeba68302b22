"""Token counts come from the cl100k file shipped in membank: offline, litellm never imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memory.providers import tokens


def test_known_cl100k_counts() -> None:
    # reference counts from litellm.token_counter(model="gpt-4", text=...)
    assert (
        tokens.count_tokens("Hello world, this is  a test\n of cl100k 12345 ünïcode 日本語") == 24
    )
    assert tokens.count_tokens("") == 0
    assert tokens.decode(tokens.encode("Rotterdam office, Weena 505.")) == (
        "Rotterdam office, Weena 505."
    )


def test_counting_needs_no_litellm_and_no_download(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "from memory.providers import tokens\n"
        "n = tokens.count_tokens('The tank ships within 5 working days by DHL.')\n"
        "print(json.dumps([n, 'litellm' in sys.modules]))\n"
    )
    # an empty tiktoken cache and no proxy: a download attempt would fail the run
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path), "HTTPS_PROXY": "http://0.0.0.0:9"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert json.loads(out.stdout) == [12, False]
