"""upload: a streamed multipart body, polling to a final status, the figures, and exit codes."""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tracemalloc
from email import policy
from email.parser import BytesParser

import pytest

from .conftest import CLIENT

TOKEN = "t0k3n-abc"
SUBMISSION = "/api/v1/submissions/42/"
MB = 1000 * 1000


def accepted(portal) -> tuple[int, dict]:
    return 202, {
        "id": 42,
        "status": "received",
        "url": f"{portal.url}/api/v1/submissions/42/",
        "page_url": f"{portal.url}/submissions/42/",
    }


def figures(mean: float, sem: float, seeds: int) -> dict:
    return {"seeds": seeds, "any_medal": {"mean": mean, "sem": sem}, "gold": {"mean": 0.0, "sem": 0.0}}


def submission(status: str, **extra) -> tuple[int, dict]:
    body = {"id": 42, "status": status, "progress": {"done": 0, "total": 3}, "flags": [], "aggregates": {}}
    body.update(extra)
    return 200, body


def run(mleportal, *args: str) -> int:
    return mleportal.main(list(args))


def test_the_multipart_body_is_correct(mleportal, portal, tmp_path, capsys):
    bundle = tmp_path / "aide.tar.gz"
    data = bytes(range(256)) * 40 + b"\r\n--not-a-boundary\r\n"
    bundle.write_bytes(data)
    portal.answer("POST", "/api/v1/submissions/", accepted(portal))
    assert run(mleportal, "upload", str(bundle), "--url", portal.url, "--token", TOKEN, "--no-wait") == 0

    (request,) = portal.requests
    assert request["path"] == "/api/v1/submissions/"
    assert request["headers"]["Authorization"] == f"Token {TOKEN}"
    content_type = request["headers"]["Content-Type"]
    assert content_type.startswith("multipart/form-data; boundary=")
    boundary = content_type.split("boundary=", 1)[1]
    assert request["body"] == (
        f'--{boundary}\r\nContent-Disposition: form-data; name="bundle"; filename="aide.tar.gz"\r\n'
        f"Content-Type: application/gzip\r\n\r\n".encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    assert int(request["headers"]["Content-Length"]) == len(request["body"])
    # An independent parser reads the same field back.
    message = BytesParser(policy=policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + request["body"]
    )
    (part,) = message.iter_parts()
    assert part.get_param("name", header="content-disposition") == "bundle"
    assert part.get_filename() == "aide.tar.gz"
    out = capsys.readouterr()
    assert '"id": 42' in out.out and "upload [" in out.err and "100.0%" in out.err


def test_it_streams_a_200_mb_bundle_in_little_memory(mleportal, portal, tmp_path, capsys):
    bundle = tmp_path / "big.tar.gz"
    size = 200 * MB
    with bundle.open("wb") as f:
        f.truncate(size)  # sparse: 200 MB of zeros that take no disk
    portal.answer("POST", "/api/v1/submissions/", accepted(portal))
    tracemalloc.start()
    try:
        code = run(mleportal, "upload", str(bundle), "--url", portal.url, "--token", TOKEN, "--no-wait")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert code == 0
    # The peak covers this process: the client and the recording server thread, both reading in chunks.
    assert peak < 16 * 1024 * 1024, f"peak {peak / MB:.1f} MB for a {size / MB:.0f} MB upload"

    (request,) = portal.requests
    boundary = request["headers"]["Content-Type"].split("boundary=", 1)[1]
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="bundle"; filename="big.tar.gz"\r\n'
        f"Content-Type: application/gzip\r\n\r\n"
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    expected = hashlib.sha256(head)
    zeros = bytes(MB)
    for _ in range(size // MB):
        expected.update(zeros)
    expected.update(tail)
    assert request["length"] == len(head) + size + len(tail) == int(request["headers"]["Content-Length"])
    assert request["sha256"] == expected.hexdigest()
    err = capsys.readouterr().err
    assert "200.0/200.0 MB" in err and "MB/s" in err


def test_it_polls_until_published_and_prints_the_figures(mleportal, portal, tmp_path, capsys):
    bundle = tmp_path / "b.zip"
    bundle.write_bytes(b"PK\x05\x06" + bytes(18))
    portal.answer("POST", "/api/v1/submissions/", accepted(portal))
    portal.answer(
        "GET",
        SUBMISSION,
        submission("validating"),
        submission("grading", progress={"done": 1, "total": 3}),
        submission("grading", progress={"done": 3, "total": 3}),
        submission(
            "published",
            url=f"{portal.url}/api/v1/submissions/42/",
            page_url=f"{portal.url}/submissions/42/",
            comparable=False,
            progress={"done": 3, "total": 3},
            aggregates={
                "low": {"complete": figures(22.727, 1.516, 3), "padded": figures(18.18, 2.0, 4)},
                "all": {"complete": None, "padded": figures(10.0, 0.5, 4)},
            },
            flags=[
                {
                    "code": "padded_seeds",
                    "severity": "warning",
                    "tiers": ["low", "all"],
                    "message": "spaceship-titanic has 3 runs for 4 seeds",
                    "resolution": None,
                },
            ],
        ),
    )
    code = run(mleportal, "upload", str(bundle), "--url", portal.url, "--token", TOKEN, "--poll-interval", "0.01")
    out, err = capsys.readouterr()
    assert code == 0
    gets = [r for r in portal.requests if r["method"] == "GET"]
    assert len(gets) == 4 and all(r["headers"]["Authorization"] == f"Token {TOKEN}" for r in gets)
    assert "status: validating  0/3" in err and "status: grading  1/3" in err and "status: published  3/3" in err
    assert "submission 42: published" in out and "comparable: no" in out
    low = next(line for line in out.splitlines() if line.startswith("low "))
    assert low.split() == ["low", "22.73", "±", "1.52", "3", "18.18", "±", "2.00", "4"]
    all_ = next(line for line in out.splitlines() if line.startswith("all "))
    assert all_.split() == ["all", "-", "-", "10.00", "±", "0.50", "4"]
    assert "[warning] padded_seeds (low,all): spaceship-titanic has 3 runs for 4 seeds" in out
    # The last line is the page a person opens, never the API's address.
    assert out.splitlines()[-1] == f"page: {portal.url}/submissions/42/"
    assert "/api/" not in out
    assert f"uploaded: submission 42 is received; its page: {portal.url}/submissions/42/" in err


@pytest.mark.parametrize("status, exit_code", [("rejected", 3), ("failed", 4), ("in_review", 0)])
def test_the_exit_code_follows_the_final_status(mleportal, portal, tmp_path, capsys, status, exit_code):
    bundle = tmp_path / "b.tgz"
    bundle.write_bytes(b"\x1f\x8b")
    portal.answer("POST", "/api/v1/submissions/", accepted(portal))
    portal.answer("GET", SUBMISSION, submission("checking"), submission(status, status_reason="the reason"))
    code = run(mleportal, "upload", str(bundle), "--url", portal.url, "--token", TOKEN, "--poll-interval", "0.01")
    out, err = capsys.readouterr()
    assert code == exit_code
    assert f"submission 42: {status}" in out and "reason: the reason" in out
    assert (f"error: the submission was {status}" in err) == (exit_code != 0)


def test_from_a_portal_that_sends_no_page_url_the_page_is_made_from_the_url_given(mleportal, portal, tmp_path, capsys):
    bundle = tmp_path / "b.tgz"
    bundle.write_bytes(b"\x1f\x8b")
    portal.answer("POST", "/api/v1/submissions/", (202, {"id": 42, "status": "received"}))
    portal.answer("GET", SUBMISSION, submission("published", url=f"{portal.url}/api/v1/submissions/42/"))
    code = run(mleportal, "upload", str(bundle), "--url", portal.url, "--token", TOKEN, "--poll-interval", "0.01")
    out, err = capsys.readouterr()
    assert code == 0
    assert out.splitlines()[-1] == f"page: {portal.url}/submissions/42/"
    assert f"its page: {portal.url}/submissions/42/" in err
    assert run(mleportal, "status", "42", "--url", portal.url, "--token", TOKEN) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"page: {portal.url}/submissions/42/"


def test_polling_waits_out_a_portal_restart(mleportal, portal, tmp_path, capsys):
    bundle = tmp_path / "b.tgz"
    bundle.write_bytes(b"\x1f\x8b")
    portal.answer("POST", "/api/v1/submissions/", accepted(portal))
    portal.answer("GET", SUBMISSION, (503, b"<html>restarting</html>"), submission("published"))
    code = run(mleportal, "upload", str(bundle), "--url", portal.url, "--token", TOKEN, "--poll-interval", "0.01")
    assert code == 0 and "still waiting" in capsys.readouterr().err


def test_it_gives_up_after_its_timeout(mleportal, portal, tmp_path, capsys):
    bundle = tmp_path / "b.tgz"
    bundle.write_bytes(b"\x1f\x8b")
    portal.answer("POST", "/api/v1/submissions/", accepted(portal))
    portal.answer("GET", SUBMISSION, submission("grading"))
    code = run(
        mleportal,
        "upload",
        str(bundle),
        "--url",
        portal.url,
        "--token",
        TOKEN,
        "--poll-interval",
        "0.01",
        "--timeout",
        "0.05",
    )
    assert code == 11 and "the submission is still grading" in capsys.readouterr().err


@pytest.mark.parametrize(
    "status, body, exit_code, shown",
    [
        (
            400,
            {
                "error": {
                    "code": "manifest_invalid",
                    "details": {"key": "benchmark.split"},
                    "message": "manifest.json: 'benchmark.split' must be one of low, medium, high, split75; got 'lite'",
                }
            },
            5,
            "HTTP 400 Bad Request: manifest.json: 'benchmark.split' must be one of low, medium, high, "
            'split75; got \'lite\' [manifest_invalid]\n  details: {"key": "benchmark.split"}',
        ),
        (
            401,
            {"error": {"code": "not_authenticated", "message": "Invalid token.", "details": {}}},
            6,
            "Invalid token. [not_authenticated]",
        ),
        (
            413,
            b"<html><body><h1>413 Request Entity Too Large</h1></body></html>",
            7,
            "413 Request Entity Too Large",
        ),
        (
            429,
            {"error": {"code": "quota", "message": "3 uploads a day; next at 14:00", "details": {}}},
            8,
            "3 uploads a day; next at 14:00",
        ),
        (
            500,
            {"error": {"code": "server_error", "message": "Something broke on our side.", "details": {}}},
            9,
            "Something broke on our side.",
        ),
    ],
)
def test_it_prints_the_server_s_error_message(mleportal, portal, tmp_path, capsys, status, body, exit_code, shown):
    bundle = tmp_path / "b.tgz"
    bundle.write_bytes(b"\x1f\x8b" + bytes(1000))
    portal.answer("POST", "/api/v1/submissions/", (status, body))
    code = run(mleportal, "upload", str(bundle), "--url", portal.url, "--token", TOKEN)
    err = capsys.readouterr().err
    assert code == exit_code
    assert "error: upload: " in err and shown in err


def test_it_says_when_the_portal_cannot_be_reached(mleportal, tmp_path, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: nothing listens there
    bundle = tmp_path / "b.tgz"
    bundle.write_bytes(b"\x1f\x8b")
    code = run(mleportal, "upload", str(bundle), "--url", f"http://127.0.0.1:{port}", "--token", TOKEN)
    assert code == 10 and "cannot upload to" in capsys.readouterr().err


def test_it_refuses_a_missing_file_or_token(mleportal, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MLEPORTAL_TOKEN", raising=False)
    assert run(mleportal, "upload", str(tmp_path / "nope.tgz"), "--url", "http://x", "--token", TOKEN) == 1
    (tmp_path / "b.tgz").write_bytes(b"\x1f\x8b")
    assert run(mleportal, "upload", str(tmp_path / "b.tgz"), "--url", "http://127.0.0.1:9") == 1
    err = capsys.readouterr().err
    assert "no such file" in err and "no token" in err


def _imported(nodes) -> set[str]:
    names = {alias.name.split(".")[0] for node in nodes if isinstance(node, ast.Import) for alias in node.names}
    return names | {node.module.split(".")[0] for node in nodes if isinstance(node, ast.ImportFrom) and node.module}


def test_the_client_is_python_3_9_and_standard_library_only():
    tree = ast.parse(CLIENT.read_text(), feature_version=(3, 9))
    assert _imported(tree.body) - {"__future__"} <= set(sys.stdlib_module_names)
    # Only verify imports more, inside a function: the portal's engine (its wheel), when it recomputes.
    assert _imported(ast.walk(tree)) - {"__future__"} - set(sys.stdlib_module_names) <= {"grading"}


@functools.cache
def oldest_python() -> str | None:
    """Python 3.9, the oldest the client supports: PYTHON39 names it, else a working python3.9 on PATH."""
    candidate = os.environ.get("PYTHON39") or shutil.which("python3.9")
    if not candidate:
        return None
    probe = subprocess.run(
        [candidate, "-c", "import sys; assert sys.version_info[:2] == (3, 9)"],
        capture_output=True,
        timeout=30,
    )
    return candidate if probe.returncode == 0 else None  # a pyenv shim without 3.9 selected fails here


@pytest.mark.skipif(not oldest_python(), reason="no Python 3.9 here (set PYTHON39 to its path to run this)")
def test_the_client_runs_on_python_3_9(portal, tmp_path):
    runs = tmp_path / "runs" / "2024-08-01_run-group_aide"
    (runs / "spaceship-titanic_1" / "submission").mkdir(parents=True)
    (runs / "spaceship-titanic_1" / "submission" / "submission.csv").write_text("id,label\n1,0\n")
    bundle = tmp_path / "b.tar.gz"
    make = [oldest_python(), str(CLIENT), "make-bundle", str(runs), "--out", str(bundle), "--agent-name", "A"]
    subprocess.run(make, check=True, capture_output=True, timeout=60)
    portal.answer("POST", "/api/v1/submissions/", accepted(portal))
    portal.answer("GET", SUBMISSION, submission("published"))
    upload = [
        oldest_python(),
        str(CLIENT),
        "upload",
        str(bundle),
        "--url",
        portal.url,
        "--token",
        TOKEN,
        "--poll-interval",
        "0.01",
    ]
    done = subprocess.run(upload, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "submission 42: published" in done.stdout
    assert portal.requests[0]["length"] > bundle.stat().st_size
