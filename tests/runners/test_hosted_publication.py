"""A hosted run with no successful task is never published, says why task by task, and costs no quota: tried
with every way a task can fail before its agent writes anything, as the worker reports each (the worker's side
of each is run for real in test_hosted_run_end_to_end.py)."""

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from grading.models import Submission
from runners.models import HostedRun, HostedTask
from runners.services.assembly import hosted_run_assemble
from runners.services.watchdog import hosted_watchdog
from tests.runners.builders import claim_body, collected_archive, hosted_body, outcome, worker_client

pytestmark = pytest.mark.django_db

# What a worker collects of a task whose agent wrote nothing: its folders, the log of what happened.
NOTHING_WRITTEN = {"logs/format_checks.jsonl": b"", "run.log": b"agent started\n"}


@pytest.fixture
def registry(registry_with_packs):
    return registry_with_packs


def _claimed_run(api, *, seeds: int = 1) -> tuple[list[HostedTask], object]:
    response = api.post("/api/v1/hosted-runs/", hosted_body(seeds=seeds, gpus_per_run=0), format="json")
    assert response.status_code == 202, response.content
    tasks = list(HostedTask.objects.filter(hosted_run_id=response.json()["id"]).order_by("seed"))
    _, client = worker_client(name="gpu-box-1", slots=4)
    for task in tasks:
        claim = client.post(f"/api/v1/workers/tasks/{task.pk}/claim/", claim_body(task.pk), format="json")
        assert claim.status_code == 200, claim.content
    return tasks, client


def _finish(client, task: HostedTask, *, archive: bool = True, **fields) -> None:
    data: dict[str, object] = {"outcome": outcome(**fields)}
    if archive:
        data["archive"] = collected_archive(files=NOTHING_WRITTEN)
    response = client.post(f"/api/v1/workers/tasks/{task.pk}/finish/", data, format="multipart")
    assert response.status_code == 200, response.content


def _assert_not_published_and_free(run: HostedRun, api, *words: str) -> None:
    run.refresh_from_db()
    if run.status == HostedRun.Status.COLLECTING:
        run = hosted_run_assemble(hosted_run_id=run.pk)
    assert run.status == HostedRun.Status.FAILED, run.status_reason
    assert run.submission is None and not Submission.objects.exists()
    assert run.status_reason.startswith("nothing to grade: ")
    assert "Nothing was published; this run does not count against the daily quota." in run.status_reason
    for word in words:
        assert word in run.status_reason, run.status_reason
    # The quota of 1 is still there.
    assert api.post("/api/v1/hosted-runs/", hosted_body(gpus_per_run=0), format="json").status_code == 202


FAILURES = {
    "image missing": dict(
        status="failed",
        exit_code=None,
        elapsed_seconds=0,
        reason="Image 'example-agent:latest' is not on this worker's Docker engine. Workers never pull images",
    ),
    "sandbox failed to start": dict(
        status="failed",
        exit_code=None,
        elapsed_seconds=0,
        reason="the process backend could not start the agent: bwrap: setting up uid map: Permission denied",
    ),
    "agent exits at once": dict(
        status="exited", exit_code=1, elapsed_seconds=0.2, reason="the agent exited with code 1"
    ),
    "timeout before output": dict(
        status="timed_out", exit_code=-9, elapsed_seconds=3600, reason="stopped after the time limit of 3600 s"
    ),
}


@override_settings(HOSTED_RUNS_DAILY_QUOTA=1)
@pytest.mark.parametrize("how", list(FAILURES))
def test_a_run_whose_one_task_failed_before_writing_anything_is_not_published(registry, alice_api, how):
    (task,), client = _claimed_run(alice_api)
    _finish(client, task, **FAILURES[how])
    _assert_not_published_and_free(task.hosted_run, alice_api, "spooky-author-identification seed 0: ")
    task.refresh_from_db()
    assert FAILURES[how]["reason"].split(":")[0] in task.hosted_run.status_reason
    if task.status in (HostedTask.Status.DONE, HostedTask.Status.TIMED_OUT):
        assert task.reason.endswith("it left no /home/submission/submission.csv")


@override_settings(HOSTED_RUNS_DAILY_QUOTA=1, HOSTED_MAX_ATTEMPTS=1)
def test_a_run_whose_worker_was_lost_is_not_published(registry, alice_api):
    (task,), _ = _claimed_run(alice_api)
    assert hosted_watchdog(now=timezone.now() + timedelta(hours=1))["failed"] == 1
    _assert_not_published_and_free(task.hosted_run, alice_api, "stopped sending heartbeats", "1 failed of 1")


@override_settings(HOSTED_RUNS_DAILY_QUOTA=1)
def test_every_tasks_reason_is_told(registry, alice_api):
    tasks, client = _claimed_run(alice_api, seeds=4)
    for task, how in zip(tasks, FAILURES, strict=True):
        _finish(client, task, **FAILURES[how])
    _assert_not_published_and_free(
        tasks[0].hosted_run,
        alice_api,
        "(1 done, 2 failed, 1 timed out of 4)",
        "seed 0: failed (Image 'example-agent:latest' is not on this worker",
        "seed 1: failed (the process backend could not start the agent",
        "seed 2: done (the agent exited with code 1; it left no /home/submission/submission.csv)",
        "seed 3: timed out (stopped after the time limit of 3600 s; it left no /home/submission/submission.csv)",
    )


def test_a_failed_task_with_an_archive_does_not_make_the_run_collect(
    registry, alice_api, django_capture_on_commit_callbacks
):
    """The issue's case: the worker collects the folders of a task whose image it lacks; that is no output."""
    (task,), client = _claimed_run(alice_api)
    with django_capture_on_commit_callbacks() as callbacks:
        _finish(client, task, **FAILURES["image missing"])
    assert callbacks == []  # no assembly is queued
    assert HostedRun.objects.get(pk=task.hosted_run_id).status == HostedRun.Status.FAILED
