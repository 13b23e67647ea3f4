"""The worker's HTTP client for the portal's worker API ($PORTAL_URL/api/v1/workers/).

The worker holds no database credentials: a worker token and this API are all it has. Connection errors and
5xx answers are passing failures and retried a few times; a 4xx is the server's decision and raised at once
as PortalRefused, so the caller can tell "skip this task" from "the portal is down".
"""

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests

log = logging.getLogger(__name__)

API_PREFIX = "/api/v1/workers/"


class PortalRefused(Exception):
    """The portal answered 4xx: code and message come from its error body."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class PortalUnavailable(Exception):
    """The portal could not be reached, or answered 5xx, on every try."""


def _refusal(response: requests.Response) -> PortalRefused:
    try:
        error = response.json().get("error") or {}
    except (ValueError, AttributeError):
        error = {}
    code = str(error.get("code") or f"http_{response.status_code}")
    message = str(error.get("message") or response.text[:500] or response.reason)
    return PortalRefused(response.status_code, code, message)


class PortalClient:
    def __init__(
        self,
        portal_url: str,
        token: str,
        *,
        timeout: tuple[float, float] = (10.0, 120.0),
        tries: int = 4,
        backoff_seconds: float = 1.0,
    ) -> None:
        self.portal_url = portal_url.rstrip("/")
        self.timeout = timeout
        self.tries = tries
        self.backoff_seconds = backoff_seconds
        self._token = token
        self._session = requests.Session()

    def _url(self, path: str) -> str:
        return f"{self.portal_url}{API_PREFIX}{path}"

    def _is_portal(self, url: str) -> bool:
        """Whether url points at the portal itself: only there does the worker token go."""
        ours, theirs = urlsplit(self.portal_url), urlsplit(url)
        return (ours.scheme, ours.netloc) == (theirs.scheme, theirs.netloc)

    def _request(
        self, method: str, url: str, *, send: Callable[[], dict[str, Any]] | None = None, **kwargs: Any
    ) -> requests.Response:
        """One call with bounded retries; send() builds fresh keyword arguments per try (files are re-opened)."""
        headers = {"Authorization": f"Worker {self._token}"} if self._is_portal(url) else {}
        last_error = ""
        for try_number in range(1, self.tries + 1):
            extra = send() if send else {}
            try:
                response = self._session.request(method, url, headers=headers, timeout=self.timeout, **kwargs, **extra)
            except (requests.ConnectionError, requests.Timeout) as exc:
                last_error = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code < 400:
                    return response
                if response.status_code < 500:
                    raise _refusal(response)
                last_error = f"HTTP {response.status_code}: {response.text[:200]}"
            finally:
                for handle in (extra.get("files") or {}).values():
                    if hasattr(handle[1], "close"):
                        handle[1].close()
            if try_number < self.tries:
                log.warning("%s %s failed (%s); try %d of %d", method, url, last_error, try_number, self.tries)
                time.sleep(self.backoff_seconds * 2 ** (try_number - 1))
        raise PortalUnavailable(f"{method} {url} failed {self.tries} times; last: {last_error}")

    def wait_until_up(self, *, timeout: float, poll_seconds: float = 0.5) -> str | None:
        """Wait, quietly, until the portal answers GET /healthz with anything (a 503 too: its web server is up).

        None once it answered; else, after timeout seconds, the last error, for a message that names it.
        """
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._session.get(f"{self.portal_url}/healthz", timeout=(min(5.0, timeout), 10.0))
                return None
            except (requests.ConnectionError, requests.Timeout) as exc:
                last_error = f"{type(exc).__name__}: {exc}"
            if time.monotonic() >= deadline:
                return last_error
            time.sleep(poll_seconds)

    def _post_json(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._request("POST", self._url(path), json=body).json()

    def register(self, capacity: dict[str, Any]) -> dict[str, Any]:
        """POST register/ -> {"worker": name, "heartbeat_seconds": float}."""
        return self._post_json("register/", capacity)

    def heartbeat(self, running: list[dict[str, Any]]) -> dict[str, Any]:
        """POST heartbeat/ -> {"cancel": [{"task_id", "attempt"}]}."""
        return self._post_json("heartbeat/", {"running": running})

    def claim(self, task_id: int, attempt: int, capability: str) -> dict[str, Any]:
        """POST tasks/{id}/claim/ with the queue message's capability -> the task's spec; 409 not_queued /
        does_not_fit and 403 capability_refused raise PortalRefused."""
        return self._post_json(f"tasks/{task_id}/claim/", {"attempt": attempt, "capability": capability})

    def download(self, url: str, destination: Path) -> None:
        """GET url (the public data's absolute url) streamed into destination."""
        response = self._request("GET", url, stream=True)
        with response, destination.open("wb") as out:
            for chunk in response.iter_content(chunk_size=1 << 20):
                out.write(chunk)

    def validate(self, task_id: int, attempt: int, csv: bytes) -> dict[str, Any]:
        """POST tasks/{id}/validate/ with the CSV -> {"valid": bool, "reason": str | None}."""

        def send() -> dict[str, Any]:
            return {"files": {"file": ("submission.csv", csv, "text/csv")}}

        url = self._url(f"tasks/{task_id}/validate/")
        return self._request("POST", url, data={"attempt": str(attempt)}, send=send).json()

    def finish(self, task_id: int, outcome: dict[str, Any], archive: Path | None) -> dict[str, Any]:
        """POST tasks/{id}/finish/: the outcome as JSON in a form field, the tar.gz as file `archive`."""

        def send() -> dict[str, Any]:
            if archive is None:
                return {"files": {"outcome": (None, json.dumps(outcome), "application/json")}}
            return {
                "files": {
                    "outcome": (None, json.dumps(outcome), "application/json"),
                    "archive": (archive.name, archive.open("rb"), "application/gzip"),
                }
            }

        response = self._request("POST", self._url(f"tasks/{task_id}/finish/"), send=send)
        return response.json() if response.content else {}
