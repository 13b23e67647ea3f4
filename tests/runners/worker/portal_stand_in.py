"""A stand-in for the portal's worker API ($PORTAL_URL/api/v1/workers/), for the worker's own tests.

The worker side is framework-free and talks to the portal over HTTP only, so its tests run it against this
small real HTTP server (http.server in a thread) that answers as the design's worker API does: register,
heartbeat, claim, public data, validate, finish. The portal's implementation of that API has its own tests
elsewhere (tests/runners/); this one only records what the worker sent and answers what a test set up.
"""

import email.parser
import email.policy
import hashlib
import io
import json
import tarfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = "worker-token-for-tests"


def capability_of(task_id: int, attempt: int = 1) -> str:
    """What the stand-in expects a claim to carry: the portal makes an HMAC, the stand-in a plain name."""
    return f"capability-{task_id}-{attempt}"


def public_tar(files: dict[str, bytes]) -> bytes:
    """A tar.gz holding files (name -> bytes), as the portal serves a competition's public folder."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def parse_multipart(body: bytes, content_type: str) -> dict[str, bytes]:
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    fields: dict[str, bytes] = {}
    for part in message.iter_parts():  # type: ignore[attr-defined]
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        fields[str(name)] = payload if isinstance(payload, bytes) else b""
    return fields


@dataclass
class Finish:
    task_id: int
    outcome: dict[str, Any]
    archive: bytes | None


@dataclass
class StandInPortal:
    """State a test sets up (specs, refusals, public data, cancels) and what the worker sent."""

    url: str = ""
    specs: dict[int, dict[str, Any]] = field(default_factory=dict)
    # Claim answers before the spec: a list of (status, code) popped one per claim.
    refusals: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    public_data: dict[str, bytes] = field(default_factory=dict)
    cancels: list[dict[str, int]] = field(default_factory=list)
    verdict: Callable[[bytes], dict[str, Any]] = lambda csv: {"valid": csv.startswith(b"id,"), "reason": None}
    heartbeat_seconds: float = 0.2
    fail_next: int = 0  # answer this many requests with 503 first
    registers: list[dict[str, Any]] = field(default_factory=list)
    heartbeats: list[dict[str, Any]] = field(default_factory=list)
    claims: list[tuple[int, int]] = field(default_factory=list)
    claim_capabilities: list[str] = field(default_factory=list)
    downloads: list[str] = field(default_factory=list)
    validations: list[tuple[int, str, bytes]] = field(default_factory=list)
    finishes: list[Finish] = field(default_factory=list)
    finished: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add_task(
        self, task_id: int, *, competition: str = "demo-comp", files: dict[str, bytes] | None = None, **spec: Any
    ) -> dict[str, Any]:
        data = public_tar(files or {"sample_submission.csv": b"id,target\n1,0\n2,0\n"})
        self.public_data[competition] = data
        full = {
            "task_id": task_id,
            "attempt": 1,
            "hosted_run_id": 7,
            "competition_id": competition,
            "seed": 0,
            "image": "example-agent:latest",
            "env": {},
            "secret_names": [],
            "time_limit_seconds": 60.0,
            "gpus": 0,
            "cpus": 1.0,
            "memory_gb": 1.0,
            "shm_gb": 1.0,
            "network": False,
            "max_output_bytes": 10_000_000,
            "public_data": {
                "url": f"{self.url}/api/v1/workers/competitions/{competition}/public-data/",
                "sha256": hashlib.sha256(data).hexdigest(),
                "bytes": len(data),
            },
        }
        full.update(spec)
        self.specs[task_id] = full
        return full

    def wait_finished(self, count: int = 1, timeout: float = 60) -> list[Finish]:
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.finishes) >= count:
                    return list(self.finishes)
            time.sleep(0.05)
        raise AssertionError(f"{len(self.finishes)} finish calls after {timeout}s, expected {count}")


def _handler(portal: StandInPortal) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, body: Any, content_type: str = "application/json") -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, code: str, message: str) -> None:
            self._send(status, {"error": {"code": code, "message": message, "details": {}}})

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _authorized(self) -> bool:
            with portal.lock:
                if portal.fail_next > 0:
                    portal.fail_next -= 1
                    self._body()
                    self._error(503, "unavailable", "try again")
                    return False
            if self.headers.get("Authorization") != f"Worker {TOKEN}":
                self._body()
                self._error(401, "not_authenticated", "worker token missing or wrong")
                return False
            return True

        def do_GET(self) -> None:
            if not self._authorized():
                return
            parts = self.path.strip("/").split("/")  # api v1 workers competitions <slug> public-data
            if parts[3:4] == ["competitions"] and parts[5:] == ["public-data"]:
                with portal.lock:
                    portal.downloads.append(parts[4])
                data = portal.public_data.get(parts[4])
                if data is None:
                    self._error(404, "not_found", "no such competition")
                else:
                    self._send(200, data, "application/gzip")
                return
            self._error(404, "not_found", self.path)

        def do_POST(self) -> None:
            if not self._authorized():
                return
            body = self._body()
            parts = self.path.strip("/").split("/")[3:]
            if parts == ["register"]:
                with portal.lock:
                    portal.registers.append(json.loads(body))
                self._send(200, {"worker": "gpu-test", "heartbeat_seconds": portal.heartbeat_seconds})
            elif parts == ["heartbeat"]:
                with portal.lock:
                    portal.heartbeats.append(json.loads(body))
                    cancels, portal.cancels = portal.cancels, []
                self._send(200, {"cancel": cancels})
            elif len(parts) == 3 and parts[0] == "tasks":
                self._task(int(parts[1]), parts[2], body)
            else:
                self._error(404, "not_found", self.path)

        def _task(self, task_id: int, action: str, body: bytes) -> None:
            if action == "claim":
                claim = json.loads(body)
                attempt = int(claim["attempt"])
                with portal.lock:
                    portal.claims.append((task_id, attempt))
                    portal.claim_capabilities.append(str(claim.get("capability")))
                    refusals = portal.refusals.get(task_id) or []
                    refusal = refusals.pop(0) if refusals else None
                if claim.get("capability") != capability_of(task_id, attempt):
                    self._error(403, "capability_refused", "the claim does not carry the message's capability")
                elif refusal:
                    self._error(refusal[0], refusal[1], f"claim refused: {refusal[1]}")
                elif task_id not in portal.specs:
                    self._error(409, "not_queued", "no such task")
                else:
                    self._send(200, portal.specs[task_id])
            elif action == "validate":
                fields = parse_multipart(body, self.headers.get("Content-Type", ""))
                with portal.lock:
                    portal.validations.append((task_id, fields["attempt"].decode(), fields["file"]))
                self._send(200, portal.verdict(fields["file"]))
            elif action == "finish":
                fields = parse_multipart(body, self.headers.get("Content-Type", ""))
                with portal.lock:
                    portal.finishes.append(Finish(task_id, json.loads(fields["outcome"]), fields.get("archive")))
                portal.finished.set()
                self._send(200, {"status": "ok"})
            else:
                self._error(404, "not_found", action)

    return Handler


class StandInServer:
    def __init__(self, port: int = 0) -> None:
        self.portal = StandInPortal()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self.portal))
        self._server.daemon_threads = True
        self.portal.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)

    def __enter__(self) -> StandInPortal:
        self._thread.start()
        return self.portal

    def __exit__(self, *_: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
