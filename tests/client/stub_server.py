"""A scripted HTTP server on 127.0.0.1 for what a healthy membank server does not do on
demand (429 with Retry-After, 503, a job that never ends, cursor pages): it answers each
request with the next scripted reply (the last one again once the script is used up) and
records what it was sent."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Reply:
    """One scripted answer."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    """One request the stub got."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class Stub:
    """The running stub: its URL, its script, and the requests it got, in order."""

    url: str
    script: list[Reply]
    seen: list[Seen] = field(default_factory=list)


def _handler(stub: Stub) -> type[BaseHTTPRequestHandler]:
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            split = urlsplit(self.path)
            with lock:
                stub.seen.append(
                    Seen(
                        method=self.command,
                        path=split.path,
                        query=parse_qs(split.query),
                        headers={k.lower(): v for k, v in self.headers.items()},
                        body=json.loads(raw) if raw else None,
                    )
                )
                reply = stub.script.pop(0) if len(stub.script) > 1 else stub.script[0]
            data = b"" if reply.body is None else json.dumps(reply.body).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = _answer

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    return Handler


@contextmanager
def stub_server(*script: Reply) -> Iterator[Stub]:
    """Serve `script` on 127.0.0.1 (a port the kernel picks) until the block ends."""
    stub = Stub(url="", script=list(script))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stub))
    stub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def error(status: int, code: str, message: str, **headers: str) -> Reply:
    """Return a reply with the API's error envelope."""
    return Reply(status, {"error": {"code": code, "message": message}}, headers)
