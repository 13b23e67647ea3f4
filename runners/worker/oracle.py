"""The format-check oracle an agent reaches on a Unix socket: POST /validate with its CSV.

It forwards the file to the portal's tasks/{id}/validate/ and answers {"valid": bool, "reason": str|null},
never a score. A Unix socket in the task's folder, not a TCP port, because the agent may have no network at
all (docker's network_mode="none" still sees a bind-mounted socket). Each call is also written to
logs/format_checks.jsonl, which travels with the task's archive.
"""

import email.parser
import email.policy
import json
import logging
import os
import socketserver
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from runners.worker.client import PortalRefused

log = logging.getLogger(__name__)

Forward = Callable[[bytes], dict[str, Any]]
MAX_BODY_BYTES = 1 << 30
MAX_SOCKET_PATH = 107


def csv_from_body(body: bytes, content_type: str) -> bytes | None:
    """The CSV: the raw body, or the multipart field `file`; None when a multipart body has no such field."""
    if not content_type.lower().startswith("multipart/form-data"):
        return body
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    for part in message.iter_parts():  # type: ignore[attr-defined]
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            return payload if isinstance(payload, bytes) else b""
    return None


class _Handler(BaseHTTPRequestHandler):
    server: "_UnixHTTPServer"
    protocol_version = "HTTP/1.1"

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._answer(HTTPStatus.METHOD_NOT_ALLOWED, {"valid": None, "reason": "POST your CSV to /validate"})

    def do_POST(self) -> None:
        if self.path.split("?", 1)[0].rstrip("/") != "/validate":
            self._answer(HTTPStatus.NOT_FOUND, {"valid": None, "reason": "POST your CSV to /validate"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self._answer(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"valid": None, "reason": "the file is too big"})
            return
        csv = csv_from_body(self.rfile.read(length), self.headers.get("Content-Type", ""))
        if csv is None:
            self._answer(HTTPStatus.BAD_REQUEST, {"valid": None, "reason": "the multipart body has no field 'file'"})
            return
        status, answer = self.server.oracle.check(csv)
        self._answer(status, answer)

    def address_string(self) -> str:
        return "agent"  # a Unix socket's peer has no address

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("oracle %s: " + format, self.server.oracle.socket_path, *args)


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    oracle: "OracleServer"


class OracleServer:
    """One task's oracle: start() binds the socket and serves in a thread, stop() closes and removes it."""

    def __init__(self, socket_path: Path, *, forward: Forward, log_path: Path) -> None:
        self.socket_path = socket_path
        self.log_path = log_path
        self._forward = forward
        self._server: _UnixHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._log_lock = threading.Lock()

    def check(self, csv: bytes) -> tuple[int, dict[str, Any]]:
        """Ask the portal; a failure to ask is answered 503 so the script can say "could not check"."""
        try:
            verdict = self._forward(csv)
            answer: dict[str, Any] = {"valid": bool(verdict.get("valid")), "reason": verdict.get("reason")}
            status = HTTPStatus.OK
        except PortalRefused as exc:
            if exc.status == HTTPStatus.TOO_MANY_REQUESTS:
                # Over the run's format-check limits: the agent reads why, and when it may ask again.
                answer, status = {"valid": None, "reason": exc.message}, HTTPStatus.TOO_MANY_REQUESTS
            else:
                log.warning("format check of %d bytes refused: %s", len(csv), exc)
                answer = {"valid": None, "reason": f"the format check could not be made: {exc}"}
                status = HTTPStatus.SERVICE_UNAVAILABLE
        except Exception as exc:
            log.warning("format check of %d bytes could not be made: %s", len(csv), exc)
            answer = {"valid": None, "reason": f"the format check could not be made: {exc}"}
            status = HTTPStatus.SERVICE_UNAVAILABLE
        self._record(answer, len(csv))
        return status, answer

    def _record(self, answer: dict[str, Any], size: int) -> None:
        line = json.dumps({"at": datetime.now(UTC).isoformat(), **answer, "bytes": size})
        with self._log_lock:
            try:
                # The logs folder is the agent's: a link it left there must not make the worker write elsewhere.
                fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
                with os.fdopen(fd, "a") as out:
                    out.write(line + "\n")
            except OSError as exc:
                log.warning("cannot write %s: %s", self.log_path, exc)

    def start(self) -> "OracleServer":
        if os.path.lexists(self.socket_path):
            self.socket_path.unlink()
        server = self._bind()
        server.oracle = self
        # Agents in containers may run as another user: anyone who can reach the folder may connect.
        os.chmod(self.socket_path, 0o666)
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.2}, name=f"oracle-{self.socket_path}", daemon=True
        )
        self._thread.start()
        return self

    def _bind(self) -> _UnixHTTPServer:
        """Bind the socket; a path over the 107 bytes AF_UNIX allows is reached through /proc/self/fd/<folder>,
        which only the worker needs (a container's agent sees the socket at /home/.oracle/oracle.sock)."""
        if len(os.fsencode(self.socket_path)) <= MAX_SOCKET_PATH:
            return _UnixHTTPServer(str(self.socket_path), _Handler)
        folder = os.open(self.socket_path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            return _UnixHTTPServer(f"/proc/self/fd/{folder}/{self.socket_path.name}", _Handler)
        finally:
            os.close(folder)

    def stop(self) -> None:
        """Idempotent."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if self._thread:
            self._thread.join(timeout=5)
        try:
            self.socket_path.unlink()
        except FileNotFoundError:
            pass
