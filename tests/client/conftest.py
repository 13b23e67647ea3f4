"""The client is one file teams download, not a package: load it from its path, and serve it a tiny
portal (http.server on 127.0.0.1, an ephemeral port, one thread per request) that records what it gets."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

CLIENT = Path(__file__).resolve().parents[2] / "client" / "mleportal.py"
KEEP_BODY = 1024 * 1024  # bodies up to this size are kept whole; bigger ones only hashed


def load_client() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mleportal", CLIENT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["mleportal"] = module  # so that it is imported once, like an installed module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def mleportal() -> ModuleType:
    return load_client()


class FakePortal:
    """Answers scripted per (method, path): a list of (status, JSON body) or (status, JSON body, headers) served
    in order, the last one repeated. Records every request: headers, body length, SHA-256, first and last 4 KiB,
    small bodies."""

    def __init__(self) -> None:
        self.answers: dict[tuple[str, str], list[tuple[int, Any]]] = {}
        self.requests: list[dict[str, Any]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def answer(self, method: str, path: str, *answers: tuple) -> None:
        self.answers[(method, path)] = list(answers)

    def _next(self, method: str, path: str) -> tuple:
        queue = self.answers.get((method, path)) or [(404, {"error": {"code": "not_found", "message": "no such"}})]
        return queue.pop(0) if len(queue) > 1 else queue[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        portal = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                portal.requests.append({"method": "GET", "path": self.path, "headers": dict(self.headers)})
                self._reply(*portal._next("GET", self.path))

            def do_POST(self) -> None:
                left = int(self.headers["Content-Length"])
                digest, length, head, tail, kept = hashlib.sha256(), 0, b"", b"", []
                while left:
                    chunk = self.rfile.read(min(left, 1024 * 1024))
                    if not chunk:
                        break
                    left -= len(chunk)
                    length += len(chunk)
                    digest.update(chunk)
                    head = head or chunk[:4096]
                    tail = (tail + chunk)[-4096:]
                    if length <= KEEP_BODY:
                        kept.append(chunk)
                portal.requests.append(
                    {
                        "method": "POST",
                        "path": self.path,
                        "headers": dict(self.headers),
                        "length": length,
                        "sha256": digest.hexdigest(),
                        "head": head,
                        "tail": tail,
                        "body": b"".join(kept) if length <= KEEP_BODY else None,
                    }
                )
                self._reply(*portal._next("POST", self.path))

            def _reply(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json" if not isinstance(body, bytes) else "text/html")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

        return Handler


@pytest.fixture
def portal():
    fake = FakePortal()
    fake.thread.start()
    try:
        yield fake
    finally:
        fake.server.shutdown()
        fake.server.server_close()
