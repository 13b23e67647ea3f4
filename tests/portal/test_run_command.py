"""The README's run command: web server and worker together on embedded defaults."""

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.mark.worker
def test_the_run_command_serves_the_portal_with_a_worker_and_stops_on_ctrl_c(tmp_path):
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "PORTAL_DATA_DIR")}
    env.update({"PORT": str(port), "PORTAL_DATA_DIR": str(tmp_path / "data")})
    log = (tmp_path / "run.log").open("w+")
    process = subprocess.Popen([str(REPO / "scripts" / "run")], cwd=REPO, env=env, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        # The first start also writes and imports the synthetic Lite packs.
        deadline = time.monotonic() + 300
        status = None
        while time.monotonic() < deadline:
            try:
                status, body = _get(f"http://127.0.0.1:{port}/healthz")
                if status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.5)
        log.seek(0)
        output = log.read()
        assert status == 200, output
        assert json.loads(body)["checks"] == {"database": "ok", "broker": "ok"}
        assert "Demo account" in output and "demo@example.org" in output
        assert (tmp_path / "data" / "db.sqlite3").exists()
        _, body = _get(f"http://127.0.0.1:{port}/api/v1/competitions/?tier=low")
        lite = json.loads(body)["results"]
        assert len(lite) == 22 and all(c["gradable"] for c in lite)

        # The worker started by the run command answers a task sent through the filesystem broker.
        ping = subprocess.run(
            [str(REPO / ".venv" / "bin" / "python"), "-c",
             "import django; django.setup(); from portal.tasks import ping; print(ping.delay('x').get(timeout=60))"],
            cwd=REPO, env={**env, "DJANGO_SETTINGS_MODULE": "portal.settings"}, capture_output=True, text=True,
            timeout=90,
        )
        assert "'echo': 'x'" in ping.stdout, ping.stderr
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            raise
    with pytest.raises(OSError):
        _get(f"http://127.0.0.1:{port}/healthz")
    leftover = subprocess.run(["pgrep", "-f", f"runserver 127.0.0.1:{port}"], capture_output=True, text=True)
    assert leftover.stdout.strip() == ""
