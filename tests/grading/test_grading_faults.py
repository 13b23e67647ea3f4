"""Faults of real worker processes: one SIGKILLed while grading, a message the broker lost.

The watchdog is called here at its beat period, as `celery beat` would; the workers are real processes
talking to the test database through Redis.
"""

import json
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis
from django.conf import settings

from grading.models import Run, Submission, WorkerHeartbeat
from grading.services import scheduling
from grading.tasks import watchdog
from tests.conftest import REPO, WorkerProcess, _worker_env
from tests.grading.builders import lite_submission

R = Run.Status
FINAL = {"in_review", "published", "rejected", "failed"}


class SlowWorker(WorkerProcess):
    """A worker process whose grading takes `delay` seconds (tests/grading/slow_worker.py)."""

    def __init__(self, *, delay: float, env: dict):
        self.name = f"slow-{uuid.uuid4().hex[:8]}@%h"
        self.log = Path(settings.DATA_DIR) / f"worker-{uuid.uuid4().hex[:8]}.log"
        command = [
            sys.executable,
            "-m",
            "tests.grading.slow_worker",
            "-A",
            "portal",
            "worker",
            "-Q",
            "default,grading",
            "-c",
            "1",
            "-n",
            self.name,
            "--without-gossip",
            "--without-mingle",
            "--loglevel",
            "INFO",
        ]
        self._log_file = self.log.open("wb")
        self.process = subprocess.Popen(
            command,
            cwd=REPO,
            stdout=self._log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=_worker_env({**env, "TEST_GRADING_DELAY": str(delay)}),
        )


def watchdog_period() -> float:
    return settings.CELERY_BEAT_SCHEDULE["grading-watchdog"]["schedule"]


def run_watchdog_until(done, *, within: float) -> float:
    """Call the watchdog every beat period until done(); the seconds it took."""
    start = time.monotonic()
    next_round = start
    while not done():
        elapsed = time.monotonic() - start
        assert elapsed < within, f"not done {elapsed:.0f} s after the fault"
        if time.monotonic() >= next_round:
            watchdog.apply()
            next_round += watchdog_period()
        time.sleep(0.2)
    return time.monotonic() - start


def wait_final(api, submission_id: int, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        response = api.get(f"/api/v1/submissions/{submission_id}/")
        assert response.status_code == 200
        if response.json()["status"] in FINAL:
            return response.json()
        time.sleep(0.3)
    raise AssertionError(f"submission {submission_id} not final after {timeout}s")


def spooky_runs(lite_run_group: Path) -> list[Path]:
    return sorted(p for p in lite_run_group.iterdir() if p.name.startswith("spooky-author-identification_"))


@pytest.mark.worker
def test_a_worker_killed_while_grading_has_its_run_finished_by_another_within_a_minute(
    registry_with_packs, alice, alice_api, start_worker, mail_dir, lite_run_group
):
    submission = lite_submission(alice.teams.get(), spooky_runs(lite_run_group)[:1])
    run = Run.objects.get(submission=submission)
    victim = SlowWorker(delay=600, env={"EMAIL_FILE_PATH": str(mail_dir)})
    try:
        victim.wait_ready()
        scheduling.runs_dispatch()
        deadline = time.monotonic() + 30
        while not Run.objects.filter(pk=run.pk, status=R.GRADING).exists():
            assert time.monotonic() < deadline, victim.output()
            time.sleep(0.1)
        claimed_by = Run.objects.get(pk=run.pk).worker
        deadline = time.monotonic() + 15
        while not WorkerHeartbeat.objects.filter(name=claimed_by).exists():  # its pool process beats
            assert time.monotonic() < deadline, victim.output()
            time.sleep(0.2)
    finally:
        victim.kill(signal.SIGKILL)
    killed = time.monotonic()
    survivor = start_worker()

    run_watchdog_until(lambda: Run.objects.filter(pk=run.pk, status=R.DONE).exists(), within=60)
    assert time.monotonic() - killed < 60
    run.refresh_from_db()
    assert run.attempts == 2 and run.worker not in ("", claimed_by)
    assert run.regraded["valid_submission"] and run.regraded["reason"] is None
    body = wait_final(alice_api, submission.pk)
    assert body["status"] in ("in_review", "published") and body["progress"] == {"done": 1, "total": 1}
    assert survivor.process.poll() is None


@pytest.mark.worker
def test_a_queued_run_whose_message_the_broker_dropped_is_sent_again_by_the_watchdog(
    registry_with_packs, alice, alice_api, start_worker, lite_run_group
):
    submission = lite_submission(alice.teams.get(), spooky_runs(lite_run_group)[:2])
    lost, other = scheduling.runs_dispatch()
    # What a worker killed right after fetching does to the filesystem broker's message: take it away.
    broker = redis.Redis.from_url(settings.REDIS_URL)
    messages = [m for m in broker.lrange("grading", 0, -1) if json.loads(m)["headers"]["argsrepr"] == f"({lost},)"]
    assert len(messages) == 1 and broker.lrem("grading", 1, messages[0]) == 1

    start_worker()
    deadline = time.monotonic() + 30
    while not Run.objects.filter(pk=other, status=R.DONE).exists():
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert watchdog.apply().get()["runs_resent"] == 0  # too soon to tell a lost message from a slow worker
    assert Run.objects.get(pk=lost).status == R.QUEUED

    # A run queued after it was claimed WORKER_LOST_SECONDS ago: its message is gone, and is sent again.
    took = run_watchdog_until(
        lambda: Run.objects.filter(pk=lost, status=R.DONE).exists(),
        within=settings.WORKER_LOST_SECONDS + 2 * watchdog_period() + 10,
    )
    assert took < 60
    assert Run.objects.get(pk=lost).attempts == 1
    body = wait_final(alice_api, submission.pk)
    assert body["status"] in ("in_review", "published") and body["progress"] == {"done": 2, "total": 2}
    assert Submission.objects.get(pk=submission.pk).status == body["status"]
