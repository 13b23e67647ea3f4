"""Hosted runs end to end: the live portal, its grading worker and a real GPU worker process that reaches the
portal over HTTP only, with the process backend and with the Docker backend on a real engine."""

import csv
import json
import shutil
import signal
import time
from pathlib import Path

import pytest
from django.test import override_settings

from grading.models import Submission
from leaderboard.models import Entry
from runners.models import FormatCheck, GpuWorker, HostedRun, HostedTask
from runners.services.watchdog import hosted_watchdog
from tests.runners.builders import COMPETITION, SECRET, hosted_body
from tests.runners.gpu_worker import agents_folder, wait_until

pytestmark = pytest.mark.worker

SLEEPER = "#!/usr/bin/env bash\necho started\nwhile true; do sleep 0.2; done\n"


def with_training_data(packs: Path, into: Path) -> Path:
    """The competition's pack with a public train.csv, so the example agent has something to learn from
    (the class shares of the synthetic answers, under ids of their own)."""
    folder = into / COMPETITION
    shutil.copytree(packs / COMPETITION, folder)
    spec = json.loads((folder / "pack.json").read_text())
    with (folder / spec["answers"]).open() as source, (folder / "public" / "train.csv").open("w") as train:
        reader, writer = csv.reader(source), csv.writer(train)
        writer.writerow(next(reader))
        for number, row in enumerate(reader):
            writer.writerow([f"train{number}", *row[1:]])
    return folder


@pytest.fixture
def hosted_registry(transactional_db, lite_packs, tmp_path):
    from competitions.pack_services import pack_import
    from competitions.services import competitions_load

    competitions_load()
    pack_import(path=lite_packs)
    pack_import(path=with_training_data(lite_packs, tmp_path / "packs"))


def _ask(api, **overrides) -> HostedRun:
    response = api.post("/api/v1/hosted-runs/", hosted_body(**overrides), format="json")
    assert response.status_code == 202, response.content
    return HostedRun.objects.get(pk=response.json()["id"])


def _task(run: HostedRun) -> HostedTask:
    return HostedTask.objects.select_related("worker").get(hosted_run=run)


def _published(run: HostedRun, logs) -> Submission:
    def published():
        run.refresh_from_db()
        if run.status == HostedRun.Status.FAILED:
            raise AssertionError(f"the hosted run failed: {run.status_reason}\n{logs()[-4000:]}")
        return run.submission if run.submission and run.submission.status == Submission.Status.PUBLISHED else None

    return wait_until(published, "the hosted run's submission published", timeout=180, logs=logs)


def _assert_graded_and_verified(run: HostedRun, submission: Submission, worker, api) -> None:
    assert submission.origin == Submission.Origin.HOSTED
    (graded,) = submission.runs.all()
    assert graded.competition.slug == COMPETITION and graded.valid_submission, graded.regraded
    task = _task(run)
    assert task.status == HostedTask.Status.DONE and task.exit_code == 0
    assert FormatCheck.objects.filter(task=task, valid=True).count() == 1  # the agent checked once
    (counted,) = submission.flags.filter(code="format_checks")
    assert counted.severity == "info" and list(counted.evidence["calls_per_run"].values()) == [1]
    assert submission.manifest["hardware"]["gpus"] == [{"model": "A10", "count": 1}]
    assert 0 < submission.manifest["runtime_hours"] < 0.1
    entry = wait_until(lambda: Entry.objects.filter(submission=submission).first(), "the board's entry")
    assert entry.verified == Entry.Verified.HOSTED
    # The team's secret reached the agent (it is in the claim) but nothing kept or shows it.
    from grading.services.submissions import submission_folder

    assert not any(
        SECRET.encode() in path.read_bytes() for path in submission_folder(submission).rglob("*") if path.is_file()
    )
    assert SECRET not in worker.output()
    assert SECRET not in api.get(f"/api/v1/hosted-runs/{run.pk}/").content.decode()
    assert SECRET not in api.get(f"/api/v1/submissions/{submission.pk}/").content.decode()
    assert SECRET not in task.output_tail


def test_a_hosted_run_with_the_process_backend_is_graded_and_published_as_verified(
    hosted_registry, celery_worker, start_gpu_worker, alice_api
):
    worker = start_gpu_worker()
    # The example agent prints the variable's name and length; the worker redacts a secret's value anyway.
    run = _ask(alice_api, gpus_per_run=1)
    submission = _published(run, worker.output)
    _assert_graded_and_verified(run, submission, worker, alice_api)
    # The run registered itself; the worker wrote the nonce as run.log's first line, so the run is part of it.
    run.refresh_from_db()
    assert submission.registration_id == run.registration_id and submission.manifest["registration"]
    from grading.services.submissions import submission_folder

    (log,) = (submission_folder(submission) / "bundle").rglob("run.log")
    assert log.read_text().splitlines()[0] == run.registration.nonce
    assert not submission.flags.filter(code="registration").exists()
    # Its entry uses the registration: public now, the nonce with it.
    public = alice_api.get(f"/api/v1/registrations/public/{run.registration_id}/").json()
    assert public["nonce"] == run.registration.nonce and public["entries"]
    wait_until(lambda: hosted_watchdog()["done"] or HostedRun.objects.get(pk=run.pk).status == "done", "done")


def _failed_unpublished(run: HostedRun, logs) -> HostedRun:
    """The run ended failed, published nothing, and left the quota as it was."""
    wait_until(lambda: HostedRun.objects.get(pk=run.pk).status == HostedRun.Status.FAILED, "the run failed", logs=logs)
    run.refresh_from_db()
    assert run.submission is None and not Submission.objects.exists(), run.status_reason
    assert "Nothing was published; this run does not count against the daily quota." in run.status_reason
    return run


@override_settings(HOSTED_RUNS_DAILY_QUOTA=1)
def test_the_deadline_stops_a_runaway_agent_and_a_run_that_left_nothing_is_not_published(
    hosted_registry, celery_worker, start_gpu_worker, alice_api, tmp_path
):
    worker = start_gpu_worker(agents=agents_folder(tmp_path / "agents", scripts={"sleeper": SLEEPER}))
    run = _ask(alice_api, image="sleeper:1", time_limit_hours=2 / 3600, gpus_per_run=0)
    task = wait_until(
        lambda: HostedTask.objects.filter(hosted_run=run, status=HostedTask.Status.TIMED_OUT).first(),
        "the task timed out",
        timeout=60,
        logs=worker.output,
    )
    assert "stopped after the time limit of 2 s" in task.reason
    assert 2 <= task.elapsed_seconds < 10
    # It timed out before writing a submission: no entry, and the team's one run a day is still there.
    run = _failed_unpublished(run, worker.output)
    assert "seed 0: timed out (stopped after the time limit of 2 s; it left no /home/submission/submission.csv)" in (
        run.status_reason
    )
    _ask(alice_api, image="sleeper:1", gpus_per_run=0)


@override_settings(HOSTED_RUNS_DAILY_QUOTA=1)
def test_a_run_of_an_agent_the_worker_does_not_have_or_that_exits_at_once_is_not_published(
    hosted_registry, celery_worker, start_gpu_worker, alice_api, tmp_path
):
    agents = agents_folder(tmp_path / "agents", scripts={"quitter": "#!/usr/bin/env bash\necho bye\nexit 3\n"})
    worker = start_gpu_worker(agents=agents)
    run = _ask(alice_api, image="not-installed:2", gpus_per_run=0)
    run = _failed_unpublished(run, worker.output)
    assert "seed 0: failed (image 'not-installed:2': this worker has no agent of that name" in run.status_reason
    run = _ask(alice_api, image="quitter:1", gpus_per_run=0)  # the failed run cost nothing
    run = _failed_unpublished(run, worker.output)
    assert "seed 0: done (the agent exited with code 3; it left no /home/submission/submission.csv)" in (
        run.status_reason
    )


def test_a_worker_waits_for_approval_before_it_runs_anything(
    hosted_registry, celery_worker, start_gpu_worker, alice_api, client, maintainer
):
    """The real worker process measures itself, registers pending, and takes the task once approved."""
    worker = start_gpu_worker(approve=False)
    row = wait_until(
        lambda: GpuWorker.objects.filter(name="gpu-test", registered_at__isnull=False).first(),
        "registered",
        logs=worker.output,
    )
    assert row.approved_at is None and row.measured["cpus"] >= 1 and row.measured["memory_gb"] > 0
    run = _ask(alice_api, gpus_per_run=0)
    time.sleep(8)  # it takes the message, is refused, sends it back: the task stays queued
    assert _task(run).status == HostedTask.Status.QUEUED
    assert "waits for a maintainer to approve" in worker.output()
    client.force_login(maintainer)
    page = client.get("/hosted-runs/workers/approval/").content.decode()
    fingerprint = page.split('name="fingerprint" value="')[1].split('"')[0]
    client.post(f"/hosted-runs/workers/{row.pk}/approval/", {"decision": "approve", "fingerprint": fingerprint})
    _published(run, worker.output)


def test_cancel_stops_a_running_agent_within_a_heartbeat(
    hosted_registry, celery_worker, start_gpu_worker, alice_api, tmp_path
):
    with override_settings(HOSTED_HEARTBEAT_SECONDS=1):
        worker = start_gpu_worker(agents=agents_folder(tmp_path / "agents", scripts={"sleeper": SLEEPER}))
        run = _ask(alice_api, image="sleeper:1", gpus_per_run=0)
        wait_until(lambda: _task(run).status == HostedTask.Status.RUNNING, "running", logs=worker.output)
        wait_until(lambda: "started" in _task(run).output_tail, "the output tail", logs=worker.output)
        asked = time.monotonic()
        assert alice_api.post(f"/api/v1/hosted-runs/{run.pk}/cancel/").status_code == 200
        task = wait_until(
            lambda: (t := _task(run)).status == HostedTask.Status.CANCELLED and t, "cancelled", logs=worker.output
        )
        assert time.monotonic() - asked < 15
        assert task.reason == "cancelled on the portal while the agent ran"
        run.refresh_from_db()
        assert run.status == HostedRun.Status.CANCELLED and run.submission is None


def test_a_worker_that_stops_beating_has_its_run_queued_again_and_taken_by_another(
    hosted_registry, celery_worker, start_gpu_worker, alice_api, tmp_path
):
    agents = agents_folder(tmp_path / "agents", scripts={"sleeper": SLEEPER})
    with override_settings(HOSTED_HEARTBEAT_SECONDS=1, HOSTED_WORKER_LOST_SECONDS=3):
        lost = start_gpu_worker(name="gpu-lost", agents=agents)
        run = _ask(alice_api, image="sleeper:1", gpus_per_run=0)
        wait_until(lambda: _task(run).status == HostedTask.Status.RUNNING, "running", logs=lost.output)
        assert _task(run).worker.name == "gpu-lost"
        lost.kill(signal.SIGKILL)  # no goodbye: only the missing heartbeats tell
        time.sleep(4)
        assert hosted_watchdog()["requeued"] == 1
        task = _task(run)
        assert task.status == HostedTask.Status.QUEUED and task.attempt == 2
        assert "gpu-lost stopped sending heartbeats" in task.reason
        other = start_gpu_worker(name="gpu-other", agents=agents)
        wait_until(
            lambda: (t := _task(run)).status == HostedTask.Status.RUNNING and t.worker.name == "gpu-other",
            "taken by the other worker",
            logs=other.output,
        )
        assert alice_api.post(f"/api/v1/hosted-runs/{run.pk}/cancel/").status_code == 200
        wait_until(lambda: _task(run).status == HostedTask.Status.CANCELLED, "cancelled", logs=other.output)


@pytest.mark.usefixtures("agent_image")
def test_a_hosted_run_with_the_docker_backend_is_graded_and_published_as_verified(
    hosted_registry, celery_worker, start_gpu_worker, alice_api
):
    worker = start_gpu_worker(backend="docker")
    run = _ask(alice_api, gpus_per_run=1)
    # The engine here has no GPU: a run asking for one fails to start with the reason, and says so.
    failed = wait_until(
        lambda: HostedTask.objects.filter(hosted_run=run, status=HostedTask.Status.FAILED).first(),
        "the GPU request refused",
        logs=worker.output,
    )
    assert "GPU" in failed.reason
    run = _ask(alice_api, gpus_per_run=0)
    submission = _published(run, worker.output)
    (graded,) = submission.runs.all()
    assert graded.valid_submission and submission.origin == Submission.Origin.HOSTED
    assert FormatCheck.objects.filter(task=_task(run), valid=True).count() == 1
    assert SECRET not in worker.output()


@pytest.mark.usefixtures("agent_image")
def test_a_container_writing_10_gb_is_stopped_at_the_cap(
    hosted_registry, celery_worker, start_gpu_worker, alice_api, make_agent_image
):
    image = make_agent_image("dd if=/dev/zero of=/home/logs/big bs=1M count=10240 status=none; sleep 60")
    with override_settings(HOSTED_MAX_OUTPUT_BYTES=30 * 1024**2):
        worker = start_gpu_worker(backend="docker")
        run = _ask(alice_api, image=image, gpus_per_run=0)
        task = wait_until(
            lambda: HostedTask.objects.filter(hosted_run=run, status=HostedTask.Status.OVER_CAP).first(),
            "stopped at the cap",
            logs=worker.output,
        )
    assert "over the cap of 31457280 bytes" in task.reason
    assert task.archive_path == ""  # nothing of it is kept
    assert task.elapsed_seconds < 60


@pytest.mark.usefixtures("agent_image")
def test_cancel_stops_a_running_container_and_removes_it(
    hosted_registry, celery_worker, start_gpu_worker, alice_api, make_agent_image, docker_client
):
    image = make_agent_image("echo started; while true; do sleep 0.2; done")
    with override_settings(HOSTED_HEARTBEAT_SECONDS=1):
        worker = start_gpu_worker(backend="docker")
        run = _ask(alice_api, image=image, gpus_per_run=0)
        wait_until(lambda: "started" in _task(run).output_tail, "the container's output", logs=worker.output)
        task = _task(run)
        label = f"portal.task={task.pk}"
        assert docker_client.containers.list(sparse=True, filters={"label": label})
        assert alice_api.post(f"/api/v1/hosted-runs/{run.pk}/cancel/").status_code == 200
        wait_until(lambda: _task(run).status == HostedTask.Status.CANCELLED, "cancelled", logs=worker.output)
        wait_until(
            lambda: not docker_client.containers.list(all=True, sparse=True, filters={"label": label}),
            "the container removed",
        )
