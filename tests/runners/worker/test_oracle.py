"""The format-check oracle on a real Unix socket, and validate_submission.sh talking to it with curl and with
python3. The portal side is an injected forward callable here (the client's validate() is tested against the
stand-in portal in test_client.py, the portal's endpoint in its own tests)."""

import http.client
import json
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runners.worker.client import PortalRefused
from runners.worker.execute import VALIDATE_SCRIPT
from runners.worker.oracle import OracleServer
from runners.worker.public_data import remove_tree


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: Path) -> None:
        super().__init__("oracle", timeout=10)
        self.socket_path = str(path)

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.socket_path)


def post(socket_path: Path, body: bytes, content_type: str = "text/csv", path: str = "/validate") -> tuple[int, Any]:
    connection = UnixConnection(socket_path)
    connection.request("POST", path, body=body, headers={"Content-Type": content_type})
    response = connection.getresponse()
    return response.status, json.loads(response.read())


class Portal:
    """The forward callable: the verdict the portal would give, and what it was asked."""

    def __init__(self) -> None:
        self.asked: list[bytes] = []
        self.down = False
        self.limited = False

    def __call__(self, csv: bytes) -> dict[str, Any]:
        if self.down:
            raise ConnectionError("the portal is unreachable")
        if self.limited:
            raise PortalRefused(
                429, "format_checks_rate_limited", "at most 10 format checks a minute: try again in 7 s"
            )
        self.asked.append(csv)
        if csv.startswith(b"id,"):
            return {"valid": True, "reason": None}
        return {"valid": False, "reason": "the first column must be id"}


@pytest.fixture
def folder() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="ro-", dir="/tmp"))
    (path / "logs").mkdir()
    yield path
    remove_tree(path)


@pytest.fixture
def portal() -> Portal:
    return Portal()


@pytest.fixture
def oracle(folder: Path, portal: Portal) -> Iterator[OracleServer]:
    server = OracleServer(folder / "oracle.sock", forward=portal, log_path=folder / "logs" / "format_checks.jsonl")
    server.start()
    yield server
    server.stop()


def test_it_answers_the_portals_verdict_over_the_unix_socket(oracle, portal) -> None:
    assert post(oracle.socket_path, b"id,target\n1,0\n") == (200, {"valid": True, "reason": None})
    assert post(oracle.socket_path, b"x,target\n") == (200, {"valid": False, "reason": "the first column must be id"})
    assert portal.asked == [b"id,target\n1,0\n", b"x,target\n"]


def test_it_takes_the_csv_from_a_multipart_file_field(oracle, portal) -> None:
    boundary = "b0undary"
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n'
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="s.csv"\r\n'
        f"Content-Type: text/csv\r\n\r\nid,target\r\n1,0\r\n\r\n--{boundary}--\r\n"
    ).encode()

    status, answer = post(oracle.socket_path, body, f"multipart/form-data; boundary={boundary}")

    assert (status, answer["valid"]) == (200, True)
    assert portal.asked == [b"id,target\r\n1,0\r\n"]


def test_a_link_the_agent_left_as_its_log_is_not_followed(oracle, folder, tmp_path) -> None:
    outside = tmp_path / "a-file-of-the-workers"
    outside.write_text("untouched\n")
    (folder / "logs" / "format_checks.jsonl").symlink_to(outside)

    assert post(oracle.socket_path, b"id,target\n")[0] == 200  # the check is answered, only not logged

    assert outside.read_text() == "untouched\n"


def test_it_logs_each_check_to_format_checks_jsonl(oracle, folder) -> None:
    post(oracle.socket_path, b"id,target\n")
    post(oracle.socket_path, b"nope\n")

    lines = [json.loads(line) for line in (folder / "logs" / "format_checks.jsonl").read_text().splitlines()]
    assert [(line["valid"], line["reason"], line["bytes"]) for line in lines] == [
        (True, None, 10),
        (False, "the first column must be id", 5),
    ]
    assert all(line["at"].endswith("+00:00") for line in lines)


def test_it_answers_503_when_the_portal_cannot_be_asked(oracle, portal) -> None:
    portal.down = True

    status, answer = post(oracle.socket_path, b"id,target\n")

    assert status == 503
    assert answer["valid"] is None
    assert "could not be made" in answer["reason"]


def test_it_answers_404_elsewhere_and_stops_cleanly(oracle) -> None:
    assert post(oracle.socket_path, b"", path="/score")[0] == 404
    oracle.stop()
    oracle.stop()
    assert not oracle.socket_path.exists()


def run_script(
    oracle: OracleServer, folder: Path, csv: bytes | None, *, path: str | None = None
) -> subprocess.CompletedProcess:
    submission = folder / "submission"
    submission.mkdir(exist_ok=True)
    if csv is not None:
        (submission / "submission.csv").write_bytes(csv)
    env = {
        "PATH": path or os.environ["PATH"],
        "SUBMISSION_DIR": str(submission),
        "ORACLE_SOCKET": str(oracle.socket_path),
    }
    return subprocess.run(["/bin/bash", str(VALIDATE_SCRIPT)], env=env, capture_output=True, text=True, timeout=30)


def python_only_path(folder: Path) -> str:
    """A PATH with python3 and no curl, as in a minimal image."""
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    python = shutil.which("python3") or "/usr/bin/python3"
    (bin_dir / "python3").symlink_to(os.path.realpath(python))
    return str(bin_dir)


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed here")
def test_the_script_exits_0_for_a_valid_file_and_1_for_an_invalid_one_with_curl(oracle, folder) -> None:
    valid = run_script(oracle, folder, b"id,target\n1,0\n")
    assert (valid.returncode, json.loads(valid.stdout)) == (0, {"valid": True, "reason": None})

    invalid = run_script(oracle, folder, b"wrong\n")
    assert invalid.returncode == 1
    assert json.loads(invalid.stdout)["reason"] == "the first column must be id"


def test_the_script_falls_back_to_python3_without_curl(oracle, folder) -> None:
    path = python_only_path(folder)

    assert run_script(oracle, folder, b"id,target\n", path=path).returncode == 0
    invalid = run_script(oracle, folder, b"wrong\n", path=path)
    assert invalid.returncode == 1
    assert json.loads(invalid.stdout)["valid"] is False


@pytest.mark.parametrize("with_curl", [True, False], ids=["curl", "python3"])
def test_the_script_exits_2_when_the_check_cannot_be_made(oracle, folder, portal, with_curl: bool) -> None:
    if with_curl and shutil.which("curl") is None:
        pytest.skip("curl is not installed here")
    path = None if with_curl else python_only_path(folder)
    portal.down = True

    assert run_script(oracle, folder, b"id,target\n", path=path).returncode == 2
    oracle.stop()
    assert run_script(oracle, folder, b"id,target\n", path=path).returncode == 2


@pytest.mark.parametrize("with_curl", [True, False], ids=["curl", "python3"])
def test_the_agent_reads_why_the_portal_refused_a_check_over_its_rate_limit(
    oracle, folder, portal, with_curl: bool
) -> None:
    if with_curl and shutil.which("curl") is None:
        pytest.skip("curl is not installed here")
    portal.limited = True

    done = run_script(oracle, folder, b"id,target\n", path=None if with_curl else python_only_path(folder))

    assert done.returncode == 2
    assert json.loads(done.stdout) == {"valid": None, "reason": "at most 10 format checks a minute: try again in 7 s"}


def test_the_script_exits_2_without_a_file_to_check(oracle, folder) -> None:
    done = run_script(oracle, folder, None)

    assert done.returncode == 2
    assert "no file at" in done.stderr


def test_the_script_exits_2_with_neither_curl_nor_python3(oracle, folder) -> None:
    empty = folder / "empty-bin"
    empty.mkdir()

    done = run_script(oracle, folder, b"id,target\n", path=str(empty))

    assert done.returncode == 2
    assert "neither curl nor python3" in done.stderr


def test_it_binds_a_socket_whose_path_is_longer_than_unix_sockets_allow(folder: Path, portal: Portal) -> None:
    deep = folder / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    server = OracleServer(deep / "oracle.sock", forward=portal, log_path=folder / "logs" / "checks.jsonl")
    server.start()
    try:
        assert (deep / "oracle.sock").is_socket()
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        fd = os.open(deep, os.O_RDONLY)
        try:
            connection.connect(f"/proc/self/fd/{fd}/oracle.sock")
        finally:
            os.close(fd)
            connection.close()
    finally:
        server.stop()
    assert not (deep / "oracle.sock").exists()
