"""A local HTTP server speaking the OpenAI and Ollama wire formats, for provider tests.

It stands in for a real model server on 127.0.0.1 (no network): litellm reaches it through
its ordinary providers (`openai/...` with `OPENAI_BASE_URL`, `ollama/...` with
`OLLAMA_API_BASE`), so the whole request path (litellm, httpx, JSON on the wire) is real.
Every request is recorded; `reply`, `status` and `hold` script what it answers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Script:
    """What the server answers, and what it was asked."""

    reply: str = "Summary from the fake model."
    status: int = 200
    dims: int = 8
    hold: threading.Event | None = None
    """When set, completions wait for this event before answering (a server that hangs)."""
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)
    """OpenAI assistant messages (e.g. with `tool_calls`) answered first, one per chat
    completion, before `reply`."""

    def paths(self) -> list[str]:
        """Return the request paths in order."""
        return [path for path, _ in self.requests]


def _vector(text: str, dims: int) -> list[float]:
    """Return a deterministic vector for text (letters bucketed by code point)."""
    vector = [0.0] * dims
    for char in text.lower():
        vector[ord(char) % dims] += 1.0
    return vector


class _Handler(BaseHTTPRequestHandler):
    script: Script

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        """Stay quiet."""

    def do_POST(self) -> None:
        """Answer chat completions, Ollama generate/chat and embeddings."""
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        self.script.requests.append((self.path, body))
        if self.script.status != 200:
            self._send(self.script.status, {"error": {"message": "scripted failure"}})
            return
        if self.path.endswith("/embeddings"):
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [
                {"object": "embedding", "index": i, "embedding": _vector(text, self.script.dims)}
                for i, text in enumerate(inputs)
            ]
            usage = {"prompt_tokens": 1, "total_tokens": 1}
            self._send(
                200, {"object": "list", "data": data, "model": body["model"], "usage": usage}
            )
            return
        if self.script.hold is not None:
            self.script.hold.wait(timeout=30)
        self._send(200, self._completion(body))

    def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        reply = self.script.reply
        if self.path == "/api/generate":
            return {"model": body["model"], "response": reply, "done": True}
        if self.path == "/api/chat":
            message = {"role": "assistant", "content": reply}
            return {"model": body["model"], "message": message, "done": True}
        message = self.script.turns.pop(0) if self.script.turns else {"content": reply}
        message = {"role": "assistant", **message}
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", ""),
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def fake_llm_server(script: Script) -> Iterator[str]:
    """Serve `script` on 127.0.0.1 and a free port; yields the base URL (no trailing /)."""
    handler = type("Handler", (_Handler,), {"script": script})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        if script.hold is not None:
            script.hold.set()
        server.shutdown()
        server.server_close()


@contextmanager
def openai_endpoint(script: Script, patch: pytest.MonkeyPatch) -> Iterator[str]:
    """Serve `script` as litellm's OpenAI endpoint (`OPENAI_BASE_URL`, a test key), with real
    model requests allowed while it runs; yields the base URL (no trailing /)."""
    from memory.providers import llm

    patch.delenv(llm.BLOCK_ENV, raising=False)
    previous = llm.allow_model_requests(True)
    try:
        with fake_llm_server(script) as url:
            patch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
            patch.setenv("OPENAI_BASE_URL", f"{url}/v1")
            yield url
    finally:
        llm.allow_model_requests(previous)
