"""The worker API trusts a worker no more than it must, tried as a hostile team with a worker token would:
claims need the queue message's capability, what a worker sends is redacted and range-checked, the server
ends tasks its workers lose or overrun, the format check is rate-limited and runs outside the web process,
image references are strict, and a run that collected nothing is never published."""

import base64
import io
import json
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone
from kombu import Connection

from grading.models import Submission
from runners.capability import task_capability
from runners.models import FormatCheck, GpuWorker, HostedRun, HostedTask
from runners.services.watchdog import hosted_watchdog
from tests.runners.builders import COMPETITION, SECRET, claim_body, hosted_body, outcome, worker_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def registry(registry_with_packs):
    return registry_with_packs


def _ask(api, **overrides) -> HostedTask:
    response = api.post("/api/v1/hosted-runs/", hosted_body(**overrides), format="json")
    assert response.status_code == 202, response.content
    return HostedTask.objects.select_related("hosted_run").get(hosted_run_id=response.json()["id"])


def _claimed(api, **overrides):
    task = _ask(api, **overrides)
    worker, client = worker_client()
    answer = client.post(f"/api/v1/workers/tasks/{task.pk}/claim/", claim_body(task.pk), format="json")
    assert answer.status_code == 200, answer.content
    return task, worker, client


def _beat(client, task: HostedTask, **item):
    running = [{"task_id": task.pk, "attempt": task.attempt, "elapsed_seconds": 5, "output_tail": "", **item}]
    return client.post("/api/v1/workers/heartbeat/", {"running": running}, format="json")


# --- claims ---------------------------------------------------------------------------------------------------


def test_a_worker_token_alone_claims_no_task_and_learns_nothing_of_it(registry, alice_api):
    task = _ask(alice_api)
    _, bobs_worker = worker_client(name="bobs-box")
    url = f"/api/v1/workers/tasks/{task.pk}/claim/"
    tries = {
        "capability_required": {"attempt": 1},
        "capability_refused": {"attempt": 1, "capability": "0" * 64},
    }
    answers = {code: bobs_worker.post(url, body, format="json") for code, body in tries.items()}
    # Another attempt's capability, another task's, and a task that does not exist: the same refusal.
    answers["other attempt"] = bobs_worker.post(
        url, {"attempt": 1, "capability": task_capability(task_id=task.pk, attempt=2)}, format="json"
    )
    answers["other task"] = bobs_worker.post(
        url, {"attempt": 1, "capability": task_capability(task_id=task.pk + 1, attempt=1)}, format="json"
    )
    answers["no such task"] = bobs_worker.post(
        f"/api/v1/workers/tasks/{task.pk + 999}/claim/", claim_body(task.pk), format="json"
    )
    for what, answer in answers.items():
        assert answer.status_code == 403, (what, answer.content)
        text = answer.content.decode()
        assert SECRET not in text and "example-agent" not in text and COMPETITION not in text, what
    assert answers["capability_required"].json()["error"]["code"] == "capability_required"
    assert answers["capability_refused"].json()["error"]["code"] == "capability_refused"
    task.refresh_from_db()
    assert task.status == HostedTask.Status.QUEUED and task.worker is None


def _gpu_messages() -> list[list]:
    """The argument lists of the messages waiting on the gpu queue of the real broker."""
    from portal.celery import app

    found = []
    with Connection(app.conf.broker_url, transport_options=app.conf.broker_transport_options) as connection:
        queue = connection.SimpleQueue("gpu")
        try:
            while True:
                message = queue.get(block=True, timeout=2)
                found.append(list(message.payload[0]))
                message.ack()
        except queue.Empty:
            pass
        finally:
            queue.close()
    return found


def test_every_queued_message_carries_the_capability_of_its_attempt(
    registry, alice_api, settings, django_capture_on_commit_callbacks
):
    if not settings.REDIS_URL:
        pytest.skip("reading the queue needs the Redis broker (scripts/test sets REDIS_URL)")
    _gpu_messages()  # whatever earlier tests left
    with django_capture_on_commit_callbacks(execute=True):
        task = _ask(alice_api)
    [(task_id, attempt, capability)] = _gpu_messages()
    assert (task_id, attempt) == (task.pk, 1) and capability == task_capability(task_id=task.pk, attempt=1)

    worker, client = worker_client()
    claim = client.post(f"/api/v1/workers/tasks/{task.pk}/claim/", {"attempt": 1, "capability": capability})
    assert claim.status_code == 200 and claim.json()["env"] == {"OPENAI_API_KEY": SECRET}

    # The watchdog's re-queue carries a fresh one; the old message's no longer claims anything.
    with django_capture_on_commit_callbacks(execute=True):
        assert hosted_watchdog(now=timezone.now() + timedelta(minutes=10))["requeued"] == 1
    [(task_id, attempt, fresh)] = _gpu_messages()
    assert (task_id, attempt) == (task.pk, 2) and fresh == task_capability(task_id=task.pk, attempt=2)
    stale = client.post(f"/api/v1/workers/tasks/{task.pk}/claim/", {"attempt": 2, "capability": capability})
    assert stale.status_code == 403
    assert (
        client.post(f"/api/v1/workers/tasks/{task.pk}/claim/", {"attempt": 2, "capability": fresh}).status_code == 200
    )


def test_a_task_queued_before_capabilities_gets_a_fresh_message_once(
    registry, alice_api, django_capture_on_commit_callbacks
):
    task = _ask(alice_api)
    HostedTask.objects.filter(pk=task.pk).update(resend=True)  # as migration 0002 marks the tasks queued then

    with django_capture_on_commit_callbacks() as callbacks:
        assert hosted_watchdog()["resent"] == 1
    assert len(callbacks) == 1
    with django_capture_on_commit_callbacks() as callbacks:
        assert hosted_watchdog()["resent"] == 0
    assert callbacks == []
    task.refresh_from_db()
    assert task.status == HostedTask.Status.QUEUED and task.attempt == 1 and not task.resend


# --- what workers send ----------------------------------------------------------------------------------------


def test_a_tail_holding_a_secret_or_its_disguises_is_stored_redacted(registry, alice_api):
    task, _, client = _claimed(alice_api)
    disguised = [
        SECRET,
        SECRET.upper(),
        SECRET[::-1],
        SECRET.encode().hex(),
        base64.b64encode(SECRET.encode()).decode(),
    ]
    tail = "step 1\n" + "\n".join(f"key {value}" for value in disguised) + "\nstep 2\n"

    assert _beat(client, task, output_tail=tail).status_code == 200

    task.refresh_from_db()
    assert task.output_tail.count("[secret OPENAI_API_KEY]") == len(disguised)
    assert not any(value in task.output_tail for value in disguised)
    shown = alice_api.get(f"/api/v1/hosted-runs/{task.hosted_run_id}/").content.decode()
    assert "step 2" in shown and SECRET not in shown


def test_a_reason_is_stored_without_the_secret_or_the_workers_folders(registry, alice_api):
    task, _, client = _claimed(alice_api)
    reason = (
        f"the worker could not run the task: [Errno 13] Permission denied: '/srv/gpu-worker/tasks/{task.pk}-1/logs' "
        f"(key {SECRET}); the agent wrote /home/submission/submission.csv"
    )

    answer = client.post(
        f"/api/v1/workers/tasks/{task.pk}/finish/", {"outcome": outcome(status="failed", reason=reason)}
    )

    assert answer.status_code == 200, answer.content
    task.refresh_from_db()
    assert SECRET not in task.reason and "/srv/gpu-worker" not in task.reason
    assert "'…/logs'" in task.reason and "[secret OPENAI_API_KEY]" in task.reason
    assert "/home/submission/submission.csv" in task.reason  # the agent's own paths stay


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("elapsed_seconds", 1e308),
        ("elapsed_seconds", -1),
        ("elapsed_seconds", float("nan")),
        ("elapsed_seconds", "12"),
        ("setup_seconds", 1e9),
        ("collect_seconds", float("inf")),
        ("exit_code", 10**12),
        ("exit_code", True),
        ("reason", {"not": "text"}),
        ("attempt", "1"),
        ("status", ["exited"]),
    ],
)
def test_a_finish_with_a_bad_field_is_a_400_naming_it_and_changes_nothing(registry, alice_api, key, value):
    task, _, client = _claimed(alice_api)
    body = {"attempt": 1, "status": "exited", "exit_code": 0, "elapsed_seconds": 12.5, key: value}

    answer = client.post(f"/api/v1/workers/tasks/{task.pk}/finish/", {"outcome": json.dumps(body)})

    assert answer.status_code == 400, answer.content
    assert answer.json()["error"]["details"]["field"] == f"outcome.{key}"
    task.refresh_from_db()
    assert task.status == HostedTask.Status.RUNNING and task.elapsed_seconds is None


def test_a_finish_whose_outcome_is_an_object_is_a_400(registry, alice_api):
    task, _, client = _claimed(alice_api)

    answer = client.post(
        f"/api/v1/workers/tasks/{task.pk}/finish/",
        {"outcome": {"attempt": 1, "status": "exited"}},
        format="json",
    )

    assert answer.status_code == 400
    assert answer.json()["error"]["details"] == {"field": "outcome"}
    task.refresh_from_db()
    assert task.status == HostedTask.Status.RUNNING


def test_a_heartbeat_with_an_impossible_elapsed_time_is_refused_and_records_nothing(registry, alice_api):
    task, worker, client = _claimed(alice_api)
    beat_before = GpuWorker.objects.get(pk=worker.pk).beat_at

    answer = _beat(client, task, elapsed_seconds=1e308, output_tail="hello")

    assert answer.status_code == 400
    assert answer.json()["error"]["details"]["field"] == "running[0].elapsed_seconds"
    task.refresh_from_db()
    assert task.elapsed_seconds is None and task.output_tail == ""
    assert GpuWorker.objects.get(pk=worker.pk).beat_at == beat_before


def test_a_heartbeat_listing_a_task_that_is_not_its_own_is_told_to_stop_it(registry, alice_api):
    task, _, client = _claimed(alice_api)
    HostedTask.objects.filter(pk=task.pk).update(status=HostedTask.Status.FAILED)  # the portal ended it

    answer = _beat(client, task, output_tail="still here")

    assert answer.json() == {"cancel": [{"task_id": task.pk, "attempt": 1}]}
    task.refresh_from_db()
    assert task.output_tail == ""


# --- the server ends what its workers do not ------------------------------------------------------------------


def test_a_task_its_beating_worker_no_longer_lists_is_queued_again_then_failed(
    registry, alice_api, django_capture_on_commit_callbacks
):
    task, worker, client = _claimed(alice_api)
    later = timezone.now() + timedelta(minutes=5)
    GpuWorker.objects.filter(pk=worker.pk).update(beat_at=later)  # it beats, listing nothing

    with django_capture_on_commit_callbacks() as callbacks:
        assert hosted_watchdog(now=later)["requeued"] == 1
    assert len(callbacks) == 1
    task.refresh_from_db()
    assert task.status == HostedTask.Status.QUEUED and task.attempt == 2 and task.worker is None
    assert "kept beating but no longer reported the task during attempt 1" in task.reason

    with override_settings(HOSTED_MAX_ATTEMPTS=2):
        assert client.post(f"/api/v1/workers/tasks/{task.pk}/claim/", claim_body(task.pk, 2)).status_code == 200
        even_later = timezone.now() + timedelta(minutes=5)
        GpuWorker.objects.filter(pk=worker.pk).update(beat_at=even_later)
        assert hosted_watchdog(now=even_later)["failed"] == 1
    task.refresh_from_db()
    assert task.status == HostedTask.Status.FAILED and "given up after 2 attempts" in task.reason


def test_a_task_its_worker_keeps_listing_stays_running(registry, alice_api):
    task, worker, client = _claimed(alice_api)
    assert _beat(client, task).status_code == 200

    assert hosted_watchdog() == {
        "requeued": 0,
        "failed": 0,
        "expired": 0,
        "overtime": 0,
        "resent": 0,
        "done": 0,
        "reasons": 0,
    }
    task.refresh_from_db()
    assert task.status == HostedTask.Status.RUNNING


@override_settings(HOSTED_OVERTIME_GRACE_SECONDS=600)
def test_a_task_running_past_its_time_limit_and_the_grace_is_failed_with_the_reason(registry, alice_api):
    task, worker, client = _claimed(alice_api, time_limit_hours=1)
    HostedTask.objects.filter(pk=task.pk).update(started_at=timezone.now() - timedelta(hours=1, minutes=9))
    assert hosted_watchdog()["overtime"] == 0  # within the grace

    HostedTask.objects.filter(pk=task.pk).update(started_at=timezone.now() - timedelta(hours=1, minutes=11))
    assert _beat(client, task).status_code == 200  # it beats and lists the task: the limit still holds
    assert hosted_watchdog()["overtime"] == 1

    task.refresh_from_db()
    assert task.status == HostedTask.Status.FAILED
    assert task.reason.startswith("timed out: still running 11 min after its time limit of 1 h")
    assert _beat(client, task).json() == {"cancel": [{"task_id": task.pk, "attempt": 1}]}  # the worker stops it
    run = HostedRun.objects.get(pk=task.hosted_run_id)
    assert run.status == HostedRun.Status.FAILED and "timed out" in run.status_reason


# --- the format check -------------------------------------------------------------------------------------------


def _check(client, task: HostedTask, data: bytes):
    return client.post(
        f"/api/v1/workers/tasks/{task.pk}/validate/", {"attempt": 1, "file": io.BytesIO(data)}, format="multipart"
    )


@override_settings(HOSTED_FORMAT_CHECKS_PER_MINUTE=2, HOSTED_FORMAT_CHECKS_PER_TASK=3)
def test_the_format_check_is_rate_limited_per_minute_and_per_run(registry, alice_api, lite_packs):
    task, _, client = _claimed(alice_api)
    sample = (lite_packs / COMPETITION / "public" / "sample_submission.csv").read_bytes()

    assert [_check(client, task, sample).status_code for _ in range(2)] == [200, 200]
    limited = _check(client, task, sample)
    assert limited.status_code == 429
    assert limited.json()["error"]["code"] == "format_checks_rate_limited"
    assert "at most 2 format checks a minute: try again in" in limited.json()["error"]["message"]
    assert FormatCheck.objects.filter(task=task).count() == 2  # a refused call is no check

    FormatCheck.objects.filter(task=task).update(at=timezone.now() - timedelta(minutes=2))
    assert _check(client, task, sample).json() == {"valid": True, "reason": None}
    exhausted = _check(client, task, sample)
    assert exhausted.status_code == 429 and exhausted.json()["error"]["code"] == "format_checks_exhausted"
    assert FormatCheck.objects.filter(task=task).count() == 3


def test_the_format_check_runs_outside_the_web_process(registry, alice_api, lite_packs):
    from grading.services import grade_file

    task, _, client = _claimed(alice_api)
    grade_file._last_answers = None

    answer = _check(client, task, b"id,EAP\n1,0.5\n").json()

    assert answer["valid"] is False and answer["reason"]
    assert grade_file._last_answers is None  # no answers were loaded in this process
    [check] = FormatCheck.objects.filter(task=task)
    assert (check.valid, check.reason) == (False, answer["reason"])


def test_a_format_check_that_cannot_finish_says_so(registry, alice_api, lite_packs, tmp_path):
    from competitions.answers_cache import answers_cache_file, answers_load
    from competitions.selectors import grading_setup
    from grading.services.grade_file import FormatCheckFailed, format_check_isolated

    task, _, client = _claimed(alice_api)
    sample = lite_packs / COMPETITION / "public" / "sample_submission.csv"
    with pytest.raises(FormatCheckFailed, match="did not finish within 0.01 s"):
        format_check_isolated(
            competition=task.competition, submission_path=sample, timeout_seconds=0.01, memory_bytes=0
        )
    # A file of 40 MB (within what intake takes) must be read whole: far more than the child may map. (A tiny
    # file can be checked in what the forked child already holds, so it would not show the limit.)
    header, *rows = sample.read_text().splitlines()
    big = tmp_path / "submission.csv"
    with big.open("w") as out:
        out.write(header + "\n")
        while out.tell() < 40 * 1024**2:
            out.write("\n".join(rows) + "\n")
    with pytest.raises(FormatCheckFailed, match="needed more than"):
        format_check_isolated(
            competition=task.competition, submission_path=big, timeout_seconds=120, memory_bytes=64 * 1024**2
        )
    # Again with the parsed answers cached (as once anything graded this competition): the child then runs out
    # of memory parsing the file, which must still be the portal's limit, never a refusal of the team's file.
    pack = task.competition.pack
    answers_load(path=grading_setup(task.competition)[0], sha256=pack.answers_sha256)
    assert answers_cache_file(pack.answers_sha256).is_file()
    with pytest.raises(FormatCheckFailed, match="needed more than"):
        format_check_isolated(
            competition=task.competition, submission_path=big, timeout_seconds=120, memory_bytes=64 * 1024**2
        )


def test_a_format_check_reason_quoting_a_secret_is_kept_redacted(registry, alice_api):
    task, _, client = _claimed(alice_api)

    answer = _check(client, task, f"id,{SECRET}\n1,0.5\n".encode()).json()

    assert answer["valid"] is False and SECRET not in (answer["reason"] or "")
    assert SECRET not in FormatCheck.objects.get(task=task).reason


# --- requests and results -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "image", ["a/../../etc:latest", "a//b:1", "/agent:1", "agent/:1", "agent..x:1", "-agent:1", "agent:", "a" * 301]
)
def test_an_image_reference_with_path_tricks_is_refused_at_the_request(registry, alice_api, image):
    response = alice_api.post("/api/v1/hosted-runs/", hosted_body(image=image), format="json")

    assert response.status_code == 400
    details = response.json()["error"]["details"]
    assert details.get("field") == "image" or "image" in details  # the service's check, or the serializer's length
    assert not HostedRun.objects.exists()


def test_ordinary_image_references_are_taken(registry, alice_api, settings):
    settings.HOSTED_RUNS_DAILY_QUOTA = 10
    for image in ("example-agent:latest", "team/agent_v2:1.0", "ghcr.io/team/agent@sha256:" + "a" * 64):
        response = alice_api.post("/api/v1/hosted-runs/", hosted_body(image=image), format="json")
        assert response.status_code == 202, (image, response.content)


def test_a_run_whose_tasks_all_failed_is_never_published(registry, alice_api, django_capture_on_commit_callbacks):
    task, _, client = _claimed(alice_api, image="team/missing-agent:2")
    reason = (
        "Image 'team/missing-agent:2' is not on this worker's Docker engine. Workers never pull images: the "
        "operator must load it"
    )

    with django_capture_on_commit_callbacks() as callbacks:
        answer = client.post(
            f"/api/v1/workers/tasks/{task.pk}/finish/",
            {"outcome": outcome(status="failed", exit_code=None, elapsed_seconds=0, reason=reason)},
        )

    assert answer.status_code == 200
    assert callbacks == []  # no assembly is queued
    run = HostedRun.objects.get(pk=task.hosted_run_id)
    assert run.status == HostedRun.Status.FAILED and run.submission is None and run.finished_at
    assert run.status_reason.startswith("nothing to grade: no task left any output (1 failed of 1)")
    assert "team/missing-agent:2" in run.status_reason
    assert not Submission.objects.exists()
