#!/usr/bin/env python3
"""mleportal: make MLE-bench run bundles and upload them to an MLE portal.

One file, standard library only, Python 3.9 or newer: download it and run it, nothing to install.

    python3 mleportal.py make-bundle runs/2024-08-01T10-00-00-GMT_run-group_aide --out aide.tar.gz \\
        --agent-name AIDE --llm o1-preview --split split75 --gpu A10:24:1
    export MLEPORTAL_TOKEN=...            # from the portal's Tokens page
    python3 mleportal.py upload aide.tar.gz --url https://portal.example.org

    python3 mleportal.py verify https://portal.example.org/leaderboard/entries/12/   # no token needed

Exit codes of verify: 0 every number agrees, 1 something differs, 2 something could not be checked.
Exit codes of the other commands: 0 accepted (in_review or published), 1 local problem, 2 bad command line,
3 rejected, 4 failed, 5 bundle or request refused (HTTP 400), 6 token refused (401/403), 7 too large (413),
8 over quota (429), 9 server error (5xx), 10 network error, 11 gave up waiting (--timeout).
"""

from __future__ import annotations

import argparse
import base64
import concurrent.futures
import dataclasses
import hashlib
import http.client
import importlib
import io
import json
import os
import pathlib
import posixpath
import re
import secrets
import socket
import ssl
import sys
import tarfile
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from typing import IO, Any

__version__ = "1.0"

EXIT_OK = 0
EXIT_LOCAL = 1
EXIT_USAGE = 2  # argparse's own
EXIT_REJECTED = 3
EXIT_FAILED = 4
EXIT_BAD_REQUEST = 5
EXIT_AUTH = 6
EXIT_TOO_LARGE = 7
EXIT_QUOTA = 8
EXIT_SERVER = 9
EXIT_NETWORK = 10
EXIT_TIMEOUT = 11

ACCEPTED = ("in_review", "published")
FINAL = {"in_review": EXIT_OK, "published": EXIT_OK, "rejected": EXIT_REJECTED, "failed": EXIT_FAILED}
SPLITS = ("low", "medium", "high", "split75")
TIERS = ("low", "medium", "high", "all")
DISCLOSURE_FLAGS = ("test_set_feedback", "uses_known_leakage", "human_assistance", "solutions_in_prompt")
CHUNK = 1024 * 1024
MB = 1000 * 1000
# Answers that are worth waiting out while polling: the portal restarting or shedding load.
TRANSIENT_STATUSES = (429, 502, 503, 504)


class ClientError(Exception):
    """A failure with the exit code it maps to and a message for the person at the terminal."""

    def __init__(
        self,
        exit_code: int,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.message = message
        self.status = status  # the HTTP status, when the portal answered
        self.retry_after = retry_after


# --- talking to the portal -----------------------------------------------------------------------------


class Portal:
    def __init__(self, url: str, token: str, *, timeout: float = 120.0) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ClientError(EXIT_LOCAL, f"--url must look like https://portal.example.org, got {url!r}")
        if not token:
            raise ClientError(EXIT_LOCAL, "no token: pass --token or set MLEPORTAL_TOKEN")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.base_path = parts.path.rstrip("/")
        self.token = token
        self.timeout = timeout

    def url(self, path: str) -> str:
        default = 443 if self.scheme == "https" else 80
        port = "" if self.port == default else f":{self.port}"
        return f"{self.scheme}://{self.host}{port}{self.base_path}{path}"

    def connect(self) -> http.client.HTTPConnection:
        proxy = self._proxy()
        host, port = proxy[:2] if proxy else (self.host, self.port)
        if self.scheme == "https":
            connection: http.client.HTTPConnection = http.client.HTTPSConnection(
                host, port, timeout=self.timeout, context=ssl.create_default_context()
            )
        else:
            connection = http.client.HTTPConnection(host, port, timeout=self.timeout)
        if proxy:
            connection.set_tunnel(self.host, self.port, headers=proxy[2])
        return connection

    def _proxy(self) -> tuple[str, int, dict[str, str]] | None:
        # http.client ignores HTTPS_PROXY; teams behind a proxy still need to upload. Loopback never goes
        # through one.
        if self.host in ("localhost", "::1") or self.host.startswith("127."):
            return None
        proxy_url = urllib.request.getproxies().get(self.scheme)
        if not proxy_url or urllib.request.proxy_bypass(self.host):
            return None
        proxy = urllib.parse.urlsplit(proxy_url if "//" in proxy_url else f"http://{proxy_url}")
        headers = {}
        if proxy.username:
            credentials = f"{urllib.parse.unquote(proxy.username)}:{urllib.parse.unquote(proxy.password or '')}"
            headers["Proxy-Authorization"] = "Basic " + base64.b64encode(credentials.encode()).decode()
        return proxy.hostname or "", proxy.port or 8080, headers

    def headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Token {self.token}",
            "Accept": "application/json",
            "User-Agent": f"mleportal/{__version__} (Python {sys.version_info[0]}.{sys.version_info[1]})",
        }

    def get_json(self, path: str) -> dict[str, Any]:
        connection = self.connect()
        try:
            connection.request("GET", self.base_path + path, headers=self.headers())
            response = connection.getresponse()
            return read_answer(response, what=f"GET {path}")
        except (OSError, http.client.HTTPException) as exc:
            raise ClientError(EXIT_NETWORK, f"cannot reach {self.url(path)}: {describe(exc)}") from exc
        finally:
            connection.close()

    def post_json(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        data = json.dumps(body).encode("utf-8")
        headers = {**self.headers(), "Content-Type": "application/json", "Content-Length": str(len(data))}
        connection = self.connect()
        try:
            connection.request("POST", self.base_path + path, body=data, headers=headers)
            response = connection.getresponse()
            return read_answer(response, what=f"POST {path}")
        except (OSError, http.client.HTTPException) as exc:
            raise ClientError(EXIT_NETWORK, f"cannot reach {self.url(path)}: {describe(exc)}") from exc
        finally:
            connection.close()


def read_answer(response: http.client.HTTPResponse, *, what: str) -> dict[str, Any]:
    """The JSON body of a 2xx answer, or a ClientError carrying the server's own error message."""
    body = response.read()
    try:
        data = json.loads(body.decode("utf-8")) if body else {}
    except ValueError:
        data = None
    if 200 <= response.status < 300 and isinstance(data, dict):
        return data
    if 200 <= response.status < 300:
        raise ClientError(EXIT_SERVER, f"{what}: the portal answered {response.status} without a JSON object")
    if 300 <= response.status < 400:
        raise ClientError(
            EXIT_BAD_REQUEST,
            f"{what}: the portal redirects to {response.getheader('Location')}; use that address as --url",
            status=response.status,
        )
    raise ClientError(
        exit_code_for(response.status),
        f"{what}: HTTP {response.status} {response.reason}: {error_text(data, body)}",
        status=response.status,
        retry_after=retry_after(response),
    )


def error_text(data: Any, body: bytes) -> str:
    """The portal's {"error": {"code", "message", "details"}} as one readable line."""
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and error.get("message"):
        text = str(error["message"])
        if error.get("code"):
            text += f" [{error['code']}]"
        if error.get("details"):
            text += f"\n  details: {json.dumps(error['details'], ensure_ascii=False)}"
        return text
    if isinstance(data, dict) and "detail" in data:
        return str(data["detail"])
    # Not the portal's shape (a proxy's HTML page, say): show its start, which usually says enough.
    snippet = " ".join(body.decode("utf-8", "replace").split())[:300]
    return snippet or "(no message)"


def exit_code_for(status: int) -> int:
    if status in (401, 403):
        return EXIT_AUTH
    if status == 413:
        return EXIT_TOO_LARGE
    if status == 429:
        return EXIT_QUOTA
    if status >= 500:
        return EXIT_SERVER
    return EXIT_BAD_REQUEST


def retry_after(response: http.client.HTTPResponse) -> float | None:
    value = response.getheader("Retry-After")
    try:
        return float(value) if value else None
    except ValueError:
        return None


def describe(exc: BaseException) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"the server's TLS certificate is not trusted ({exc.verify_message})"
    if isinstance(exc, socket.timeout):
        return "timed out"
    return str(exc) or type(exc).__name__


# --- upload --------------------------------------------------------------------------------------------


class Progress:
    """A progress line on stderr: a redrawn bar on a terminal, a line per 10% in a log file."""

    def __init__(self, total: int, *, stream: IO[str], label: str = "upload") -> None:
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream
        self.label = label
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.started = time.monotonic()
        self.last_draw = 0.0
        self.last_tenth = -1

    def update(self, size: int) -> None:
        self.done += size
        now = time.monotonic()
        tenth = self.done * 10 // self.total
        if self.tty and (now - self.last_draw >= 0.1 or self.done >= self.total):
            self.stream.write("\r" + self.line(now))
            self.stream.flush()
            self.last_draw = now
        elif not self.tty and tenth > self.last_tenth:
            self.stream.write(self.line(now) + "\n")
            self.last_tenth = tenth

    def line(self, now: float) -> str:
        fraction = min(self.done / self.total, 1.0)
        bar = "#" * int(fraction * 30)
        speed = self.done / max(now - self.started, 1e-6) / MB
        done, total = self.done / MB, self.total / MB
        return f"{self.label} [{bar:<30}] {fraction * 100:5.1f}%  {done:,.1f}/{total:,.1f} MB  {speed:,.1f} MB/s"

    def finish(self) -> None:
        if self.tty:
            self.stream.write("\n")
        self.stream.flush()


def multipart_parts(path: str, boundary: str) -> tuple[bytes, bytes]:
    """The bytes before and after the file in a multipart/form-data body with one field, ``bundle``."""
    name = os.path.basename(path).replace('"', "%22").replace("\r", "").replace("\n", "")
    if path.endswith(".zip"):
        content_type = "application/zip"
    elif path.endswith((".tar.gz", ".tgz")):
        content_type = "application/gzip"
    else:
        content_type = "application/octet-stream"
    head = (
        f"--{boundary}\r\n"
        f'Content-Disposition: form-data; name="bundle"; filename="{name}"\r\n'
        f"Content-Type: {content_type}\r\n\r\n"
    ).encode()
    return head, f"\r\n--{boundary}--\r\n".encode("ascii")


def upload(portal: Portal, path: str, *, progress: Callable[[int], None]) -> dict[str, Any]:
    """POST the bundle as multipart field ``bundle``, streamed from disk in 1 MiB chunks, never held whole."""
    boundary = f"mleportal-{secrets.token_hex(16)}"
    head, tail = multipart_parts(path, boundary)
    size = os.path.getsize(path)
    connection = portal.connect()
    try:
        connection.putrequest("POST", portal.base_path + "/api/v1/submissions/", skip_accept_encoding=True)
        for key, value in portal.headers().items():
            connection.putheader(key, value)
        connection.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
        connection.putheader("Content-Length", str(len(head) + size + len(tail)))
        connection.endheaders()
        sent_all = _send_body(connection, path, head=head, tail=tail, progress=progress)
        try:
            response = connection.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            if not sent_all:
                raise ClientError(
                    EXIT_NETWORK, f"the portal closed the connection during the upload: {describe(exc)}"
                ) from exc
            raise
        return read_answer(response, what="upload")
    except (OSError, http.client.HTTPException) as exc:
        raise ClientError(
            EXIT_NETWORK, f"cannot upload to {portal.url('/api/v1/submissions/')}: {describe(exc)}"
        ) from exc
    finally:
        connection.close()


def _send_body(
    connection: http.client.HTTPConnection,
    path: str,
    *,
    head: bytes,
    tail: bytes,
    progress: Callable[[int], None],
) -> bool:
    try:
        connection.send(head)
        with open(path, "rb") as bundle:
            for chunk in iter(lambda: bundle.read(CHUNK), b""):
                connection.send(chunk)
                progress(len(chunk))
        connection.send(tail)
        return True
    except (BrokenPipeError, ConnectionResetError):
        # The portal may refuse early (too large, bad token) and close; its answer is still worth reading.
        return False


def wait(portal: Portal, submission_id: str, *, interval: float, timeout: float, stream: IO[str]) -> dict[str, Any]:
    """Poll the submission until its status is final, showing status and progress on ``stream``."""
    path = f"/api/v1/submissions/{urllib.parse.quote(str(submission_id), safe='')}/"
    started = time.monotonic()
    tty = hasattr(stream, "isatty") and stream.isatty()
    shown = ""
    failures = 0
    while True:
        try:
            submission = portal.get_json(path)
            failures = 0
        except ClientError as exc:
            transient = exc.exit_code == EXIT_NETWORK or exc.status in TRANSIENT_STATUSES
            failures += 1
            if not transient or failures > 10:
                raise
            newline = "\n" if tty else ""  # end the redrawn status line first
            stream.write(f"{newline}still waiting ({exc.message.splitlines()[0]})\n")
            time.sleep(exc.retry_after or min(interval * 2**failures, 60))
            continue
        status = str(submission.get("status"))
        progress = submission.get("progress")
        progress = progress if isinstance(progress, dict) else {}
        line = f"status: {status}"
        if progress.get("total"):
            line += f"  {progress.get('done', 0)}/{progress['total']}"
        if line != shown:
            stream.write(("\r" + line.ljust(len(shown))) if tty else line + "\n")
            stream.flush()
            shown = line
        if status in FINAL:
            if tty:
                stream.write("\n")
            return submission
        if timeout and time.monotonic() - started > timeout:
            raise ClientError(
                EXIT_TIMEOUT,
                f"gave up after {timeout:g} s; the submission is still {status}. Check later with "
                f"`mleportal.py status {submission_id}` or at {page_url(portal, submission)}",
            )
        time.sleep(interval)


def page_url(portal: Portal, submission: dict[str, Any]) -> str:
    """The submission's page, the one a person opens in a browser: the portal's page_url, or (from a portal
    that does not send one) /submissions/<id>/ on the --url given."""
    page = submission.get("page_url")
    if isinstance(page, str) and page.startswith(("http://", "https://")):
        return page
    return portal.url(f"/submissions/{urllib.parse.quote(str(submission.get('id')), safe='')}/")


def render(submission: dict[str, Any], *, page: str) -> str:
    """Status, per-tier figures (complete and padded any-medal mean ± SEM, seeds), the flags, and last the
    submission's page (to open in a browser; the API's address is not for people)."""
    lines = [f"submission {submission.get('id')}: {submission.get('status')}"]
    if submission.get("status_reason"):
        lines.append(f"reason: {submission['status_reason']}")
    if "comparable" in submission:
        lines.append(f"comparable: {'yes' if submission['comparable'] else 'no'}")
    aggregates = submission.get("aggregates") or {}
    if aggregates:
        # Complete seeds are what a comparable entry is ranked on; padded ones fill missing runs with
        # failures (MLE-bench's --pad-missing). Both are shown so neither is mistaken for the other.
        lines += ["", f"{'tier':<8} {'any medal %, complete':>22} {'seeds':>5}   {'padded':>22} {'seeds':>5}"]
        for tier in [t for t in TIERS if t in aggregates] + sorted(set(aggregates) - set(TIERS)):
            figures = aggregates[tier] or {}
            complete, padded = figures.get("complete"), figures.get("padded")
            lines.append(
                f"{tier:<8} {_mean_sem(complete):>22} {_seeds(complete):>5}   "
                f"{_mean_sem(padded):>22} {_seeds(padded):>5}"
            )
    flags = submission.get("flags") or []
    lines += ["", f"flags: {len(flags)}" if flags else "flags: none"]
    for flag in flags:
        tiers = ",".join(flag.get("tiers") or [])
        line = f"  [{flag.get('severity')}] {flag.get('code')}" + (f" ({tiers})" if tiers else "")
        lines.append(f"{line}: {flag.get('message', '')}")
        if flag.get("resolution"):
            lines.append(f"      resolution: {flag['resolution']}")
    lines += ["", f"page: {page}"]
    return "\n".join(lines)


def _mean_sem(figures: Any) -> str:
    medal = figures.get("any_medal") if isinstance(figures, dict) else None
    if not isinstance(medal, dict) or medal.get("mean") is None:
        return "-"
    return f"{float(medal['mean']):.2f} ± {float(medal.get('sem') or 0):.2f}"


def _seeds(figures: Any) -> str:
    return str(figures.get("seeds", "-")) if isinstance(figures, dict) else "-"


def finish(portal: Portal, submission: dict[str, Any]) -> int:
    print(render(submission, page=page_url(portal, submission)))
    code = FINAL.get(str(submission.get("status")), EXIT_OK)
    if code != EXIT_OK:
        print(f"error: the submission was {submission.get('status')}", file=sys.stderr)
    return code


def command_upload(args: argparse.Namespace) -> int:
    if not os.path.isfile(args.bundle):
        raise ClientError(EXIT_LOCAL, f"no such file: {args.bundle}")
    portal = Portal(args.url, args.token, timeout=args.http_timeout)
    bar = Progress(os.path.getsize(args.bundle), stream=sys.stderr)
    answer = upload(portal, args.bundle, progress=bar.update)
    bar.finish()
    if "id" not in answer:
        raise ClientError(EXIT_SERVER, f"the portal took the upload but sent no submission id: {answer}")
    print(
        f"uploaded: submission {answer.get('id')} is {answer.get('status')}; its page: {page_url(portal, answer)}",
        file=sys.stderr,
    )
    if args.no_wait:
        print(json.dumps(answer))
        return EXIT_OK
    submission = wait(portal, str(answer["id"]), interval=args.poll_interval, timeout=args.timeout, stream=sys.stderr)
    return finish(portal, submission)


def command_status(args: argparse.Namespace) -> int:
    portal = Portal(args.url, args.token, timeout=args.http_timeout)
    if args.wait:
        return finish(
            portal, wait(portal, args.id, interval=args.poll_interval, timeout=args.timeout, stream=sys.stderr)
        )
    path = f"/api/v1/submissions/{urllib.parse.quote(args.id, safe='')}/"
    submission = portal.get_json(path)
    print(render(submission, page=page_url(portal, submission)))
    return FINAL.get(str(submission.get("status")), EXIT_OK)


# --- register ------------------------------------------------------------------------------------------


def command_register(args: argparse.Namespace) -> int:
    """Register a run group before running it: the portal answers an id, a nonce and a deadline."""
    if args.seeds < 1:
        raise ClientError(EXIT_LOCAL, f"--seeds must be 1 or more, got {args.seeds}")
    if not args.split and not args.competitions:
        raise ClientError(EXIT_LOCAL, "say what you will run: --split low (or medium, high, split75) or --competitions")
    body: dict[str, Any] = {"agent": {"name": args.agent, "version": args.version}, "seeds": args.seeds}
    if args.split:
        body["split"] = args.split
    if args.competitions:
        body["competitions"] = [c.strip() for c in args.competitions.split(",") if c.strip()]
    if args.image:
        body["image"] = args.image
    portal = Portal(args.url, args.token, timeout=args.http_timeout)
    answer = portal.post_json("/api/v1/registrations/", body)
    print(f"id: {answer.get('id')}")
    print(f"nonce: {answer.get('nonce')}")
    print(f"deadline: {answer.get('deadline')}")
    print(
        f'write the nonce into each run\'s log before it writes its submission, and put "registration": '
        f"{answer.get('id')} in the bundle's manifest.json; all {args.seeds} seeds of every registered competition "
        "count, a missing one as a failure",
        file=sys.stderr,
    )
    return EXIT_OK


# --- make-bundle ---------------------------------------------------------------------------------------

RUN_PARTS = ("submission", "run.log", "logs", "code")
_WARNINGS_SHOWN = 20


class BundleContents:
    """The files a bundle will hold, as (path on disk, name in the archive), and what was left out."""

    def __init__(self) -> None:
        self.files: list[tuple[str, str]] = []
        self.groups: list[str] = []
        self.runs: list[tuple[str, str]] = []  # (competition id, archive folder)
        self.no_submission = 0
        self.reports = 0
        self.skipped: list[str] = []


def is_run_dir(path: str) -> bool:
    competition_id, _, run = os.path.basename(path).rpartition("_")
    return bool(competition_id and run) and any(os.path.lexists(os.path.join(path, p)) for p in RUN_PARTS)


def is_run_group(path: str) -> bool:
    entries = sorted(os.scandir(path), key=lambda e: e.name)
    return any(
        ((e.name == "metadata.json" or _is_report(e.name)) and e.is_file(follow_symlinks=False))
        or (e.is_dir(follow_symlinks=False) and is_run_dir(e.path))
        for e in entries
    )


def _is_report(name: str) -> bool:
    return "grading_report" in name and name.endswith(".json")


def find_run_groups(runs_dir: str) -> list[tuple[str, str]]:
    """(name, path) of the run groups in ``runs_dir``: the folder itself, or the run groups inside it."""
    if not os.path.isdir(runs_dir):
        raise ClientError(EXIT_LOCAL, f"no such folder: {runs_dir}")
    runs_dir = os.path.abspath(runs_dir)
    if is_run_group(runs_dir):
        return [(os.path.basename(runs_dir), runs_dir)]
    groups = [
        (entry.name, entry.path)
        for entry in sorted(os.scandir(runs_dir), key=lambda e: e.name)
        if entry.is_dir(follow_symlinks=False) and is_run_group(entry.path)
    ]
    if not groups:
        raise ClientError(
            EXIT_LOCAL,
            f"no run group in {runs_dir}: expected MLE-bench's runs/<run_group>/ with run directories "
            "<competition_id>_<run_id>/ (holding submission/, run.log, logs/ or code/), metadata.json or a "
            "*grading_report*.json; or a folder of such run groups",
        )
    return groups


def collect(groups: list[tuple[str, str]]) -> BundleContents:
    contents = BundleContents()
    for group, path in groups:
        contents.groups.append(group)
        prefix = f"runs/{group}"
        entries = sorted(os.scandir(path), key=lambda e: e.name)
        reports = [e.name for e in entries if _is_report(e.name) and e.is_file(follow_symlinks=False)]
        if len(reports) > 1:
            raise ClientError(
                EXIT_LOCAL,
                f"{path} holds {len(reports)} grading reports ({', '.join(reports)}); MLE-bench and the "
                "portal allow one per run group: keep one, or move runs into separate run groups",
            )
        contents.reports += len(reports)
        for entry in entries:
            name = f"{prefix}/{entry.name}"
            if entry.is_symlink():
                contents.skipped.append(f"{name} (symbolic link to {os.readlink(entry.path)})")
            elif entry.is_file() and (entry.name == "metadata.json" or entry.name in reports):
                contents.files.append((entry.path, name))
            elif entry.is_dir() and is_run_dir(entry.path):
                _collect_run(entry.path, name, contents)
            else:
                contents.skipped.append(f"{name} (not a run directory, metadata.json or grading report)")
    return contents


def _collect_run(path: str, name: str, contents: BundleContents) -> None:
    contents.runs.append((os.path.basename(path).rpartition("_")[0], name))
    submission = os.path.join(path, "submission", "submission.csv")
    if os.path.islink(submission):
        contents.skipped.append(
            f"{name}/submission/submission.csv (symbolic link to {os.readlink(submission)}; "
            "copy the file in, or the run counts as one without a submission)"
        )
        contents.no_submission += 1
    elif os.path.isfile(submission):
        contents.files.append((submission, f"{name}/submission/submission.csv"))
    else:
        contents.no_submission += 1
    run_log = os.path.join(path, "run.log")
    if os.path.islink(run_log):
        contents.skipped.append(f"{name}/run.log (symbolic link to {os.readlink(run_log)})")
    elif os.path.isfile(run_log):
        contents.files.append((run_log, f"{name}/run.log"))
    for part in ("logs", "code"):
        for disk_path, relative in _walk(os.path.join(path, part), contents, f"{name}/{part}"):
            contents.files.append((disk_path, f"{name}/{part}/{relative}"))


def _walk(top: str, contents: BundleContents, shown_as: str) -> Iterator[tuple[str, str]]:
    """Regular files under ``top``; links and special files are skipped and noted, never followed."""
    if os.path.islink(top):
        contents.skipped.append(f"{shown_as} (symbolic link to {os.readlink(top)})")
        return
    if not os.path.isdir(top):
        return
    for folder, dirs, files in os.walk(top):
        dirs.sort()
        for name in list(dirs):
            full = os.path.join(folder, name)
            if os.path.islink(full):  # os.walk would list it but not enter it; say so
                contents.skipped.append(
                    f"{shown_as}/{os.path.relpath(full, top)} (symbolic link to {os.readlink(full)})"
                )
        for name in sorted(files):
            full = os.path.join(folder, name)
            relative = os.path.relpath(full, top).replace(os.sep, "/")
            if os.path.islink(full):
                contents.skipped.append(f"{shown_as}/{relative} (symbolic link to {os.readlink(full)})")
            elif not os.path.isfile(full):
                contents.skipped.append(f"{shown_as}/{relative} (not a regular file)")
            else:
                yield full, relative


def build_manifest(args: argparse.Namespace, contents: BundleContents) -> dict[str, Any]:
    if not args.agent_name.strip():
        raise ClientError(EXIT_LOCAL, "--agent-name must not be empty")
    agent: dict[str, Any] = {"name": args.agent_name.strip()}
    for key in ("version", "source_url", "commit"):
        value = getattr(args, f"agent_{key}" if key == "version" else key)
        if value:
            agent[key] = value
    if args.open_source is not None:
        agent["open_source"] = args.open_source
    benchmark: dict[str, Any] = {"name": "mle-bench", "split": args.split}
    if args.benchmark_version:
        benchmark["version"] = args.benchmark_version
    if args.benchmark_commit:
        benchmark["commit"] = args.benchmark_commit
    manifest: dict[str, Any] = {
        "schema": "bundle-v1",
        "agent": agent,
        "llms": list(args.llm),
        "benchmark": benchmark,
    }
    seeds = args.seeds or counted_seeds(contents)
    if seeds:
        manifest["seeds"] = seeds
    if args.runtime_hours is not None:
        manifest["runtime_hours"] = args.runtime_hours
    hardware: dict[str, Any] = {}
    if args.gpu:
        hardware["gpus"] = [parse_gpu(spec) for spec in args.gpu]
    if args.vcpus is not None:
        hardware["vcpus"] = args.vcpus
    if args.ram_gb is not None:
        hardware["ram_gb"] = args.ram_gb
    if hardware:
        manifest["hardware"] = hardware
    if args.internet_access is not None:
        manifest["internet_access"] = args.internet_access
    disclosures = dict(parse_disclosure(item) for item in args.disclose)
    if disclosures:
        manifest["disclosures"] = disclosures
    if args.notes:
        manifest["notes"] = args.notes
    if args.registration is not None:
        manifest["registration"] = args.registration
    return manifest


def counted_seeds(contents: BundleContents) -> int:
    """The most runs any one competition has: what MLE-bench's --pad-missing would average over."""
    counts: dict[str, int] = {}
    for competition_id, _ in contents.runs:
        counts[competition_id] = counts.get(competition_id, 0) + 1
    return max(counts.values(), default=0)


def parse_gpu(spec: str) -> dict[str, Any]:
    parts = spec.split(":")
    try:
        if not parts[0] or len(parts) > 3:
            raise ValueError
        gpu: dict[str, Any] = {"model": parts[0]}
        if len(parts) > 1:
            memory = float(parts[1])
            gpu["memory_gb"] = int(memory) if memory.is_integer() else memory
        gpu["count"] = int(parts[2]) if len(parts) > 2 else 1
        if gpu["count"] < 1:
            raise ValueError
    except ValueError:
        raise ClientError(EXIT_LOCAL, f"--gpu {spec!r}: expected MODEL:MEMORY_GB:COUNT, e.g. A10:24:1") from None
    return gpu


def parse_disclosure(item: str) -> tuple[str, Any]:
    key, sep, text = item.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ClientError(EXIT_LOCAL, f"--disclose {item!r}: expected KEY=VALUE, e.g. test_set_feedback=false")
    if key == "other_models":
        return key, [model.strip() for model in text.split(",") if model.strip()]
    flag = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}.get(text.strip().lower())
    if flag is None and key in DISCLOSURE_FLAGS:
        raise ClientError(EXIT_LOCAL, f"--disclose {item!r}: {key} must be true or false")
    return key, text if flag is None else flag


def write_bundle(out: str, manifest: dict[str, Any], contents: BundleContents) -> int:
    """Write the .tar.gz next to ``out`` first and rename it at the end: never a half-written bundle."""
    folder = os.path.dirname(os.path.abspath(out))
    handle, partial = tempfile.mkstemp(prefix=f".{os.path.basename(out)}.", suffix=".partial", dir=folder)
    os.close(handle)
    try:
        with tarfile.open(partial, "w:gz", format=tarfile.PAX_FORMAT) as tar:
            data = (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
            info = tarfile.TarInfo("manifest.json")
            info.size, info.mtime, info.mode = len(data), int(time.time()), 0o644
            tar.addfile(info, io.BytesIO(data))
            for disk_path, name in contents.files:
                info = tar.gettarinfo(disk_path, arcname=name)
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.mode = 0o644
                with open(disk_path, "rb") as source:
                    tar.addfile(info, source)
        os.replace(partial, out)
    except BaseException:
        os.unlink(partial)
        raise
    return os.path.getsize(out)


def command_make_bundle(args: argparse.Namespace) -> int:
    if not args.out.endswith((".tar.gz", ".tgz")):
        raise ClientError(EXIT_LOCAL, f"--out {args.out!r}: a bundle made here is a .tar.gz; name it so")
    if os.path.exists(args.out) and not args.force:
        raise ClientError(EXIT_LOCAL, f"{args.out} exists; pass --force to replace it")
    runs_dir = os.path.abspath(args.runs_dir)
    if os.path.abspath(args.out).startswith(runs_dir + os.sep):
        raise ClientError(EXIT_LOCAL, "write the bundle outside RUNS_DIR, or it would try to include itself")
    contents = collect(find_run_groups(runs_dir))
    manifest = build_manifest(args, contents)
    for line in contents.skipped[:_WARNINGS_SHOWN]:
        print(f"warning: skipped {line}", file=sys.stderr)
    if len(contents.skipped) > _WARNINGS_SHOWN:
        print(f"warning: ... and {len(contents.skipped) - _WARNINGS_SHOWN} more skipped", file=sys.stderr)
    size = write_bundle(args.out, manifest, contents)
    competitions = len({competition for competition, _ in contents.runs})
    print(
        f"wrote {args.out} ({size / MB:,.1f} MB): {len(contents.groups)} run group(s), "
        f"{len(contents.runs)} runs of {competitions} competitions "
        f"({contents.no_submission} without a submission), "
        f"{contents.reports} grading report(s); split {args.split}, seeds {manifest.get('seeds', '-')}"
        + (" (counted: the most runs of one competition)" if not args.seeds and contents.runs else "")
        + (f"; skipped {len(contents.skipped)} item(s)" if contents.skipped else "")
    )
    if not contents.runs:
        print("note: no run directories: a report-only bundle is accepted but never comparable", file=sys.stderr)
    return EXIT_OK


# --- verify: recompute a published entry's numbers from its evidence (issue 22) -------------------------------
#
# `verify` is read-only and public: it needs no token. Every check gives rows (what, result, detail), the result one
# of VERIFIED, DIFFERS, NOT_CHECKED; the command prints one table and exits 0 (all agree), 1 (something differs)
# or 2 (something could not be checked). A difference wins over what could not be checked.

VERIFIED = "ok"
DIFFERS = "differs"
NOT_CHECKED = "could not check"
VERIFY_EXIT = {VERIFIED: 0, DIFFERS: 1, NOT_CHECKED: 2}
EVIDENCE_FORMAT = "mle-portal-evidence/1"
MAX_EVIDENCE_JSON = 500 * MB  # a JSON file of the evidence read whole (a board of 100,000 entries is far less)
VARIANTS = ("all", "excluding_leaky")
VARIANT_WORDS = {"all": "all competitions", "excluding_leaky": "without the known-leaky ones"}
_ENTRY_PATH = re.compile(r"^(?P<base>.*?)/(?:leaderboard/entries|api/v1/entries)/(?P<id>[0-9]{1,18})(?:/.*)?$")

Row = tuple[str, str, str]


class PublicPortal(Portal):
    """The portal's public API, asked without a token."""

    def __init__(self, url: str, *, timeout: float = 120.0) -> None:
        super().__init__(url, "public", timeout=timeout)
        self.token = ""

    def headers(self) -> dict[str, str]:
        headers = super().headers()
        del headers["Authorization"]
        return headers

    def download(self, path: str, target: str) -> None:
        """GET path into the file target, streamed; a ClientError with the portal's message when it refuses."""
        connection = self.connect()
        try:
            connection.request("GET", self.base_path + path, headers={**self.headers(), "Accept": "*/*"})
            response = connection.getresponse()
            if response.status != 200:
                read_answer(response, what=f"GET {path}")
                raise ClientError(EXIT_SERVER, f"GET {path}: HTTP {response.status} without a file")
            with open(target, "wb") as out:
                for chunk in iter(lambda: response.read(CHUNK), b""):
                    out.write(chunk)
        except (OSError, http.client.HTTPException) as exc:
            raise ClientError(EXIT_NETWORK, f"cannot download {self.url(path)}: {describe(exc)}") from exc
        finally:
            connection.close()

    def get_answer(self, path: str) -> tuple[dict[str, Any], dict[str, str]]:
        """The JSON object at `path` and the answer's headers (names in lower case)."""
        connection = self.connect()
        try:
            connection.request("GET", self.base_path + path, headers=self.headers())
            response = connection.getresponse()
            headers = {name.lower(): value for name, value in response.getheaders()}
            return read_answer(response, what=f"GET {path}"), headers
        except (OSError, http.client.HTTPException) as exc:
            raise ClientError(EXIT_NETWORK, f"cannot reach {self.url(path)}: {describe(exc)}") from exc
        finally:
            connection.close()


def entry_address(entry: str, portal: str | None) -> tuple[str, int]:
    """(the portal's address, the entry's id) from an entry's id with --portal, or from its page's or API's URL."""
    entry = entry.strip()
    if entry.isascii() and entry.isdigit() and len(entry) <= 18:
        portal = portal or os.environ.get("MLEPORTAL_URL")
        if not portal:
            raise ClientError(EXIT_LOCAL, f"entry {entry}: which portal? Pass --portal URL (or set MLEPORTAL_URL)")
        return portal.rstrip("/"), int(entry)
    parts = urllib.parse.urlsplit(entry)
    found = _ENTRY_PATH.match(parts.path)
    if parts.scheme not in ("http", "https") or not parts.netloc or not found:
        raise ClientError(
            EXIT_LOCAL,
            f"{entry!r} is neither an entry's id nor its address (https://PORTAL/leaderboard/entries/ID/)",
        )
    base = f"{parts.scheme}://{parts.netloc}{found.group('base')}"
    return (portal or base).rstrip("/"), int(found.group("id"))


def _number_text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, allow_nan=True)


def first_difference(recomputed: Any, served: Any, path: str = "") -> str | None:
    """Where two JSON values first differ, as JSON writes them (so to the last digit), or None when they agree."""
    if isinstance(recomputed, dict) and isinstance(served, dict):
        for key in sorted(set(recomputed) | set(served), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in served:
                return f"{where}: recomputed {_number_text(recomputed[key])}, the portal serves nothing"
            if key not in recomputed:
                return f"{where}: the portal serves {_number_text(served[key])}, recomputed nothing"
            found = first_difference(recomputed[key], served[key], where)
            if found:
                return found
        return None
    if isinstance(recomputed, list) and isinstance(served, list) and len(recomputed) == len(served):
        for i, (left, right) in enumerate(zip(recomputed, served)):
            found = first_difference(left, right, f"{path}[{i}]")
            if found:
                return found
        return None
    if _number_text(recomputed) == _number_text(served):
        return None
    return f"{path or 'value'}: recomputed {_number_text(recomputed)}, the portal serves {_number_text(served)}"


def _compare(what: str, recomputed: Any, served: Any, agreed: str) -> Row:
    found = first_difference(recomputed, served)
    return (what, DIFFERS, found) if found else (what, VERIFIED, agreed)


class Unverifiable(Exception):
    """The evidence cannot be used for what follows (missing, malformed); the message says what and why."""


def _engine() -> Any:
    """The portal's engine (the wheel the portal serves: GET /api/v1/engine/, packaging/engine/API.md): its
    aggregation and rank interval, imported only now, so that everything else in this file needs the standard
    library alone."""
    import grading.engine as engine  # type: ignore[import-not-found]

    return engine


def _engine_missing(portal: PublicPortal, exc: BaseException) -> Row:
    """Why the engine cannot be used, and the pip line that installs the portal's own (printed on its own too)."""
    why = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, SyntaxError):
        why = f"the installed engine needs a newer Python than {sys.version_info[0]}.{sys.version_info[1]} ({exc})"
    try:
        wheel = portal.get_json("/api/v1/engine/")
    except ClientError as failed:
        return ("engine", NOT_CHECKED, f"cannot import the portal's engine ({why}); the portal serves none ({failed})")
    url = wheel.get("url")
    if not isinstance(url, str) or not url:
        return ("engine", NOT_CHECKED, f"cannot import the portal's engine ({why}); /api/v1/engine/ names no wheel")
    print(f"pip install {url}", file=sys.stderr)
    return ("engine", NOT_CHECKED, f"cannot import the portal's engine ({why}); install it: pip install {url}")


def _engine_row(engine: Any, recorded: dict[str, Any]) -> Row:
    """Which engine recomputes, and whether it is the one the evidence was made with."""
    installed = engine.ENGINE_VERSION
    where = os.path.dirname(os.path.abspath(engine.__file__))
    if recorded.get("version") and installed != recorded["version"]:
        return (
            "engine",
            NOT_CHECKED,
            f"{installed or 'an unversioned engine'} is installed, the evidence was made with {recorded['version']}: "
            f"pip install {recorded.get('url')}",
        )
    return ("engine", VERIFIED, f"{installed or 'unversioned'}, from {where}")


def _json_member(archive: zipfile.ZipFile, name: str) -> Any:
    try:
        if archive.getinfo(name).file_size > MAX_EVIDENCE_JSON:
            raise Unverifiable(f"{name} is larger than {MAX_EVIDENCE_JSON // MB} MB: not read")
        return json.loads(archive.read(name).decode("utf-8"))
    except KeyError:
        raise Unverifiable(f"the evidence has no {name}") from None
    except (ValueError, zipfile.BadZipFile, UnicodeDecodeError) as exc:
        raise Unverifiable(f"{name} cannot be read: {exc}") from None


def _manifest_rows(archive: zipfile.ZipFile, manifest: dict[str, Any]) -> list[Row]:
    """Every file the manifest lists, against its SHA-256 and size; any other file in the zip is a difference."""
    rows: list[Row] = []
    listed = manifest.get("files")
    if not isinstance(listed, list) or not all(isinstance(f, dict) for f in listed):
        raise Unverifiable("evidence.json lists no files")
    names = set(archive.namelist())
    for item in listed:
        path = str(item.get("path"))
        if path not in names:
            rows.append((f"file {path}", DIFFERS, "listed in evidence.json but not in the zip"))
            continue
        digest, size = hashlib.sha256(), 0
        try:
            with archive.open(path) as member:
                for chunk in iter(lambda: member.read(CHUNK), b""):
                    digest.update(chunk)
                    size += len(chunk)
        except (zipfile.BadZipFile, OSError) as exc:
            rows.append((f"file {path}", DIFFERS, f"cannot be read from the zip: {exc}"))
            continue
        if digest.hexdigest() != item.get("sha256"):
            rows.append(
                (f"file {path}", DIFFERS, f"SHA-256 {digest.hexdigest()}, evidence.json says {item.get('sha256')}")
            )
        elif size != item.get("bytes"):
            rows.append((f"file {path}", DIFFERS, f"{size} bytes, evidence.json says {item.get('bytes')}"))
        else:
            rows.append((f"file {path}", VERIFIED, f"SHA-256 {digest.hexdigest()[:16]}…, {size:,} bytes"))
    for extra in sorted(names - {str(item.get("path")) for item in listed} - {"evidence.json"}):
        rows.append((f"file {extra}", DIFFERS, "in the zip but not listed in evidence.json"))
    return rows


def _outcomes(archive: zipfile.ZipFile, manifest: dict[str, Any], aggregates: dict[str, Any], engine: Any) -> list:
    """The run outcomes the aggregation counts, from the per-seed reports and each run's submission SHA-256 (or
    the earlier seed's file it copies once normalised, ``counted_as``)."""
    hashes = {
        (r["competition_id"], int(r["seed"])): r.get("counted_as") or r.get("submission_sha256") or ""
        for r in aggregates["runs"]
    }
    outcomes = []
    for item in manifest["files"]:
        found = re.fullmatch(r"reports/seed-([0-9]{1,9})\.json", str(item.get("path")))
        if not found:
            continue
        seed = int(found.group(1))
        for report in _json_member(archive, item["path"])["competition_reports"]:
            sha = hashes.get((report["competition_id"], seed), "")
            outcomes.append(engine.outcome_from_report(report, seed=seed, submission_sha256=sha))
    registration = aggregates.get("registration")
    if isinstance(registration, dict):
        outcomes = _as_registered(outcomes, registration, engine)
    return _with_unnamed(outcomes, aggregates.get("unnamed_registrations") or [], engine)


def _as_registered(outcomes: list, registration: dict[str, Any], engine: Any) -> list:
    """As the portal counts a registered entry (its grading/checks/registration.py): each registered
    competition's runs renumbered 0, 1, ... in seed order, then a failure for each registered seed not reported."""
    registered = [str(cid) for cid in registration.get("competitions") or []]
    seeds = int(registration.get("seeds") or 0)
    wanted = set(registered)
    result = [o for o in outcomes if o.competition_id not in wanted]
    for cid in registered:
        runs = sorted((o for o in outcomes if o.competition_id == cid), key=lambda o: o.seed)
        result += [dataclasses.replace(run, seed=slot) for slot, run in enumerate(runs)]
        for slot in range(len(runs), seeds):
            result.append(engine.outcome_from_report({}, seed=slot, submission_sha256="", competition_id=cid))
    return result


def _with_unnamed(outcomes: list, unnamed: list, engine: Any) -> list:
    """As the portal counts an entry's unnamed registrations (lapsed registrations of the same team, agent and
    version that no bundle named): for each in turn, a failure per registered (competition, seed), its seeds
    numbered after the highest seed counted so far."""
    result = list(outcomes)
    start = max((o.seed for o in result), default=-1) + 1
    for registration in unnamed:
        seeds = int(registration.get("seeds") or 0)
        for cid in [str(cid) for cid in registration.get("competitions") or []]:
            for slot in range(seeds):
                result.append(
                    engine.outcome_from_report({}, seed=start + slot, submission_sha256="", competition_id=cid)
                )
        start += seeds
    return result


def _tab_name(tier: str, variant: str) -> str:
    return f"{tier} tab, {VARIANT_WORDS[variant]}"


def _figure_rows(served: dict[str, Any], aggregates: dict[str, Any], outcomes: list, engine: Any) -> tuple:
    """Every tier's complete and padded aggregates, with and without the known-leaky competitions, recomputed
    and compared with the served ones; and the per-seed figures each tab ranks, by (tier, variant)."""
    rows: list[Row] = []
    seeds_by_tab: dict[tuple[str, str], list[float]] = {}
    leaky = set(aggregates.get("known_leaky") or [])
    served_tiers = served.get("tiers") or {}
    for tier, members in aggregates["members"].items():
        for variant in VARIANTS:
            split = list(members) if variant == "all" else [c for c in members if c not in leaky]
            complete = engine.aggregate(outcomes, split=split, padded=False) if split else None
            padded = engine.aggregate(outcomes, split=split, padded=True) if split else None
            uses = "complete" if complete else ("padded" if padded else None)
            recomputed = {"complete": complete, "padded": padded, "uses": uses, "competitions": len(split)}
            figures = (served_tiers.get(tier) or {}).get(variant)
            shown = complete or padded or {}
            agreed = f"complete and padded, every measure ({shown.get('seeds', 0)} seeds, {len(split)} competitions)"
            rows.append(_compare(f"{tier}, {VARIANT_WORDS[variant]}: figures", recomputed, figures, agreed))
            if uses:
                values = engine.per_seed(outcomes, split=split, padded=uses == "padded")
                seeds_by_tab[(tier, variant)] = [value["any_medal"] for value in values]
    extra = sorted(set(served_tiers) - set(aggregates["members"]))
    if extra:
        rows.append(("tiers", DIFFERS, f"the portal serves figures for {', '.join(extra)}, the evidence has none"))
    return rows, seeds_by_tab


def _tab_rows(served: dict[str, Any], seeds_by_tab: dict, aggregates: dict[str, Any]) -> list[Row]:
    """Each tab's row as the board lists it (the aggregate it uses, its seeds, mean, SEM, per-seed figures)."""
    rows: list[Row] = []
    tabs = {(t["tier"], "excluding_leaky" if t["excluding_leaky"] else "all"): t for t in served.get("tabs") or []}
    for key in [*tabs, *(key for key in seeds_by_tab if key not in tabs)]:
        tier, variant = key
        tab = tabs.get(key)
        if key not in seeds_by_tab or tab is None:
            where = "the portal lists a row" if tab is not None else "the recomputation has a figure"
            rows.append((f"{_tab_name(tier, variant)}: row", DIFFERS, f"only {where} for this tab"))
            continue
        figures = aggregates["tiers"].get(tier, {}).get(variant) or {}
        figure = figures.get(figures.get("uses") or "") or {}
        recomputed = {
            "uses": figures.get("uses"),
            "seeds": figure.get("seeds"),
            "any_medal": {k: (figure.get("any_medal") or {}).get(k) for k in ("mean", "sem")},
            "per_seed": seeds_by_tab[key],
        }
        shown = {k: tab.get(k) for k in ("uses", "seeds", "any_medal", "per_seed")}
        agreed = f"{tab.get('uses')}, {tab.get('seeds')} seeds, per-seed figures"
        rows.append(_compare(f"{_tab_name(tier, variant)}: row", recomputed, shown, agreed))
    return rows


def _rank_rows(
    served: dict[str, Any], ranking: dict[str, Any], rank: dict[str, Any], seeds_by_tab: dict, engine: Any
) -> list[Row]:
    """The entry's rank, 95% interval and ties in every tab it is ranked in, by the engine's bootstrap over the
    tab's rows in the order the ranking took them, the entry's own per-seed figures recomputed."""
    rows: list[Row] = []
    entry_id = served.get("entry_id")
    tabs = {
        (t["tier"], "excluding_leaky" if t["excluding_leaky"] else "all"): t
        for t in ranking.get("tabs") or []
        if isinstance(t, dict)
    }
    ranked = [t for t in served.get("tabs") or [] if t.get("rank") is not None]
    for tab in ranked:
        key = (tab["tier"], "excluding_leaky" if tab["excluding_leaky"] else "all")
        what = f"{_tab_name(*key)}: rank"
        inputs = tabs.get(key)
        if inputs is None:
            rows.append((what, NOT_CHECKED, "ranking.json has no rows for this tab"))
            continue
        positions = [i for i, row in enumerate(inputs["rows"]) if row.get("entry_id") == entry_id]
        if len(positions) != 1:
            rows.append((what, DIFFERS, f"ranking.json lists entry {entry_id} {len(positions)} times in this tab"))
            continue
        per_seed = [row["per_seed"] for row in inputs["rows"]]
        mine = seeds_by_tab.get(key)
        if mine is not None and first_difference(mine, per_seed[positions[0]]):
            rows.append(
                (
                    f"{_tab_name(*key)}: ranked figures",
                    DIFFERS,
                    "the ranking took the entry's per-seed figures as "
                    f"{_number_text(per_seed[positions[0]])}, recomputed {_number_text(mine)}",
                )
            )
            per_seed[positions[0]] = mine
        found = engine.tab_ranks(
            per_seed, replicates=int(rank["replicates"]), level=float(rank["level"]), random_seed=rank["random_seed"]
        )[positions[0]]
        recomputed = {"rank": found.rank, "rank_low": found.low, "rank_high": found.high, "tied_with": found.tied_ranks}
        shown = {k: tab.get(k) for k in recomputed}
        agreed = f"#{found.rank}, 95% interval #{found.low}–#{found.high} of {len(per_seed)} ranked entries"
        rows.append(_compare(what, recomputed, shown, agreed))
        stated = inputs.get("entry") or {}
        if [stated.get(k) for k in ("rank", "low", "high", "tied_with")] != list(recomputed.values()):
            rows.append((f"{_tab_name(*key)}: ranking.json", DIFFERS, f"states {_number_text(stated)}"))
    return rows


def _board_version(archive: zipfile.ZipFile) -> Any:
    try:
        return _json_member(archive, "evidence.json").get("board_version")
    except (Unverifiable, AttributeError):
        return None


def _download(portal: PublicPortal, entry_id: int, path: str) -> tuple[dict[str, Any], zipfile.ZipFile]:
    """The entry as served and its evidence, of one version of the board: a refresh between the two downloads
    (rare: the board changes when an entry's numbers do) is waited out by downloading both again, twice at most."""

    def both() -> tuple[dict[str, Any], zipfile.ZipFile]:
        served = portal.get_json(f"/api/v1/entries/{entry_id}/")
        portal.download(f"/api/v1/entries/{entry_id}/evidence/", path)
        return served, zipfile.ZipFile(path)

    for _ in range(2):
        served, archive = both()
        if _board_version(archive) in (None, served.get("board_version")):
            return served, archive
        archive.close()
    return both()


def verify_evidence(portal_url: str, entry_id: int, work_dir: str, *, extract: bool = False) -> list[Row]:
    """Download the entry's evidence, check every file against its SHA-256, recompute every tier's aggregates and
    the entry's rank and interval per tab with the portal's engine, and compare them with what the portal serves
    (GET /api/v1/entries/<id>/) to the last digit of its JSON. With `extract`, the evidence is left unpacked in
    work_dir/evidence for the checks that re-grade."""
    portal = PublicPortal(portal_url)
    try:
        served, archive = _download(portal, entry_id, os.path.join(work_dir, "evidence.zip"))
    except ClientError as exc:
        if exc.status == 404:
            why = f"no published entry {entry_id} at {portal_url}: only published entries have evidence"
            return [("entry", NOT_CHECKED, why)]
        return [("entry", NOT_CHECKED, exc.message)]
    except zipfile.BadZipFile as exc:
        return [("evidence", NOT_CHECKED, f"the download is not a zip: {exc}")]
    rows: list[Row] = []
    stamped = _board_version(archive)
    if stamped != served.get("board_version"):
        why = f"the board changed while downloading (the entry at version {served.get('board_version')}, "
        rows.append(("board version", NOT_CHECKED, why + f"its evidence at {stamped}): run verify again"))
    with archive:
        try:
            manifest = _json_member(archive, "evidence.json")
            if not isinstance(manifest, dict) or manifest.get("format") != EVIDENCE_FORMAT:
                raise Unverifiable(f"evidence.json is not in the format {EVIDENCE_FORMAT} this client reads")
            rows += _manifest_rows(archive, manifest)
            commit = str(manifest.get("portal_commit"))[:12]
            if manifest.get("entry_id") != entry_id:
                rows.insert(0, ("evidence", DIFFERS, f"it is the evidence of entry {manifest.get('entry_id')}"))
            else:
                detail = f"entry {entry_id}, board version {manifest.get('board_version')}, portal commit {commit}"
                rows.insert(0, ("evidence", VERIFIED, detail))
            if extract:
                _extract(archive, manifest, os.path.join(work_dir, "evidence"))
            try:
                engine = _engine()
            except (ImportError, SyntaxError) as exc:
                return rows + [_engine_missing(portal, exc)]
            rows.append(_engine_row(engine, manifest.get("engine") or {}))
            aggregates = _json_member(archive, "aggregates.json")
            ranking = _json_member(archive, "ranking.json")
            outcomes = _outcomes(archive, manifest, aggregates, engine)
            rows.append(_compare("aggregates.json", aggregates.get("tiers"), served.get("tiers"), "as served"))
            figure_rows, seeds_by_tab = _figure_rows(served, aggregates, outcomes, engine)
            rows += figure_rows
            rows += _tab_rows(served, seeds_by_tab, aggregates)
            rows += _rank_rows(served, ranking, manifest.get("rank") or {}, seeds_by_tab, engine)
            evidence_competitions = {str(r["competition_id"]) for r in aggregates["runs"]}
            rows += audit_rows(portal, served, evidence_competitions=evidence_competitions)
        except Unverifiable as exc:
            rows.append(("evidence", NOT_CHECKED, str(exc)))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            why = f"the evidence is not as its format says ({type(exc).__name__}: {exc})"
            rows.append(("evidence", NOT_CHECKED, why))
    return rows


def audit_choice(head_hash: str, submission_id: int, candidates: list[str], k: int) -> tuple[str, list[str]]:
    """The random audit's seed and choice, as the portal makes them (its grading/audit_choice.py): seed =
    sha256("<head hash>:<submission id>"); the k competitions whose sha256("<seed>:<id>") are smallest."""
    seed = hashlib.sha256(f"{head_hash}:{submission_id}".encode()).hexdigest()
    ranked = sorted(set(candidates), key=lambda slug: (hashlib.sha256(f"{seed}:{slug}".encode()).hexdigest(), slug))
    return seed, ranked[: max(0, k)]


def audit_rows(portal: Any, served: dict[str, Any], *, evidence_competitions: set[str] | None = None) -> list[Row]:
    """The entry's random audit (README "Audits"): its choice recomputed from the published head and the
    submission's id, and that head found in the board's public history. With ``evidence_competitions`` (those of
    the evidence's runs), the candidates must hold every one of them: a portal that left a competition out of the
    draw could spare it the audit. None for an entry without an audit."""
    audit = served.get("audit")
    if not isinstance(audit, dict):
        return []
    head = audit.get("head") or {}
    seq, digest = head.get("seq"), str(head.get("hash") or "")
    candidates = [str(slug) for slug in audit.get("candidates") or []]
    spared = sorted((evidence_competitions or set()) - set(candidates))
    if spared:
        detail = f"the evidence's runs include {', '.join(spared)}, which the audit's candidates leave out"
        return [("audit candidates", DIFFERS, detail)]
    chosen = [str(slug) for slug in audit.get("competitions") or []]
    seed, expected = audit_choice(digest, int(served.get("submission_id") or 0), candidates, len(chosen))
    if seed != audit.get("seed") or expected != chosen:
        detail = f"from head {seq}:{digest[:12]} and submission {served.get('submission_id')} the choice is "
        return [("audit choice", DIFFERS, detail + f"{', '.join(expected) or 'none'}; the portal shows {chosen}")]
    rows: list[Row] = [
        ("audit choice", VERIFIED, f"{', '.join(chosen) or 'none'} of {len(candidates)}, from head {seq}:{digest[:12]}")
    ]
    try:
        if not isinstance(seq, int) or seq < 0:
            raise Unverifiable(f"the audit's head sequence number {seq!r} is not a whole number")
        if seq == 0:
            found = "0" * 64
        else:
            page = portal.get_json(f"/api/v1/history/?after={seq - 1}&limit=1")
            events = page.get("events") or []
            found = str(events[0].get("hash")) if events and events[0].get("seq") == seq else ""
        if found == digest:
            rows.append(("audit head", VERIFIED, f"event {seq} of the board's history has that hash"))
        else:
            rows.append(("audit head", DIFFERS, f"event {seq} of the board's history is not {digest[:12]}"))
    except (ClientError, Unverifiable, AttributeError, TypeError) as exc:
        rows.append(("audit head", NOT_CHECKED, f"the board's history could not be read: {exc}"))
    return rows


def _extract(archive: zipfile.ZipFile, manifest: dict[str, Any], target: str) -> None:
    """The files evidence.json lists (and itself) under target, each no larger than it says: nothing else."""
    sizes = {str(f.get("path")): int(f.get("bytes") or 0) for f in manifest["files"]}
    sizes["evidence.json"] = archive.getinfo("evidence.json").file_size
    for name, size in sizes.items():
        parts = name.split("/")
        if name not in archive.namelist() or name.startswith("/") or "\\" in name or ".." in parts or "" in parts:
            continue
        destination = os.path.join(target, *parts)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        with archive.open(name) as source, open(destination, "wb") as out:
            left = size
            for chunk in iter(lambda: source.read(CHUNK), b""):
                left -= len(chunk)
                if left < 0:
                    raise Unverifiable(f"{name} is larger in the zip than evidence.json says")
                out.write(chunk)


# --- verify --data and --official: re-grade with your own data ------------------------------------------------
#
# Re-grade every submission of a published entry on this machine, with your own MLE-bench prepared data and the
# portal's own engine, and compare each report field by field with the server's. The engine is the wheel the portal
# serves (GET /api/v1/engine/ names it; pip install <its url>), imported only here, so that everything else in this
# file needs the standard library alone. verify_data reads an unpacked evidence folder: evidence.json,
# competitions.json, reports/seed-<n>.json and bundle/<file> (README: "The evidence of an entry").


DATA_EVIDENCE_FORMAT = "mle-portal-evidence/1"
# What a re-grade may change without any number changing: when it ran, and the portal's words for an invalid file.
REGRADE_IGNORED = ("created_at", "reason")
_SHOWN_DIFFERENCES = 3
ENGINE_PYTHON = (3, 12)  # the wheel's Requires-Python; this file itself runs on 3.9


class EvidenceUnreadable(Exception):
    """The evidence folder lacks a file verify_data needs, or a file is not what the format says."""


def verify_data(evidence_dir: str, data_dir: str, official: bool) -> list[Row]:
    """Check each competition's answers in data_dir (MLE-bench's prepared data) against the SHA-256 the evidence
    records, before grading anything (a mismatch stops here, naming the competition); then re-grade every
    submission of the bundle with the portal's engine, the recorded grader, parameters and thresholds, and compare
    each report field by field with the server's. With `official`, also grade with MLE-bench's own grader where the
    mlebench package is installed, and say per competition whether it agrees."""
    try:
        evidence = read_evidence(evidence_dir)
    except EvidenceUnreadable as exc:
        return [("--data", NOT_CHECKED, str(exc))]
    rows = evidence["rows"]
    engine, engine_row = data_engine(evidence["manifest"].get("engine") or {})
    rows.append(engine_row)
    if engine is None:
        return rows
    answers, answer_rows = check_answers(evidence, os.path.expanduser(data_dir))
    rows += answer_rows
    stopped = [what.rsplit(" ", 1)[-1] for what, result, _ in answer_rows if result == DIFFERS]
    if stopped:
        why = f"the answers of {', '.join(stopped)} are not the portal's: nothing was graded"
        return rows + [("--data: re-grade", NOT_CHECKED, why)]
    with tempfile.TemporaryDirectory(prefix="mleportal-data-") as scratch:
        files: dict[str, str] = {}
        try:
            rows += regrade_rows(evidence, answers, files, scratch, engine)
        except EvidenceUnreadable as exc:
            return rows + [("--data: re-grade", NOT_CHECKED, str(exc))]
        if official:
            rows += official_rows(evidence, answers, files, scratch, os.path.expanduser(data_dir))
    return rows


def _evidence_json(folder: str, name: str) -> Any:
    path = os.path.join(folder, *name.split("/"))
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise EvidenceUnreadable(f"the evidence has no {name} (in {folder})") from None
    except (OSError, ValueError) as exc:
        raise EvidenceUnreadable(f"{name} cannot be read: {exc}") from None


def _file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def read_evidence(folder: str) -> dict[str, Any]:
    """evidence.json, competitions.json, the per-seed reports and the bundle's path, from an unpacked evidence
    folder. Each file read is held to the SHA-256 evidence.json lists for it: a mismatch is a row that differs."""
    if not os.path.isdir(folder):
        raise EvidenceUnreadable(f"{folder} is not a folder holding an entry's evidence")
    manifest = _evidence_json(folder, "evidence.json")
    if not isinstance(manifest, dict) or manifest.get("format") != DATA_EVIDENCE_FORMAT:
        raise EvidenceUnreadable(f"evidence.json is not in the format {DATA_EVIDENCE_FORMAT} this client reads")
    listed = {str(f.get("path")): f.get("sha256") for f in manifest.get("files") or [] if isinstance(f, dict)}
    competitions = _evidence_json(folder, "competitions.json")
    if not isinstance(competitions, dict):
        raise EvidenceUnreadable("competitions.json is not an object keyed by competition")
    reports: dict[int, list[dict[str, Any]]] = {}
    for name in sorted(listed):
        found = re.fullmatch(r"reports/seed-([0-9]{1,9})\.json", name)
        if found:
            report = _evidence_json(folder, name)
            entries = report.get("competition_reports") if isinstance(report, dict) else None
            if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
                raise EvidenceUnreadable(f"{name} holds no competition_reports")
            reports[int(found.group(1))] = entries
    if not reports:
        raise EvidenceUnreadable("evidence.json lists no reports/seed-<n>.json: there is nothing to re-grade")
    bundles = [name for name in listed if name.startswith("bundle/") and name.count("/") == 1]
    rows: list[Row] = []
    for name in ["competitions.json", *bundles, *(f"reports/seed-{seed}.json" for seed in sorted(reports))]:
        path = os.path.join(folder, *name.split("/"))
        if not os.path.isfile(path):
            raise EvidenceUnreadable(f"the evidence has no {name} (in {folder})")
        if _file_sha256(path) != listed.get(name):
            rows.append((f"--data: file {name}", DIFFERS, "its SHA-256 is not the one evidence.json lists"))
    bundle = os.path.join(folder, *bundles[0].split("/")) if len(bundles) == 1 else None
    return {"manifest": manifest, "competitions": competitions, "reports": reports, "bundle": bundle, "rows": rows}


def _pip_line(recorded: dict[str, Any]) -> str:
    url = recorded.get("url")
    line = f"pip install {url}" if url else "pip install the wheel the portal names at /api/v1/engine/"
    print(line, file=sys.stderr)
    return line


def data_engine(recorded: dict[str, Any]) -> tuple[Any, Row]:
    """The portal's engine (the mle-portal-engine wheel), imported now, and a row saying which one it is; None
    with a row that could not check when it is missing or another version than the evidence names."""
    if sys.version_info[:2] < ENGINE_PYTHON:
        why = f"the portal's engine needs Python {'.'.join(map(str, ENGINE_PYTHON))} or newer, this is " + ".".join(
            map(str, sys.version_info[:2])
        )
        return None, ("--data: engine", NOT_CHECKED, f"{why}; with one: {_pip_line(recorded)}")
    try:
        engine = importlib.import_module("grading.engine")
        version = engine.ENGINE_VERSION
    except (ImportError, AttributeError, SyntaxError) as exc:
        why = f"{type(exc).__name__}: {exc}"
        return None, (
            "--data: engine",
            NOT_CHECKED,
            f"the portal's engine is not installed ({why}); {_pip_line(recorded)}",
        )
    if recorded.get("version") and version != recorded["version"]:
        detail = (
            f"engine {version} is installed, the evidence was made with {recorded['version']}; {_pip_line(recorded)}"
        )
        return None, ("--data: engine", NOT_CHECKED, detail)
    where = os.path.dirname(os.path.abspath(str(engine.__file__)))
    return engine, ("--data: engine", VERIFIED, f"mle-portal-engine {version}, from {where}")


def _competitions_run(evidence: dict[str, Any]) -> list[str]:
    return sorted({str(report.get("competition_id")) for reports in evidence["reports"].values() for report in reports})


def _answers_file(data_dir: str, competition_id: str, record: dict[str, Any], sha256: str) -> tuple[str | None, str]:
    """Where this competition's answers are in MLE-bench's prepared data (<data>/<id>/prepared/private/...): the
    path competitions.json names, else the file under prepared/private/ whose SHA-256 is the recorded one. (None,
    why) when there is none; a file that is there but not the portal's is returned, for its hash to differ."""
    folder = os.path.join(data_dir, competition_id)
    if not os.path.isdir(folder):
        return None, f"{folder} does not exist: prepare it with `mlebench prepare -c {competition_id}`"
    named = str(record.get("answers_file") or "")
    parts = named.split("/")
    if named and ".." not in parts and not named.startswith("/"):
        path = os.path.join(folder, *parts)
        if os.path.isfile(path):
            return path, ""
    private = os.path.join(folder, "prepared", "private")
    for root, _, names in os.walk(private):
        for name in sorted(names):
            path = os.path.join(root, name)
            if sha256 and _file_sha256(path) == sha256:
                return path, ""
    where = os.path.join(folder, *parts) if named else private
    return None, f"no answers file at {where}"


def check_answers(evidence: dict[str, Any], data_dir: str) -> tuple[dict[str, str], list[Row]]:
    """Each competition's answers in data_dir against the SHA-256 the evidence records: {competition: path} of
    those that match, and a row for each that does not (differs: the competition is named), could not be found or
    has no recorded hash, or one row when all match."""
    found: dict[str, str] = {}
    rows: list[Row] = []
    for competition_id in _competitions_run(evidence):
        record = evidence["competitions"].get(competition_id)
        what = f"--data: answers of {competition_id}"
        if not isinstance(record, dict) or not record.get("answers_sha256"):
            rows.append((what, NOT_CHECKED, "competitions.json records no answers SHA-256 for it"))
            continue
        expected = str(record["answers_sha256"])
        path, why = _answers_file(data_dir, competition_id, record, expected)
        if path is None:
            rows.append((what, NOT_CHECKED, why))
            continue
        actual = _file_sha256(path)
        if actual != expected:
            rows.append((what, DIFFERS, f"{path} has SHA-256 {actual[:16]}…, the portal graded with {expected[:16]}…"))
            continue
        found[competition_id] = path
    if found and not rows:
        rows.append(("--data: answers", VERIFIED, f"{len(found)} competitions' answers have the recorded SHA-256"))
    return found, rows


def _member_key(name: str) -> str | None:
    """A bundle member's path as the portal stores a run's submission_file (relative to the unpacked bundle)."""
    name = name.replace("\\", "/")
    while name.startswith("./"):
        name = name[2:]
    if not name or name.startswith("/"):
        return None
    normal = posixpath.normpath(name)
    return None if normal == ".." or normal.startswith("../") else normal


def _submission_paths(evidence: dict[str, Any], competition_id: str | None = None) -> set[str]:
    """The submission_path of every report (of one competition) that names a file."""
    return {
        str(report.get("submission_path"))
        for reports in evidence["reports"].values()
        for report in reports
        if report.get("submission_path") not in (None, "", "None")
        and competition_id in (None, report.get("competition_id"))
    }


def extract_submissions(
    evidence: dict[str, Any], scratch: str, files: dict[str, str], done: Callable[[str], None] | None = None
) -> dict[str, str]:
    """Fill files with {submission_path named by a report: its file, copied out of the bundle into scratch}, in
    one pass over the bundle, calling done(path) after each; a path the bundle does not hold as a regular file
    is left out (it re-grades as missing)."""
    wanted = _submission_paths(evidence)
    if not wanted:
        return files
    bundle = evidence["bundle"]
    if bundle is None:
        raise EvidenceUnreadable("the evidence holds no bundle (an entry imported from grading reports): no files")

    def keep(key: str, source: IO[bytes]) -> None:
        target = os.path.join(scratch, str(len(files)), posixpath.basename(key))
        os.makedirs(os.path.dirname(target))
        with open(target, "wb") as out:
            for chunk in iter(lambda: source.read(CHUNK), b""):
                out.write(chunk)
        files[key] = target
        if done is not None:
            done(key)

    try:
        with open(bundle, "rb") as handle:
            is_zip = handle.read(2) == b"PK"
        if is_zip:
            with zipfile.ZipFile(bundle) as archive:
                for info in archive.infolist():
                    key = _member_key(info.filename)
                    if key in wanted and key not in files and not info.is_dir():
                        with archive.open(info) as source:
                            keep(key, source)
        else:
            with tarfile.open(bundle, "r|*") as stream:
                for member in stream:
                    key = _member_key(member.name)
                    if key in wanted and key not in files and member.isfile():
                        extracted = stream.extractfile(member)
                        if extracted is not None:
                            keep(key, extracted)
    except (OSError, tarfile.TarError, zipfile.BadZipFile, EOFError) as exc:
        raise EvidenceUnreadable(f"the bundle {os.path.basename(bundle)} cannot be read: {exc}") from None
    return files


def _json_text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, allow_nan=True)


def report_differences(server: dict[str, Any], local: dict[str, Any]) -> list[str]:
    """Each field in which two reports of one submission differ, as JSON writes them (so to the last digit),
    in MLE-bench's field order; when the grading ran and the portal's reason are not compared."""
    fields = [key for key in list(server) + [k for k in local if k not in server] if key not in REGRADE_IGNORED]
    return [
        f"{key}: the portal reports {_json_text(server.get(key))}, re-graded {_json_text(local.get(key))}"
        for key in fields
        if _json_text(server.get(key)) != _json_text(local.get(key))
    ]


def _some(differences: list[str]) -> str:
    """The first few differences, and how many more there are."""
    more = len(differences) - _SHOWN_DIFFERENCES
    return "; ".join(differences[:_SHOWN_DIFFERENCES]) + (f" (and {more} more)" if more > 0 else "")


def _runs_of(evidence: dict[str, Any], competition_id: str) -> list[tuple[int, dict[str, Any]]]:
    return [
        (seed, report)
        for seed, reports in sorted(evidence["reports"].items())
        for report in reports
        if report.get("competition_id") == competition_id
    ]


def _local_path(report: dict[str, Any], files: dict[str, str], scratch_missing: str) -> tuple[str | None, str | None]:
    """(the file to grade, the submission_path to report) for a server report."""
    shown = report.get("submission_path")
    if shown in (None, "", "None"):
        return None, None
    return files.get(str(shown), scratch_missing), str(shown)


def _cores() -> int:
    """The cores this process may run on (taskset and containers limit them), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def regrade_rows(
    evidence: dict[str, Any], answers: dict[str, str], files: dict[str, str], scratch: str, engine: Any
) -> list[Row]:
    """One row per competition whose answers matched: every seed's submission re-graded and its report compared
    with the server's. The submissions are copied out of the bundle by a thread of its own while the competitions
    whose files are all out are graded, on as many threads as this process has cores: decompressing, reading and
    grading spend most of their time in zlib, pyarrow, pandas and numpy, which let the other threads run.
    Raises EvidenceUnreadable, after every thread ended, when the bundle cannot be read."""
    competitions = [competition_id for competition_id in _competitions_run(evidence) if competition_id in answers]
    waiting = {competition_id: _submission_paths(evidence, competition_id) for competition_id in competitions}
    ready = {competition_id: threading.Event() for competition_id in competitions}
    lock = threading.Lock()
    failed: list[EvidenceUnreadable] = []

    def extracted(key: str) -> None:
        with lock:
            for competition_id, keys in waiting.items():
                keys.discard(key)
                if not keys:
                    ready[competition_id].set()

    def extract() -> None:
        try:
            extract_submissions(evidence, scratch, files, extracted)
        except EvidenceUnreadable as exc:
            failed.append(exc)
        finally:
            for event in ready.values():
                event.set()  # a file the bundle did not hold will not come: grade without it

    def regrade(competition_id: str) -> Row | None:
        ready[competition_id].wait()
        return (
            None
            if failed
            else regrade_competition(evidence, competition_id, answers[competition_id], files, scratch, engine)
        )

    for competition_id, keys in waiting.items():
        if not keys:
            ready[competition_id].set()
    with concurrent.futures.ThreadPoolExecutor(max_workers=_cores() + 1) as pool:
        pool.submit(extract)
        rows = list(pool.map(regrade, competitions))
    if failed:
        raise failed[0]
    return [row for row in rows if row is not None]


def regrade_competition(
    evidence: dict[str, Any], competition_id: str, answers: str, files: dict[str, str], scratch: str, engine: Any
) -> Row:
    """Every seed's submission of one competition re-graded with the engine and compared with the server's
    report: ok, differs (the first differences), or could not check (no grader recorded, answers unreadable, an
    engine failure)."""
    missing = os.path.join(scratch, "not-in-the-bundle", "submission.csv")  # a path to no file
    what = f"--data: {competition_id}"
    record = evidence["competitions"][competition_id]
    grader, thresholds = record.get("grader") or {}, record.get("thresholds") or {}
    if not grader.get("name") or not isinstance(thresholds.get("is_lower_better"), bool):
        return (what, NOT_CHECKED, "competitions.json records no grader or no direction for it")
    try:
        loaded = engine.load_answers(answers)
    except Exception as exc:  # noqa: BLE001 - an answers file the engine cannot read: say so and go on
        return (what, NOT_CHECKED, f"your answers file cannot be read: {type(exc).__name__}: {exc}")
    differences, scores = [], []
    try:
        for seed, server in _runs_of(evidence, competition_id):
            path, shown = _local_path(server, files, missing)
            local = engine.grade_file(
                path,
                answers,
                competition_id=competition_id,
                grader=grader,
                thresholds=thresholds,
                honest_max_bytes=record.get("max_submission_bytes"),
                display_path=shown,
                answers=loaded,
            )
            differences += [f"seed {seed}: {found}" for found in report_differences(server, local)]
            scores.append(_json_text(local.get("score")))
    except Exception as exc:  # noqa: BLE001 - the engine's own failure (an unknown grader): not a difference
        return (what, NOT_CHECKED, f"the engine cannot grade it: {type(exc).__name__}: {exc}")
    if differences:
        return (what, DIFFERS, _some(differences))
    versions = grader.get("version")
    note = (
        ""
        if versions in (None, engine.GRADER_VERSION)
        else f"; graded by grader {versions}, re-graded by {engine.GRADER_VERSION}"
    )
    return (
        what,
        VERIFIED,
        f"{len(scores)} seed(s), every field as the portal reports (scores {', '.join(scores)}){note}",
    )


OFFICIAL_FIELDS = (
    "score",
    "submission_exists",
    "valid_submission",
    "gold_medal",
    "silver_medal",
    "bronze_medal",
    "above_median",
    "any_medal",
)


def official_rows(
    evidence: dict[str, Any], answers: dict[str, str], files: dict[str, str], scratch: str, data_dir: str
) -> list[Row]:
    """Every submission graded again by MLE-bench's own grader (the mlebench package, with data_dir as its data
    directory), and per competition whether its score, validity and medals agree with the portal's report."""
    try:
        grade = importlib.import_module("mlebench.grade")
        registry = importlib.import_module("mlebench.registry").registry.set_data_dir(pathlib.Path(data_dir))
    except Exception as exc:  # noqa: BLE001 - not installed, or an mlebench this client does not know
        return [
            (
                "--official",
                NOT_CHECKED,
                f"the mlebench package is not importable here ({type(exc).__name__}: {exc}): install MLE-bench "
                "(pip install -e <your mle-bench checkout>) to grade with its own grader too",
            )
        ]
    rows: list[Row] = []
    missing = os.path.join(scratch, "not-in-the-bundle", "submission.csv")  # a path to no file
    for competition_id in _competitions_run(evidence):
        if competition_id not in answers:
            continue
        what = f"--official: {competition_id}"
        differences, runs = [], 0
        try:
            competition = registry.get_competition(competition_id)
            for seed, server in _runs_of(evidence, competition_id):
                path, _ = _local_path(server, files, missing)
                theirs = grade.grade_csv(pathlib.Path(path or missing), competition)
                theirs = theirs.to_dict() if hasattr(theirs, "to_dict") else dict(vars(theirs))
                runs += 1
                differences += [
                    f"seed {seed}: {key}: the portal reports {_json_text(server.get(key))}, MLE-bench "
                    f"{_json_text(theirs.get(key))}"
                    for key in OFFICIAL_FIELDS
                    if _json_text(server.get(key)) != _json_text(theirs.get(key))
                ]
        except Exception as exc:  # noqa: BLE001 - MLE-bench's own failure: it could not say
            rows.append((what, NOT_CHECKED, f"MLE-bench's grader failed: {type(exc).__name__}: {exc}"))
            continue
        if differences:
            rows.append((what, DIFFERS, _some(differences)))
        else:
            rows.append((what, VERIFIED, f"{runs} seed(s): MLE-bench's grader agrees on score, validity and medals"))
    return rows


def _unpacked_evidence(path: str, scratch: str) -> str:
    """An evidence folder: path itself, or the evidence zip at path unpacked into scratch (plain member names
    only)."""
    if os.path.isdir(path):
        return path
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                key = _member_key(info.filename)
                if key is None or info.is_dir():
                    continue
                target = os.path.join(scratch, *key.split("/"))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with archive.open(info) as source, open(target, "wb") as out:
                    for chunk in iter(lambda: source.read(CHUNK), b""):
                        out.write(chunk)
    except (OSError, zipfile.BadZipFile) as exc:
        raise ClientError(EXIT_LOCAL, f"{path} is neither an evidence folder nor an evidence zip: {exc}") from None
    return scratch


def command_verify_data(args: argparse.Namespace) -> int:
    """verify-data EVIDENCE --data DIR [--official]: verify_data on an evidence zip or folder already here, with
    the table and exit code of verify (0 all agree, 1 something differs, 2 something could not be checked)."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mleportal-evidence-") as scratch:
        try:
            folder = _unpacked_evidence(args.evidence, scratch)
        except ClientError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            return 2  # could not check
        rows = verify_data(folder, args.data, args.official)
    width = max(len(what) for what, _, _ in rows)
    print(f"{'check':<{width}}  {'result':<{len(NOT_CHECKED)}}  detail")
    for what, result, detail in rows:
        print(f"{what:<{width}}  {result:<{len(NOT_CHECKED)}}  {detail}")
    counts = {result: sum(row[1] == result for row in rows) for result in (VERIFIED, DIFFERS, NOT_CHECKED)}
    print(
        f"\n{counts[VERIFIED]} ok, {counts[DIFFERS]} differ, {counts[NOT_CHECKED]} could not be checked "
        f"({time.monotonic() - started:.2f} s)"
    )
    return 1 if counts[DIFFERS] else (2 if counts[NOT_CHECKED] else 0)


# --- verify: the board's history ------------------------------------------------------------------------
# The portal's board history (README "The board's history"): every change to a published number is an event
# hashing the one before it. verify_history fetches the whole log, recomputes every hash and the chain, replays
# the events into the board they describe and compares that board with the one the API serves; with a head
# kept from an earlier run it also checks that no past event changed.

HISTORY_FORMAT = "board-history/1"
ZERO_HASH = "0" * 64
HISTORY_HEAD_HEADER = "X-Board-History-Head"
BOARD_VARIANTS = (("all", "no"), ("excluding_leaky", "yes"))
SHOWN_DIFFERENCES = 10  # rows of one kind of difference; the rest are counted


def history_canonical(value: Any) -> bytes:
    """The bytes an event's hash is taken over: JSON, keys sorted, no spaces, ASCII only, no NaN."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode()


def history_event_hash(event: dict[str, Any]) -> str:
    """SHA-256 (hex) of the canonical JSON of the event without its "hash"."""
    return hashlib.sha256(history_canonical({k: v for k, v in event.items() if k != "hash"})).hexdigest()


def parse_head(text: str) -> tuple[int, str]:
    """SEQ:HASH (as printed by verify --history and sent as X-Board-History-Head) -> (seq, hash)."""
    seq, _, digest = (text or "").strip().partition(":")
    digest = digest.lower()
    if not (seq.isdigit() and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
        raise ClientError(EXIT_USAGE, f"a history head is SEQ:HASH with a 64-digit hex SHA-256, got {text!r}")
    return int(seq), digest


def _public(portal: Any) -> PublicPortal:
    if isinstance(portal, PublicPortal):
        return portal
    if isinstance(portal, Portal):
        return PublicPortal(portal.url(""), timeout=portal.timeout)
    return PublicPortal(str(portal))


def history_fetch(portal: PublicPortal) -> tuple[list[dict[str, Any]], tuple[int, str]]:
    """Every event of the portal's history, oldest first, and the head its last page served."""
    events: list[dict[str, Any]] = []
    path: str | None = "/api/v1/history/?after=0&limit=1000"
    head = (0, ZERO_HASH)
    while path:
        page, _ = portal.get_answer(path)
        found = page.get("events")
        served = page.get("head") or {}
        if not (isinstance(found, list) and isinstance(served, dict) and all(isinstance(e, dict) for e in found)):
            raise ClientError(EXIT_SERVER, f"GET {path}: not a page of the board's history")
        events.extend(found)
        head = (int(served.get("seq") or 0), str(served.get("hash") or ZERO_HASH))
        following = page.get("next")
        if following is not None and not found:
            raise ClientError(EXIT_SERVER, f"GET {path}: an empty page that names a next one")
        path = (
            urllib.parse.urlsplit(following).path + "?" + urllib.parse.urlsplit(following).query if following else None
        )
    return events, head


def board_fetch(portal: PublicPortal) -> tuple[dict[str, dict[int, dict[str, Any]]], tuple[int, str] | None, str]:
    """The board as the API serves it: per variant, each listed entry's row by submission id; the head of the
    history every page carried (None when they differ: the board changed while it was read); a problem."""
    rows: dict[str, dict[int, dict[str, Any]]] = {}
    heads = set()
    problem = ""
    for variant, flag in BOARD_VARIANTS:
        rows[variant] = {}
        page_number, pages = 1, 1
        while page_number <= pages:
            query = urllib.parse.urlencode(
                {"board": "all", "excluding_leaky": flag, "page_size": 1000, "page": page_number}
            )
            page, headers = portal.get_answer(f"/api/v1/leaderboard/?{query}")
            meta_head = page.get("history_head") or {}
            head = (int(meta_head.get("seq") or 0), str(meta_head.get("hash") or ""))
            heads.add(head)
            header = headers.get(HISTORY_HEAD_HEADER.lower(), "")
            if header != f"{head[0]}:{head[1]}":
                problem = f"the {HISTORY_HEAD_HEADER} header ({header or 'none'}) is not the head in the answer"
            for row in page.get("rows") or []:
                rows[variant][int(row["submission_id"])] = row
            pages = int(page.get("pages") or 1)
            page_number += 1
    return rows, (heads.pop() if len(heads) == 1 else None), problem


def _chain_rows(events: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """Every event's number, link to the one before and hash, recomputed."""
    found: list[tuple[str, str, str]] = []
    previous = ZERO_HASH
    for position, event in enumerate(events, start=1):
        seq = event.get("seq")
        what = f"history event {seq if isinstance(seq, int) else position}"
        if event.get("format") != HISTORY_FORMAT:
            found.append((what, "could not check", f"unknown format {event.get('format')!r}"))
        elif seq != position:
            found.append((what, "differs", f"found at position {position}: events are missing or repeated"))
        elif event.get("prev_hash") != previous:
            found.append((what, "differs", f"prev_hash {event.get('prev_hash')} is not event {position - 1}'s hash"))
        else:
            recomputed = history_event_hash(event)
            if recomputed != event.get("hash"):
                found.append((what, "differs", f"hash mismatch: recorded {event.get('hash')}, recomputed {recomputed}"))
        previous = str(event.get("hash"))
    return found


def history_replay(events: list[dict[str, Any]], *, upto: int) -> dict[int, dict[str, Any]]:
    """The board the events up to `upto` describe: per submission id, its last state with its subject."""
    board: dict[int, dict[str, Any]] = {}
    for event in events:
        if int(event.get("seq") or 0) > upto:
            break
        subject = event.get("subject") or {}
        if "submission_id" in subject:
            board[int(subject["submission_id"])] = {"state": event.get("state") or {}, "subject": subject}
    return board


def _entry_name(subject: dict[str, Any], submission_id: int) -> str:
    agent = f", {subject.get('agent')}" if subject.get("agent") else ""
    return f"entry {subject.get('entry_id')} (submission {submission_id}{agent})"


def _board_rows(
    replayed: dict[int, dict[str, Any]], served: dict[str, dict[int, dict[str, Any]]]
) -> list[tuple[str, str, str]]:
    """Every entry the history says is published, as the API serves it; none the history does not know."""
    found: list[tuple[str, str, str]] = []
    for submission_id, recorded in sorted(replayed.items()):
        state, name = recorded["state"], _entry_name(recorded["subject"], submission_id)
        if not state.get("published"):
            if any(submission_id in rows for rows in served.values()):
                found.append((name, "differs", "listed on the board, but the history says it left"))
            continue
        for variant, _ in BOARD_VARIANTS:
            expected = (state.get("tiers") or {}).get(variant) or {}
            row = served[variant].get(submission_id)
            if row is None:
                if expected:
                    found.append((name, "differs", f"not on the board ({variant}), but the history says it is"))
                continue
            if row.get("board") != state.get("board"):
                found.append((name, "differs", f"board {row.get('board')}, the history says {state.get('board')}"))
            shown = row.get("tiers") or {}
            for tier in sorted(set(expected) | set(shown)):
                if expected.get(tier) != shown.get(tier):
                    found.append(
                        (name, "differs", f"{tier} ({variant}): {_figures_diff(expected.get(tier), shown.get(tier))}")
                    )
    for variant, rows in served.items():
        for submission_id, row in sorted(rows.items()):
            if not (replayed.get(submission_id) or {}).get("state", {}).get("published"):
                subject = {"entry_id": row.get("entry_id"), "agent": row.get("agent")}
                found.append(
                    (_entry_name(subject, submission_id), "differs", f"on the board ({variant}) with no event")
                )
    return found


def _figures_diff(expected: Any, shown: Any) -> str:
    """Where a tier's figures on the board and in the history part: `any_medal.mean 23.6… on the board, 13.6…
    in the history` (the first three)."""
    if not isinstance(expected, dict) or not isinstance(shown, dict):
        said = {True: "nothing", False: "figures"}
        return f"the board shows {said[shown is None]}, the history {said[expected is None]}"
    parts = []
    for key in sorted(set(expected) | set(shown)):
        old, new = expected.get(key), shown.get(key)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            parts += [
                f"{key}.{sub} {json.dumps(new.get(sub))} on the board, {json.dumps(old.get(sub))} in the history"
                for sub in sorted(set(old) | set(new))
                if old.get(sub) != new.get(sub)
            ]
        else:
            parts.append(f"{key} {json.dumps(new)} on the board, {json.dumps(old)} in the history")
    return "; ".join(parts[:3]) + (f"; and {len(parts) - 3} more" if len(parts) > 3 else "")


def _capped(rows: list[tuple[str, str, str]], what: str) -> list[tuple[str, str, str]]:
    if len(rows) <= SHOWN_DIFFERENCES:
        return rows
    return rows[:SHOWN_DIFFERENCES] + [(what, "differs", f"and {len(rows) - SHOWN_DIFFERENCES} more differences")]


def verify_history(portal: Any, known_head: str | None) -> list[tuple[str, str, str]]:
    """Check the portal's board history: (what, result, detail) rows, result ok, differs or could not check.

    `portal` is a Portal or the portal's address; `known_head` a SEQ:HASH kept from an earlier run (or None)."""
    public = _public(portal)
    known = parse_head(known_head) if known_head else None
    try:
        board, board_head, problem = board_fetch(public)
        events, head = history_fetch(public)
        if board_head is not None and board_head[0] > head[0]:  # the board moved on while the log was read
            events, head = history_fetch(public)
        return _history_rows(events, head, board, board_head, problem, known)
    except ClientError as exc:
        return [("board history", "could not check", exc.message)]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return [("board history", "could not check", f"the portal's answers are not in the expected shape ({exc!r})")]


def _history_rows(
    events: list[dict[str, Any]],
    head: tuple[int, str],
    board: dict[str, dict[int, dict[str, Any]]],
    board_head: tuple[int, str] | None,
    problem: str,
    known: tuple[int, str] | None,
) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []
    chain = _chain_rows(events)
    rows += _capped(chain, "history chain")
    if not chain:
        rows.append(("history chain", "ok", f"{len(events)} events, every hash and link recomputed"))
    last = (int(events[-1]["seq"]), str(events[-1]["hash"])) if events else (0, ZERO_HASH)
    if last != head:
        rows.append(("history head", "differs", f"served {head[0]}:{head[1]}, the log ends at {last[0]}:{last[1]}"))
    if known is not None:
        held = next((e for e in events if e.get("seq") == known[0]), None)
        if held is None:
            rows.append(
                ("known head", "differs", f"the history has no event {known[0]} any more (it ends at {last[0]})")
            )
        elif held.get("hash") != known[1] or history_event_hash(held) != known[1]:
            rows.append(
                (
                    "known head",
                    "differs",
                    f"event {known[0]} now hashes {held.get('hash')}, not {known[1]}: the history was rewritten",
                )
            )
        else:
            rows.append(("known head", "ok", f"event {known[0]} is still {known[1][:16]}…"))
    if problem:
        rows.append(("board answers", "differs", problem))
    if board_head is None:
        rows.append(("board", "could not check", "the board changed while it was read; run verify again"))
    elif board_head != (0, ZERO_HASH) and not any(
        e.get("seq") == board_head[0] and e.get("hash") == board_head[1] for e in events
    ):
        rows.append(
            ("board", "differs", f"the board's head {board_head[0]}:{board_head[1]} is not an event of the history")
        )
    else:
        compared = _board_rows(history_replay(events, upto=board_head[0]), board)
        rows += _capped(compared, "board")
        if not compared:
            listed = len(board["all"])
            rows.append(("board", "ok", f"{listed} listed entries follow from the history up to event {board_head[0]}"))
    # The head to keep: only a log whose every hash and link held, and that still holds a head kept before.
    trusted = not chain and last == head and all(r[1] == "ok" for r in rows if r[0] == "known head")
    rows.append(("history head", "ok" if trusted else "differs", f"{last[0]}:{last[1]}"))
    return rows


# --- verify: the command --------------------------------------------------------------------------------------


def verify_table(rows: list[Row]) -> str:
    width = max([len("check")] + [len(row[0]) for row in rows])
    result_width = max(len(NOT_CHECKED), len("result"))
    lines = [f"{'check':<{width}}  {'result':<{result_width}}  detail"]
    lines += [f"{what:<{width}}  {result:<{result_width}}  {detail}" for what, result, detail in rows]
    return "\n".join(lines)


def verify_exit_code(rows: list[Row]) -> int:
    results = {result for _, result, _ in rows}
    if DIFFERS in results:
        return VERIFY_EXIT[DIFFERS]
    if NOT_CHECKED in results or not rows:
        return VERIFY_EXIT[NOT_CHECKED]
    return VERIFY_EXIT[VERIFIED]


def command_verify(args: argparse.Namespace) -> int:
    started = time.monotonic()
    history = bool(args.history or args.known_head)
    entry_id: int | None = None
    try:
        if args.official and not args.data:
            raise ClientError(EXIT_LOCAL, "--official grades your own data: pass --data DIR with it")
        if args.known_head:
            parse_head(args.known_head)  # a mistyped head is said before anything is fetched
        if args.entry is not None:
            portal_url, entry_id = entry_address(args.entry, args.portal)
        elif not history:
            raise ClientError(
                EXIT_LOCAL,
                "name an entry (its address, or its id with --portal), or pass --history to check the board's "
                "history alone",
            )
        elif args.data:
            raise ClientError(EXIT_LOCAL, "--data re-grades an entry's submissions: name the entry")
        else:
            portal_url = (args.portal or os.environ.get("MLEPORTAL_URL") or "").rstrip("/")
            if not portal_url:
                raise ClientError(EXIT_LOCAL, "which portal? Pass --portal URL (or set MLEPORTAL_URL)")
        PublicPortal(portal_url)  # a bad address is said here, once
    except ClientError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return VERIFY_EXIT[NOT_CHECKED]
    rows: list[Row] = []
    if entry_id is not None:
        with tempfile.TemporaryDirectory(prefix="mleportal-verify-") as work:
            rows += verify_evidence(portal_url, entry_id, work, extract=bool(args.data))
            if args.data:
                rows += verify_data(os.path.join(work, "evidence"), args.data, args.official)
    if history:
        rows += verify_history(PublicPortal(portal_url, timeout=args.http_timeout), args.known_head)
    print(verify_table(rows))
    counts = {result: sum(row[1] == result for row in rows) for result in VERIFY_EXIT}
    what = f"entry {entry_id}" if entry_id is not None else "the board's history"
    print(
        f"\n{what} at {portal_url}: {counts[VERIFIED]} ok, {counts[DIFFERS]} differ, "
        f"{counts[NOT_CHECKED]} could not be checked ({time.monotonic() - started:.2f} s)"
    )
    heads = [detail for what, result, detail in rows if what == "history head" and result == VERIFIED]
    if heads:
        print(f"history head: {heads[-1]} (keep it; next time pass --known-head {heads[-1]})")
    return verify_exit_code(rows)


# --- command line --------------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    main_parser = argparse.ArgumentParser(
        prog="mleportal", description="Make MLE-bench run bundles and upload them to an MLE portal."
    )
    main_parser.add_argument("--version", action="version", version=f"mleportal {__version__}")
    commands = main_parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def connection_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--url",
            default=os.environ.get("MLEPORTAL_URL"),
            required="MLEPORTAL_URL" not in os.environ,
            help="the portal's address, e.g. https://portal.example.org (or MLEPORTAL_URL)",
        )
        sub.add_argument(
            "--token",
            default=os.environ.get("MLEPORTAL_TOKEN", ""),
            help="an API token from the portal's Tokens page (or MLEPORTAL_TOKEN, which keeps it "
            "out of your shell history)",
        )
        sub.add_argument("--poll-interval", type=float, default=5.0, metavar="SECONDS")
        sub.add_argument(
            "--timeout",
            type=float,
            default=0.0,
            metavar="SECONDS",
            help="stop waiting after this long (exit 11); 0 waits until the status is final",
        )
        sub.add_argument("--http-timeout", type=float, default=120.0, metavar="SECONDS", help=argparse.SUPPRESS)

    up = commands.add_parser("upload", help="upload a bundle and follow it to a final status")
    up.add_argument("bundle", help="the .tar.gz, .tgz or .zip bundle")
    connection_options(up)
    up.add_argument("--no-wait", action="store_true", help="print the submission as JSON and exit after the upload")
    up.set_defaults(run=command_upload)

    status = commands.add_parser("status", help="show a submission (and optionally wait for it)")
    status.add_argument("id")
    connection_options(status)
    status.add_argument("--wait", action="store_true")
    status.set_defaults(run=command_status)

    register = commands.add_parser(
        "register", help="register a run group before running it: prints its id, nonce and deadline"
    )
    register.add_argument("--agent", required=True, help="the agent's name, as on the leaderboard")
    register.add_argument("--version", required=True, help="the agent's version")
    register.add_argument("--split", help="the split you will run: low, medium, high or split75")
    register.add_argument("--competitions", metavar="ID,ID", help="the competition ids, comma-separated, not a split")
    register.add_argument("--seeds", type=int, required=True, help="runs per competition; all of them will count")
    register.add_argument("--image", metavar="sha256:DIGEST", help="the agent image's digest (optional)")
    connection_options(register)
    register.set_defaults(run=command_register)

    make = commands.add_parser("make-bundle", help="make a bundle-v1 .tar.gz from MLE-bench run groups")
    make.add_argument("runs_dir", metavar="RUNS_DIR", help="runs/<run_group>, or a folder of run groups")
    make.add_argument("--out", required=True, metavar="BUNDLE.tar.gz")
    make.add_argument("--force", action="store_true", help="replace --out if it exists")
    make.add_argument("--agent-name", required=True)
    make.add_argument("--agent-version")
    make.add_argument("--source-url")
    make.add_argument("--commit", help="the agent's commit")
    source = make.add_mutually_exclusive_group()
    source.add_argument("--open-source", dest="open_source", action="store_true", default=None)
    source.add_argument("--closed-source", dest="open_source", action="store_false")
    make.add_argument("--llm", action="append", default=[], metavar="MODEL", help="repeat for each model used")
    make.add_argument("--split", choices=SPLITS, default="split75", help="the claimed split (default split75)")
    make.add_argument("--seeds", type=_positive_int, help="claimed seeds (default: most runs of one competition)")
    make.add_argument("--runtime-hours", type=float)
    make.add_argument("--benchmark-version", help="e.g. v1")
    make.add_argument("--benchmark-commit", help="commit of the MLE-bench grading code you used")
    internet = make.add_mutually_exclusive_group()
    internet.add_argument("--internet-access", dest="internet_access", action="store_true", default=None)
    internet.add_argument("--no-internet-access", dest="internet_access", action="store_false")
    make.add_argument("--gpu", action="append", default=[], metavar="MODEL:MEMGB:COUNT", help="e.g. A10:24:1")
    make.add_argument("--vcpus", type=_positive_int)
    make.add_argument("--ram-gb", type=float)
    make.add_argument(
        "--disclose",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="e.g. test_set_feedback=false, human_assistance=false, other_models=gpt-4o,claude",
    )
    make.add_argument("--notes")
    make.add_argument(
        "--registration", type=int, metavar="ID", help="the id `mleportal register` gave this run group, if any"
    )
    make.set_defaults(run=command_make_bundle)

    check = commands.add_parser(
        "verify",
        help="recompute a published entry's numbers from its evidence and compare them with the portal's",
        description="Download a published entry's evidence, check every file's SHA-256, recompute every tier's "
        "aggregates and the entry's rank and 95% interval with the portal's engine, and compare them with what the "
        "portal serves. Exit 0: everything agrees; 1: something differs; 2: something could not be checked.",
    )
    check.add_argument(
        "entry",
        nargs="?",
        metavar="ENTRY_URL_OR_ID",
        help="the entry's page address, or its id with --portal (none with --history: the board's history alone)",
    )
    check.add_argument(
        "--portal",
        help="the portal's address, e.g. https://portal.example.org, for an entry given by its id (default: "
        "MLEPORTAL_URL); an entry's address names its portal",
    )
    check.add_argument(
        "--data",
        metavar="DIR",
        help="your own MLE-bench prepared data (mlebench prepare): check the answers' SHA-256 and re-grade every "
        "submission locally",
    )
    check.add_argument("--official", action="store_true", help="with --data: also grade with MLE-bench's own grader")
    check.add_argument(
        "--history", action="store_true", help="replay the board's public history and check the board follows from it"
    )
    check.add_argument(
        "--known-head",
        metavar="SEQ:HASH",
        help="a head of the history you saw before: it must still be in the chain (implies --history)",
    )
    check.add_argument("--http-timeout", type=float, default=120.0, metavar="SECONDS", help=argparse.SUPPRESS)
    check.set_defaults(run=command_verify)

    data = commands.add_parser(
        "verify-data",
        help="re-grade an entry's evidence (a zip or folder you have) with your own MLE-bench data",
        description="Check each competition's answers in your MLE-bench prepared data against the evidence's "
        "SHA-256, re-grade every submission with the portal's engine (pip install the wheel the portal names at "
        "/api/v1/engine/) and compare each report field by field with the server's. Exit 0: everything agrees; "
        "1: something differs; 2: something could not be checked.",
    )
    data.add_argument("evidence", metavar="EVIDENCE", help="the entry's evidence.zip, or the folder it unpacks to")
    data.add_argument(
        "--data",
        required=True,
        metavar="DIR",
        help="your MLE-bench data directory (default of mlebench prepare: ~/.cache/mle-bench/data)",
    )
    data.add_argument("--official", action="store_true", help="also grade with MLE-bench's own grader (mlebench)")
    data.set_defaults(run=command_verify_data)
    return main_parser


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be a positive integer")
    return value


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):  # "±" on a console that cannot print it becomes "?", not a crash
            stream.reconfigure(errors="replace")
    args = parser().parse_args(argv)
    try:
        return int(args.run(args))
    except ClientError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
