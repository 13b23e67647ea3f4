"""The GPU worker as it is deployed: a real `celery -A runners.worker.app worker -Q gpu -P threads` process on the
filesystem broker, running the process backend's agents, against the stand-in portal (portal_stand_in.py:
it stands in for the portal's worker API, whose own tests live elsewhere)."""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from celery import Celery

from tests.conftest import stop_group
from tests.runners.worker.portal_stand_in import TOKEN, StandInPortal, StandInServer, capability_of

REPO = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.worker


def wait_for(
    condition: Callable[[], bool], what: str, worker: subprocess.Popen, log: Path, timeout: float = 60
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if worker.poll() is not None:
            raise AssertionError(f"the worker exited with {worker.returncode}:\n{log.read_text()[-4000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {timeout}s\n{log.read_text()[-4000:]}")
        time.sleep(0.1)


class GpuWorker:
    def __init__(
        self, portal: StandInPortal, work_dir: Path, agents_dir: Path, tmp_path: Path, **extra_env: str
    ) -> None:
        self.broker_dir = tmp_path / "broker"
        self.log = tmp_path / "worker.log"
        env = {
            name: value
            for name, value in os.environ.items()
            if name not in {"REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE", "DATABASE_URL"}
        }
        env.update(
            PORTAL_URL=portal.url,
            PORTAL_WORKER_TOKEN=TOKEN,
            PORTAL_DATA_DIR=str(tmp_path / "data"),
            RUNNER_BROKER_DIR=str(self.broker_dir),
            RUNNER_WORK_DIR=str(work_dir),
            RUNNER_PROCESS_AGENTS_DIR=str(agents_dir),
            RUNNER_POLL_SECONDS="0.05",
            RUNNER_SLOTS="2",
            PYTHONUNBUFFERED="1",
            **extra_env,
        )
        command = [sys.executable, "-m", "celery", "-A", "runners.worker.app", "worker", "-Q", "gpu", "-P", "threads",
                   "-c", "2", "--without-gossip", "--without-mingle", "--loglevel", "INFO"]  # fmt: skip
        self._log_file = self.log.open("wb")
        self.process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=self._log_file, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.portal = portal

    def wait(self, condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
        wait_for(condition, what, self.process, self.log, timeout)

    def send(self, task_id: int, attempt: int = 1, capability: str | None = None) -> None:
        """Publish as the portal does: by name, on the gpu queue, with the claim's capability (the stand-in's
        unless given; an empty one is a message queued before capabilities existed)."""
        capability = capability_of(task_id, attempt) if capability is None else capability
        folders = {name: str(self.broker_dir / folder) for name, folder in
                   [("data_folder_in", "queue"), ("data_folder_out", "queue"), ("processed_folder", "processed"),
                    ("control_folder", "control")]}  # fmt: skip
        publisher = Celery("portal-stand-in", broker="filesystem://")
        publisher.conf.broker_transport_options = {**folders, "store_processed": False}
        args = (task_id, attempt, capability) if capability else (task_id, attempt)
        publisher.send_task("runners.hosted_task", args=args, queue="gpu", ignore_result=True)

    def stop(self) -> None:
        stop_group(self.process, 15)
        self._log_file.close()


@pytest.fixture
def gpu_worker(portal, work_dir, agents_dir, tmp_path) -> Iterator[GpuWorker]:
    worker = GpuWorker(portal, work_dir, agents_dir, tmp_path)
    try:
        worker.wait(lambda: bool(portal.registers), "register")
        yield worker
    finally:
        worker.stop()


def test_the_worker_registers_runs_a_task_from_the_queue_and_finishes_it(gpu_worker, portal) -> None:
    portal.add_task(1, files={"sample_submission.csv": b"id,target\n1,0\n"})

    gpu_worker.send(1)
    gpu_worker.wait(lambda: bool(portal.finishes), "finish")

    assert portal.registers[0]["slots"] == 2 and portal.registers[0]["backend"] == "process"
    [finish] = portal.finishes
    assert (finish.task_id, finish.outcome["status"], finish.outcome["exit_code"]) == (1, "exited", 0)
    assert finish.archive
    gpu_worker.wait(lambda: len(portal.heartbeats) >= 2, "heartbeats")


def test_a_task_that_does_not_fit_goes_back_to_the_queue_and_runs_later(gpu_worker, portal) -> None:
    portal.add_task(2)
    portal.refusals[2] = [(409, "does_not_fit")]

    sent = time.monotonic()
    gpu_worker.send(2)
    gpu_worker.wait(lambda: bool(portal.finishes), "finish")

    assert portal.claims == [(2, 1), (2, 1)]
    assert portal.claim_capabilities == [capability_of(2)] * 2  # the retry re-sends the message's capability
    assert time.monotonic() - sent >= 4
    assert portal.finishes[0].outcome["status"] == "exited"
    assert "does not fit this worker now" in gpu_worker.log.read_text()


def test_a_task_that_keeps_not_fitting_is_logged_once_in_a_while_not_every_five_seconds() -> None:
    import logging

    from runners.worker.execute import DOES_NOT_FIT_LOG_EVERY, does_not_fit_level

    levels = [does_not_fit_level(retries) for retries in range(3 * DOES_NOT_FIT_LOG_EVERY)]
    assert levels.count(logging.INFO) == 3 and levels[0] == logging.INFO
    assert levels[1:DOES_NOT_FIT_LOG_EVERY] == [logging.DEBUG] * (DOES_NOT_FIT_LOG_EVERY - 1)


def test_a_message_without_the_right_capability_runs_nothing(gpu_worker, portal) -> None:
    portal.add_task(4)
    portal.add_task(5)

    gpu_worker.send(4, capability="")  # queued before capabilities existed
    gpu_worker.send(5, capability="capability-5-2")  # another attempt's
    gpu_worker.wait(lambda: len(portal.claims) == 2, "both claims")
    gpu_worker.wait(lambda: gpu_worker.log.read_text().count("refused the message's capability") == 2, "skips")

    # Two slots take the two messages in either order.
    assert sorted(portal.claim_capabilities) == ["", "capability-5-2"]
    assert not portal.finishes and not portal.downloads


def test_a_cancel_in_a_heartbeat_answer_stops_the_running_agent(gpu_worker, portal, add_agent) -> None:
    add_agent("sleeper", "echo waiting\nsleep 60\n")
    portal.add_task(3, image="sleeper:1")

    gpu_worker.send(3)
    gpu_worker.wait(lambda: any(beat["running"] for beat in portal.heartbeats), "a beat listing the task")
    portal.cancels.append({"task_id": 3, "attempt": 1})
    gpu_worker.wait(lambda: bool(portal.finishes), "finish")

    assert portal.finishes[0].outcome["status"] == "cancelled"


def test_a_bad_variable_stops_the_worker_naming_it(tmp_path: Path) -> None:
    env = {
        "PATH": os.environ["PATH"],
        "PORTAL_URL": "http://127.0.0.1:9",
        "PORTAL_WORKER_TOKEN": TOKEN,
        "RUNNER_GPUS": "lots",
        "RUNNER_BROKER_DIR": str(tmp_path / "broker"),
        "RUNNER_WORK_DIR": "/tmp/w",
    }
    done = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "runners.worker.app", "worker", "-Q", "gpu", "-P", "threads"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    assert done.returncode != 0
    assert "RUNNER_GPUS='lots' is not an integer" in done.stdout + done.stderr


def test_a_worker_that_cannot_sandbox_agents_does_not_start_and_says_how_to_fix_it(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()  # a PATH without bwrap, as on a machine where bubblewrap is not installed
    env = {
        "PATH": str(tmp_path / "bin"),
        "PORTAL_URL": "http://127.0.0.1:9",
        "PORTAL_WORKER_TOKEN": TOKEN,
        "RUNNER_BROKER_DIR": str(tmp_path / "broker"),
        "RUNNER_WORK_DIR": str(tmp_path / "work"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "runners.worker.app", "worker", "-Q", "gpu", "-P", "threads"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip

    assert done.returncode != 0
    said = done.stdout + done.stderr
    assert "this machine has no bwrap: install it (apt-get install bubblewrap)" in said, said[-2000:]
    assert "RUNNER_PROCESS_SANDBOX=off" in said


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_worker_waits_quietly_for_a_portal_that_starts_after_it(work_dir, agents_dir, tmp_path) -> None:
    """As under scripts/run, which starts the workers before the web server is up."""
    port = _free_port()
    knocks = socket.socket()
    knocks.bind(("127.0.0.1", port))
    knocks.listen()
    knocks.settimeout(60)
    worker = GpuWorker(SimpleNamespace(url=f"http://127.0.0.1:{port}"), work_dir, agents_dir, tmp_path)  # type: ignore[arg-type]
    try:
        knocks.accept()[0].close()  # the worker is waiting for the portal: it knocked, and got no answer
        knocks.close()
        time.sleep(1.5)  # and nothing listens for a while
        assert worker.process.poll() is None
        with StandInServer(port=port) as portal:
            worker.wait(lambda: len(portal.heartbeats) >= 1, "register and beat")
        log = worker.log.read_text()
    finally:
        worker.stop()
    assert "ConnectionError" not in log and "Connection refused" not in log and "failed" not in log, log
    assert f"the portal at http://127.0.0.1:{port} answers (after " in log


def test_a_portal_that_never_answers_gets_one_clear_message_and_the_worker_goes_on(
    work_dir, agents_dir, tmp_path
) -> None:
    port = _free_port()
    worker = GpuWorker(
        SimpleNamespace(url=f"http://127.0.0.1:{port}"),  # type: ignore[arg-type]
        work_dir,
        agents_dir,
        tmp_path,
        RUNNER_PORTAL_WAIT_SECONDS="2",
    )
    try:
        worker.wait(lambda: "did not answer" in worker.log.read_text(), "the message")
        log = worker.log.read_text()
        assert (
            f"GPU worker: the portal at http://127.0.0.1:{port} did not answer /healthz within 2s "
            "(RUNNER_PORTAL_WAIT_SECONDS); last error: ConnectionError"
        ) in log
        assert "Check PORTAL_URL and that the portal runs; starting anyway" in log
        assert log.count("did not answer") == 1
        with StandInServer(port=port) as portal:  # it came after all: the worker registers
            worker.wait(lambda: bool(portal.registers), "register", timeout=60)
    finally:
        worker.stop()


WITHOUT_DJANGO = """
import importlib, sys

class NoDjango:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"django", "portal", "rest_framework"}:
            raise ModuleNotFoundError(name)

sys.meta_path.insert(0, NoDjango())
MODULES = ["app", "execute", "public_data", "heartbeat", "oracle", "collect", "client", "config", "alive",
           "filesystem_broker"]
for module in MODULES + ["backends.process"]:
    importlib.import_module("runners.worker." + module)
importlib.import_module("runners.envnames")
importlib.import_module("runners.redaction")
print("imported")
"""


def test_the_worker_runs_without_django_or_the_portals_code() -> None:
    """Django is installed here, and kombu imports a piece of it when it can: the worker must not need it."""
    env = {"PATH": os.environ["PATH"], "RUNNER_BROKER_DIR": "/tmp/rw-broker-import-check"}

    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_DJANGO], cwd=REPO, env=env, capture_output=True, text=True, timeout=60
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "imported"
