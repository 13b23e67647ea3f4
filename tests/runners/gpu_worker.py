"""The deployed pieces of a hosted run, for end-to-end tests: the portal's live server and grading worker
(tests/conftest.py) and a real GPU worker process (`celery -A runners.worker.app worker -Q gpu -P threads`)
that reaches the portal over HTTP with a worker token and gets no database settings."""

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.conf import settings

from runners.models import GpuWorker
from runners.services.workers import worker_token_issue
from tests.conftest import stop_group

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_AGENT = REPO / "runners" / "agents" / "example-agent"


class GpuWorkerProcess:
    def __init__(self, *, portal_url: str, name: str, backend: str, agents_dir: Path, work_dir: Path, env: dict):
        _, self.token = worker_token_issue(name=name)
        self.agents_dir = agents_dir
        self.work_dir = work_dir
        self.log = Path(settings.DATA_DIR) / f"gpu-worker-{name}.log"
        # Nothing of the portal's own configuration: no database, no private files, no secret key.
        child_env = {
            key: value
            for key, value in os.environ.items()
            if key not in {"DATABASE_URL", "PORTAL_PRIVATE_ROOT", "SECRET_KEY", "DJANGO_SETTINGS_MODULE"}
        }
        child_env.update(
            PORTAL_URL=portal_url,
            PORTAL_WORKER_TOKEN=self.token,
            CELERY_BROKER_URL=settings.REDIS_URL or "",
            RUNNER_BACKEND=backend,
            RUNNER_PROCESS_AGENTS_DIR=str(agents_dir),
            RUNNER_WORK_DIR=str(work_dir),
            RUNNER_GPUS="1",
            RUNNER_GPU_MODEL="A10",
            RUNNER_SLOTS="2",
            RUNNER_POLL_SECONDS="0.1",
            PYTHONUNBUFFERED="1",
            **env,
        )
        command = [sys.executable, "-m", "celery", "-A", "runners.worker.app", "worker", "-Q", "gpu", "-P",
                   "threads", "-c", "2", "-n", f"{name}@%h", "--without-gossip", "--without-mingle",
                   "--loglevel", "INFO"]  # fmt: skip
        self._log_file = self.log.open("wb")
        self.process = subprocess.Popen(
            command, cwd=REPO, env=child_env, stdout=self._log_file, stderr=subprocess.STDOUT, start_new_session=True
        )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self, sig: int = 15) -> None:
        stop_group(self.process, sig)
        self._log_file.close()

    def kill_orphans(self) -> None:
        """Agents of a worker killed without warning run on in their own process groups, as they would on a
        crashed machine's survivors; the test ends them."""
        subprocess.run(["pkill", "-9", "-f", str(self.agents_dir)], check=False)


def agents_folder(root: Path, *, scripts: dict[str, str]) -> Path:
    """RUNNER_PROCESS_AGENTS_DIR with the example agent and one folder per extra agent (its start.sh)."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(EXAMPLE_AGENT, root / "example-agent", dirs_exist_ok=True)
    for name, script in scripts.items():
        (root / name).mkdir(exist_ok=True)
        (root / name / "start.sh").write_text(script)
    return root


@pytest.fixture
def start_gpu_worker(live_server, tmp_path_factory) -> Iterator[Callable[..., GpuWorkerProcess]]:
    started: list[GpuWorkerProcess] = []

    def start(
        *, name: str = "gpu-test", backend: str = "process", agents: Path | None = None, approve: bool = True, **env
    ):
        # A short work folder: the process backend's agents reach the oracle's socket by its path (107 bytes).
        work = Path(f"/tmp/gw-{os.getpid()}-{len(started)}")
        shutil.rmtree(work, ignore_errors=True)
        worker = GpuWorkerProcess(
            portal_url=live_server.url,
            name=name,
            backend=backend,
            agents_dir=agents or agents_folder(tmp_path_factory.mktemp("agents"), scripts={}),
            work_dir=work,
            env=env,
        )
        started.append(worker)
        if approve:  # as a maintainer does on the approval page, once it declared its hardware
            from tests.runners.builders import approve as approve_worker

            registered = wait_until(
                lambda: GpuWorker.objects.filter(name=name, registered_at__isnull=False).first(),
                f"{name} registered",
                timeout=90,
                logs=worker.output,
            )
            approve_worker(registered)
        return worker

    try:
        yield start
    finally:
        for number, worker in enumerate(started):
            worker.kill()
            worker.kill_orphans()
            shutil.rmtree(f"/tmp/gw-{os.getpid()}-{number}", ignore_errors=True)


def wait_until(condition: Callable[[], object], what: str, *, timeout: float = 120, logs: Callable[[], str] = str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"{what}: not after {timeout} s\n{logs()[-6000:]}")
