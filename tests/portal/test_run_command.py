"""The README's run command: web server and worker together on embedded defaults."""

import json
import os
import re
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


def _as_from_a_terminal() -> None:
    """Ctrl-C as a terminal delivers it: a test run started in the background without job control inherits
    SIGINT ignored, and a shell cannot trap a signal ignored when it started."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


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
    # Without demo entries: tests/portal/test_demo_recipe.py starts it with them.
    env.update({"PORT": str(port), "PORTAL_DATA_DIR": str(tmp_path / "data"), "PORTAL_DEMO_ENTRIES": "0"})
    log = (tmp_path / "run.log").open("w+")
    process = subprocess.Popen(
        [str(REPO / "scripts" / "run")],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=_as_from_a_terminal,
    )
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
        checks = json.loads(body)["checks"]
        assert checks["database"] == checks["broker"] == checks["grading_workers"] == "ok", checks
        assert "Demo account" in output and "demo@example.org" in output
        assert (tmp_path / "data" / "db.sqlite3").exists()
        _, body = _get(f"http://127.0.0.1:{port}/api/v1/competitions/?tier=low")
        lite = json.loads(body)["results"]
        assert len(lite) == 22 and all(c["gradable"] for c in lite)
        # The engine's wheel was built at start-up (scripts/build_engine_wheel), and is what the API names.
        built = sorted(path.name for path in (tmp_path / "data" / "engine").glob("*.whl"))
        status, body = _get(f"http://127.0.0.1:{port}/api/v1/engine/")
        assert status == 200 and built == [json.loads(body)["wheel"]], (built, body)

        # DEBUG is on here, yet visitors get the portal's own pages: no URL pattern listing, JSON under /api/.
        status, body = _get(f"http://127.0.0.1:{port}/no-such-page/")
        assert status == 404 and "There is nothing at this address." in body
        assert "URLconf" not in body and "api/v1/" not in body.replace('href="/api/docs/"', "")
        status, body = _get(f"http://127.0.0.1:{port}/api/whatever")
        assert status == 404 and json.loads(body)["error"]["code"] == "not_found"
        status, body = _get(f"http://127.0.0.1:{port}/static/css/portal.css")
        assert status == 200 and body
        assert oct((tmp_path / "data" / "db.sqlite3").stat().st_mode & 0o777) == "0o600"
        assert oct((tmp_path / "data" / "private").stat().st_mode & 0o777) == "0o700"

        # The worker started by the run command answers a task sent through the filesystem broker.
        ping = subprocess.run(
            [
                str(REPO / ".venv" / "bin" / "python"),
                "-c",
                "import django; django.setup(); from portal.tasks import ping; print(ping.delay('x').get(timeout=60))",
            ],
            cwd=REPO,
            env={**env, "DJANGO_SETTINGS_MODULE": "portal.settings"},
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert "'echo': 'x'" in ping.stdout, ping.stderr

        # A hosted run of the example agent, on the hosted-runs worker the run command started beside them.
        token = subprocess.run(
            [str(REPO / ".venv" / "bin" / "python"), "manage.py", "issue_token", "--username", "demo", "--team",
             "Demo team"],
            cwd=REPO, env=env, capture_output=True, text=True, check=True,
        ).stdout.strip().splitlines()[-1]  # fmt: skip
        headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
        body = {"image": "example-agent:latest", "split": "low", "seeds": 1, "time_limit_hours": 1,
                "competitions": ["spooky-author-identification"]}  # fmt: skip
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/v1/hosted-runs/", data=json.dumps(body).encode(), headers=headers
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            hosted = json.loads(response.read())
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not hosted["submission_id"]:
            time.sleep(0.5)
            with urllib.request.urlopen(
                urllib.request.Request(hosted["url"].replace("/hosted-runs/", "/api/v1/hosted-runs/"), headers=headers)
            ) as response:
                hosted = json.loads(response.read())
        log.seek(0)
        assert hosted["submission_id"], log.read()[-5000:]
        assert [run["status"] for run in hosted["runs"]] == ["done"] and hosted["runs"][0]["worker"] == "local"
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


# --- supervision: a worker that dies is restarted, Ctrl-C stops everything within seconds -------------


@pytest.fixture(scope="module")
def run_data(tmp_path_factory) -> Path:
    """One data folder for the supervision tests: only the first start writes the demo packs."""
    return tmp_path_factory.mktemp("run-data")


def _group_alive(pgid: int) -> list[tuple[int, str]]:
    """Processes of a process group that still run (the killed ones' zombies may wait a moment for init)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append((int(stat.parent.name), fields[0]))
    return alive


class RunCommand:
    def __init__(self, data: Path, log_path: Path, **env):
        self.port, self.data = _free_port(), data
        clean = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "PORTAL_DATA_DIR")}
        # Without demo entries, whose grading would only slow these tests down.
        clean.update({"PORT": str(self.port), "PORTAL_DATA_DIR": str(data), "PORTAL_DEMO_ENTRIES": "0", **env})
        self.log = log_path.open("w+")
        self.process = subprocess.Popen(
            [str(REPO / "scripts" / "run")],
            cwd=REPO,
            env=clean,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=_as_from_a_terminal,
        )

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read()

    def healthz(self) -> int | None:
        try:
            return _get(f"http://127.0.0.1:{self.port}/healthz")[0]
        except OSError:
            return None

    def wait_until(self, condition, what: str, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert self.process.poll() is None, f"{what}: scripts/run exited:\n{self.output()[-5000:]}"
            assert time.monotonic() < deadline, f"{what} after {timeout}s:\n{self.output()[-5000:]}"
            time.sleep(0.3)

    def worker(self) -> int | None:
        """The process group scripts/run gave its workers (the grading worker and the hosted-runs worker)."""
        found = subprocess.run(["pgrep", "-f", f"{self.data}/celerybeat-schedule"], capture_output=True, text=True)
        for pid in map(int, found.stdout.split()):
            try:
                group = os.getpgid(pid)
            except ProcessLookupError:
                continue
            if group != self.process.pid:
                return group
        return None

    def kill_worker(self) -> int:
        pid = self.worker()
        assert pid is not None, self.output()
        os.killpg(pid, signal.SIGKILL)
        return pid

    def ping(self) -> str:
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        return subprocess.run(
            [
                str(REPO / ".venv" / "bin" / "python"),
                "-c",
                "import django; django.setup(); from portal.tasks import ping; print(ping.delay('x').get(timeout=60))",
            ],
            cwd=REPO,
            env={**env, "PORTAL_DATA_DIR": str(self.data), "DJANGO_SETTINGS_MODULE": "portal.settings"},
            capture_output=True,
            text=True,
            timeout=90,
        ).stdout

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        leftover = self.worker()
        if leftover:
            os.killpg(leftover, signal.SIGKILL)


@pytest.mark.worker
def test_the_run_command_restarts_a_killed_worker_keeps_serving_and_stops_within_seconds_on_ctrl_c(run_data, tmp_path):
    run = RunCommand(run_data, tmp_path / "run.log")
    try:
        run.wait_until(lambda: run.healthz() == 200 and run.worker(), "the portal is not up")
        first = run.kill_worker()
        assert run.healthz() == 200  # the web server does not go down with the worker
        run.wait_until(lambda: run.worker() not in (None, first), "the worker was not started again", timeout=60)
        assert "The worker stopped (killed by SIGKILL); starting it again (1 of 5)." in run.output()
        assert "'echo': 'x'" in run.ping()  # the new worker takes tasks
        assert run.healthz() == 200 and run.process.poll() is None

        second = run.worker()
        os.killpg(run.process.pid, signal.SIGINT)
        started = time.monotonic()
        run.process.wait(timeout=30)
        assert time.monotonic() - started < 6, run.output()
        assert run.process.returncode == 130 and "Stopping web server and worker ..." in run.output()
        deadline = time.monotonic() + 3
        while _group_alive(second) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _group_alive(second) == []  # nothing of the worker's process group is left
        assert run.healthz() is None
    finally:
        run.stop()


@pytest.mark.worker
def test_the_run_command_gives_up_on_a_worker_that_keeps_dying_and_says_why(run_data, tmp_path):
    run = RunCommand(run_data, tmp_path / "run.log", PORTAL_WORKER_RESTARTS="1")
    try:
        run.wait_until(lambda: run.healthz() == 200 and run.worker(), "the portal is not up")
        first = run.kill_worker()
        run.wait_until(lambda: run.worker() not in (None, first), "the worker was not started again", timeout=60)
        run.kill_worker()
        run.process.wait(timeout=30)
        output = run.output()
        assert run.process.returncode == 1
        assert "starting it again (1 of 1)" in output
        assert (
            "The worker stopped again (killed by SIGKILL) after 1 restarts, each time within 600 s of starting: "
            "it is not started again (PORTAL_WORKER_RESTARTS=1)."
        ) in output
        assert run.healthz() is None and run.worker() is None
    finally:
        run.stop()


def _grading_main_process(group: int, data: Path) -> int | None:
    """The grading worker's main process: the celery process of the group whose parent leads it."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            command = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(fields[2]) == group and int(fields[1]) == group and f"{data}/celerybeat-schedule" in command:
            return int(stat.parent.name)
    return None


@pytest.mark.worker
def test_the_run_command_replaces_a_worker_that_is_alive_but_wedged_and_says_why(run_data, tmp_path):
    run = RunCommand(run_data, tmp_path / "run.log", WORKER_HEARTBEAT_SECONDS="2", WORKER_LOST_SECONDS="6")
    stopped = None
    try:
        run.wait_until(lambda: run.healthz() == 200 and run.worker(), "the portal is not up")
        first = run.worker()
        assert first is not None
        alive = run_data / "alive"
        run.wait_until(lambda: len(list(alive.glob("grading-*"))) >= 3 and list(alive.glob("gpu-*")), "alive files")
        time.sleep(9)  # longer than WORKER_LOST_SECONDS: a healthy worker is left alone
        assert "wedged" not in run.output() and run.worker() == first

        stopped = _grading_main_process(first, run_data)
        assert stopped is not None
        os.kill(stopped, signal.SIGSTOP)  # alive, its pool processes too, but it takes nothing any more
        run.wait_until(lambda: run.worker() not in (None, first), "the wedged worker was not replaced", timeout=60)
        output = run.output()
        assert re.search(
            rf"The grading worker's process {stopped} \(stopped\) has not said it is alive for \d+ s, more than 6 "
            r"\(WORKER_LOST_SECONDS\): it is wedged; stopping the workers \(their processes are killed after 3 s\)\.",
            output,
        ), output[-3000:]
        assert "The worker was wedged; starting it again (1 of 5)." in output
        deadline = time.monotonic() + 5
        while _group_alive(first) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _group_alive(first) == []  # the stopped process and the rest of its group are gone
        assert "'echo': 'x'" in run.ping()  # the new worker takes tasks
        assert run.healthz() == 200 and run.process.poll() is None
    finally:
        if stopped is not None:
            try:
                os.kill(stopped, signal.SIGKILL)
            except ProcessLookupError:
                pass
        run.stop()


@pytest.mark.worker
def test_the_run_command_replaces_a_worker_whose_consumer_is_stuck_while_its_threads_run(run_data, tmp_path):
    """A message that is a FIFO with no writer: the consumer blocks reading it for ever, while the process's own
    threads (beat's, the heartbeat's, the alive file's) go on. Only the consumer's progress tells it."""
    run = RunCommand(
        run_data, tmp_path / "run.log", WORKER_HEARTBEAT_SECONDS="2", WORKER_LOST_SECONDS="6", WATCHDOG_SECONDS="5"
    )
    try:
        run.wait_until(lambda: run.healthz() == 200 and run.worker(), "the portal is not up")
        first = run.worker()
        assert first is not None
        stuck = _grading_main_process(first, run_data)
        assert stuck is not None
        os.mkfifo(run_data / "broker" / "queue" / "0_stuck.default.msg")
        run.wait_until(lambda: run.worker() not in (None, first), "the stuck worker was not replaced", timeout=120)
        output = run.output()
        assert re.search(
            rf"The grading worker's process {stuck} \(running\) has not said it is alive "
            r"for \d+ s, more than 6 \(WORKER_LOST_SECONDS\): it is wedged",
            output,
        ), output[-3000:]
        assert "'echo': 'x'" in run.ping()  # the new worker takes tasks: the claimed FIFO is left aside
        assert run.process.poll() is None
    finally:
        run.stop()
        for fifo in (run_data / "broker" / "queue").glob("*0_stuck.default.msg"):
            fifo.unlink()
