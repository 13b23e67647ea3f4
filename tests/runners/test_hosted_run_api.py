"""Hosted runs through the API, server side: asking, following, cancelling, and the worker API that GPU workers
call (here driven by the test itself; tests/runners/test_hosted_run_end_to_end.py runs real workers)."""

import io
import tarfile
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from grading.models import Submission
from runners.models import FormatCheck, GpuWorker, HostedRun, HostedTask
from runners.services.assembly import hosted_run_assemble
from runners.services.watchdog import hosted_watchdog
from tests.runners.builders import (
    COMPETITION,
    SECRET,
    claim_body,
    collected_archive,
    hosted_body,
    outcome,
    worker_client,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def registry(registry_with_packs):
    return registry_with_packs


def _create(api, **overrides):
    return api.post("/api/v1/hosted-runs/", hosted_body(**overrides), format="json")


def test_it_queues_one_task_per_competition_and_seed_and_never_shows_a_secret(
    registry, alice_api, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        response = _create(alice_api, seeds=3, competitions=[COMPETITION, "aerial-cactus-identification"])
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "queued"
    assert sorted((r["competition_id"], r["seed"]) for r in body["runs"]) == sorted(
        (c, s) for c in (COMPETITION, "aerial-cactus-identification") for s in range(3)
    )
    assert body["env"] == ["OPENAI_API_KEY"]
    assert len(callbacks) == 6  # one gpu-queue message per task, sent after the commit
    assert SECRET not in response.content.decode()
    run = HostedRun.objects.get(pk=body["id"])
    assert SECRET not in run.env_encrypted
    assert SECRET not in alice_api.get(f"/api/v1/hosted-runs/{run.pk}/").content.decode()


def test_bob_cannot_see_or_cancel_alices_run(registry, alice_api, bob_api):
    run_id = _create(alice_api).json()["id"]
    assert bob_api.get(f"/api/v1/hosted-runs/{run_id}/").status_code == 404
    assert bob_api.post(f"/api/v1/hosted-runs/{run_id}/cancel/").status_code == 404
    assert bob_api.get("/api/v1/hosted-runs/").json() == []
    assert APIClient().get(f"/api/v1/hosted-runs/{run_id}/").status_code in (401, 403)


@pytest.mark.parametrize(
    ("overrides", "field", "words"),
    [
        ({"image": "Not An Image"}, "image", "image reference"),
        ({"split": "tiny"}, "split", "one of low"),
        ({"seeds": 0}, "seeds", "from 1 to"),
        ({"time_limit_hours": 99}, "time_limit_hours", "at most 24"),
        ({"gpus_per_run": 99}, "gpus_per_run", "from 0 to"),
        ({"env": {"COMPETITION_ID": "x"}}, "env.COMPETITION_ID", "set by the runner"),
        ({"env": {"lower": "x"}}, "env.lower", "upper-case"),
        ({"competitions": ["no-such-competition"]}, "competitions", "not in the low split"),
        ({"agent": {"source_url": "ftp://x"}}, "agent.source_url", "http"),
    ],
)
def test_a_bad_request_is_a_400_naming_the_field_and_leaves_nothing(registry, alice_api, overrides, field, words):
    response = _create(alice_api, **overrides)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["details"].get("field") == field
    assert words in error["message"]
    assert not HostedRun.objects.exists() and not HostedTask.objects.exists()


@pytest.mark.parametrize("name", ["BASH_ENV", "LD_PRELOAD", "PYTHONPATH", "BASH_FUNC_X", "PS4", "IFS", "GCONV_PATH"])
def test_a_variable_that_steers_an_interpreter_is_a_400_naming_it_and_leaves_nothing(registry, alice_api, name):
    response = _create(alice_api, env={"OPENAI_API_KEY": SECRET, name: "$(cat /proc/$PPID/environ)"})
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["details"]["field"] == f"env.{name}"
    assert error["message"].startswith(f"env.{name}: steers ")
    assert SECRET not in response.content.decode()
    assert not HostedRun.objects.exists() and not HostedTask.objects.exists()


def test_competitions_without_public_data_are_refused(registry, alice_api):
    from competitions.models import CompetitionPack

    CompetitionPack.objects.filter(competition__slug=COMPETITION).update(public_archive_path="")
    response = _create(alice_api)
    assert response.status_code == 409
    assert "no public data" in response.json()["error"]["message"]


@override_settings(HOSTED_RUNS_DAILY_QUOTA=1)
def test_the_daily_quota_holds(registry, alice_api):
    assert _create(alice_api).status_code == 202
    response = _create(alice_api)
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "quota_exceeded"


@override_settings(HOSTED_RUNS_DAILY_QUOTA=2, HOSTED_RUNS_DAILY_QUOTA_PER_USER=None)  # unset: the team's number
def test_one_user_with_three_teams_gets_one_users_hosted_quota_not_three(registry, alice):
    from portal.accounts import services

    clients = []
    for name in ("Alice Lab", "Alice Lab 2", "Alice Lab 3"):
        team = alice.teams.filter(name=name).first() or services.team_create(user=alice, name=name)
        _, key = services.token_create(user=alice, team=team, name="quota")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        clients.append(client)
    assert _create(clients[0]).status_code == 202
    assert _create(clients[1]).status_code == 202
    response = _create(clients[2])
    assert response.status_code == 429
    error = response.json()["error"]
    oldest = HostedRun.objects.order_by("created_at").first()
    frees_at = f"{oldest.created_at + timedelta(days=1):%Y-%m-%d %H:%M:%S} UTC"
    for words in ("You (alice) asked, across all your teams,", "HOSTED_RUNS_DAILY_QUOTA_PER_USER", frees_at):
        assert words in error["message"], error["message"]
    assert error["code"] == "quota_exceeded" and HostedRun.objects.count() == 2
    HostedRun.objects.filter(pk=oldest.pk).update(status=HostedRun.Status.FAILED)  # failed runs do not count
    assert _create(clients[2]).status_code == 202


@override_settings(HOSTED_RUNS_DAILY_QUOTA=1, HOSTED_RUNS_DAILY_QUOTA_PER_USER=5)
def test_a_full_teams_other_member_is_refused_by_the_teams_hosted_limit(registry, alice, alice_api):
    from portal.accounts.models import Membership
    from tests.conftest import api_client_for, persona

    carol = persona("carol")
    Membership.objects.create(team=alice.teams.get(), user=carol)
    assert _create(alice_api).status_code == 202
    response = _create(api_client_for(carol))
    assert response.status_code == 429
    assert "Alice Lab asked for 1 hosted runs" in response.json()["error"]["message"]
    assert "per team (HOSTED_RUNS_DAILY_QUOTA)" in response.json()["error"]["message"]


def test_cancel_stops_queued_tasks_at_once_and_asks_workers_to_stop_running_ones(registry, alice_api):
    run_id = _create(alice_api, seeds=2).json()["id"]
    worker, client = worker_client()
    first, second = HostedTask.objects.filter(hosted_run_id=run_id).order_by("seed")
    assert (
        client.post(f"/api/v1/workers/tasks/{first.pk}/claim/", claim_body(first.pk, 1), format="json").status_code
        == 200
    )
    response = alice_api.post(f"/api/v1/hosted-runs/{run_id}/cancel/")
    assert response.status_code == 200
    assert response.json()["status"] == "cancelled"
    second.refresh_from_db()
    assert second.status == HostedTask.Status.CANCELLED
    beat = client.post(
        "/api/v1/workers/heartbeat/",
        {"running": [{"task_id": first.pk, "attempt": 1, "elapsed_seconds": 3, "output_tail": "step 1"}]},
        format="json",
    )
    assert beat.json() == {"cancel": [{"task_id": first.pk, "attempt": 1}]}


def test_one_task_can_be_cancelled_alone(registry, alice_api):
    run_id = _create(alice_api, seeds=2).json()["id"]
    response = alice_api.post(
        f"/api/v1/hosted-runs/{run_id}/cancel/", {"competition_id": COMPETITION, "seed": 1}, format="json"
    )
    assert response.status_code == 200
    statuses = {r["seed"]: r["status"] for r in response.json()["runs"]}
    assert statuses == {0: "queued", 1: "cancelled"}
    assert response.json()["status"] == "queued"


def test_the_worker_api_wants_a_worker_token(registry, alice_api):
    assert alice_api.post("/api/v1/workers/heartbeat/", {"running": []}, format="json").status_code in (401, 403)
    anonymous = APIClient()
    anonymous.credentials(HTTP_AUTHORIZATION="Worker mlep_not-a-real-worker-token-at-all")
    response = anonymous.post("/api/v1/workers/heartbeat/", {"running": []}, format="json")
    assert response.status_code == 401
    assert "issue_worker_token" in response.json()["error"]["message"]


def test_a_claim_answers_the_spec_with_the_secret_once_and_only_to_the_worker(registry, alice_api):
    run_id = _create(alice_api).json()["id"]
    task = HostedTask.objects.get(hosted_run_id=run_id)
    worker, client = worker_client()
    spec = client.post(f"/api/v1/workers/tasks/{task.pk}/claim/", claim_body(task.pk, 1), format="json").json()
    assert spec["competition_id"] == COMPETITION and spec["image"] == "example-agent:latest"
    assert spec["env"] == {"OPENAI_API_KEY": SECRET} and spec["secret_names"] == ["OPENAI_API_KEY"]
    assert spec["network"] is False and spec["gpus"] == 1 and spec["time_limit_seconds"] == 3600
    assert spec["public_data"]["url"].endswith(f"/api/v1/workers/competitions/{COMPETITION}/public-data/")
    data = client.get(spec["public_data"]["url"])
    assert data.status_code == 200 and data["X-Content-SHA256"] == spec["public_data"]["sha256"]
    with tarfile.open(fileobj=io.BytesIO(b"".join(data.streaming_content)), mode="r:gz") as tar:
        names = tar.getnames()
    assert "sample_submission.csv" in names and not any("private" in n or "answers" in n for n in names)
    # Taken once: a second claim of the same attempt, or of a stale one, is refused.
    again = client.post(f"/api/v1/workers/tasks/{task.pk}/claim/", claim_body(task.pk, 1), format="json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "not_queued"
    assert HostedRun.objects.get(pk=run_id).status == HostedRun.Status.RUNNING


def test_a_task_that_does_not_fit_the_workers_free_gpus_is_left_queued(registry, alice_api):
    run_id = _create(alice_api, gpus_per_run=4).json()["id"]
    task = HostedTask.objects.get(hosted_run_id=run_id)
    _, client = worker_client(gpus=2)
    response = client.post(f"/api/v1/workers/tasks/{task.pk}/claim/", claim_body(task.pk, 1), format="json")
    assert response.status_code == 409 and response.json()["error"]["code"] == "does_not_fit"
    task.refresh_from_db()
    assert task.status == HostedTask.Status.QUEUED and task.worker is None


def test_a_worker_that_has_not_registered_gets_nothing_yet(registry, alice_api):
    from runners.services.workers import worker_token_issue

    run_id = _create(alice_api, gpus_per_run=0).json()["id"]
    task = HostedTask.objects.get(hosted_run_id=run_id)
    _, key = worker_token_issue(name="fresh")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Worker {key}")
    response = client.post(f"/api/v1/workers/tasks/{task.pk}/claim/", claim_body(task.pk, 1), format="json")
    assert response.status_code == 409 and "not registered" in response.json()["error"]["message"]


def _claimed(alice_api, **overrides) -> tuple[HostedTask, GpuWorker, APIClient]:
    run_id = _create(alice_api, **overrides).json()["id"]
    task = HostedTask.objects.get(hosted_run_id=run_id)
    worker, client = worker_client()
    assert (
        client.post(f"/api/v1/workers/tasks/{task.pk}/claim/", claim_body(task.pk, 1), format="json").status_code == 200
    )
    return task, worker, client


def test_the_format_check_answers_valid_or_why_never_a_score_and_is_logged(registry, alice_api, lite_packs):
    task, _, client = _claimed(alice_api)
    sample = (lite_packs / COMPETITION / "public" / "sample_submission.csv").read_bytes()
    url = f"/api/v1/workers/tasks/{task.pk}/validate/"
    good = client.post(url, {"attempt": 1, "file": io.BytesIO(sample)}, format="multipart").json()
    assert good == {"valid": True, "reason": None}
    bad = client.post(url, {"attempt": 1, "file": io.BytesIO(b"id,EAP\n1,0.5\n")}, format="multipart").json()
    assert bad["valid"] is False and bad["reason"]
    assert set(bad) == {"valid", "reason"}  # nothing else: no score, no medal
    assert list(FormatCheck.objects.filter(task=task).values_list("valid", flat=True)) == [True, False]
    stale = client.post(url, {"attempt": 2, "file": io.BytesIO(sample)}, format="multipart")
    assert stale.status_code == 409


def test_a_finished_run_becomes_a_hosted_submission_without_the_secret(
    registry, alice_api, lite_packs, django_capture_on_commit_callbacks
):
    task, worker, client = _claimed(alice_api)
    sample = (lite_packs / COMPETITION / "public" / "sample_submission.csv").read_bytes()
    archive = collected_archive(
        files={
            "submission/submission.csv": sample,
            "logs/agent.log": f"using key {SECRET}\n".encode(),
            "code/agent.py": b"print('hello')\n",
            "run.log": b"agent started\nagent done\n",
        }
    )
    with django_capture_on_commit_callbacks() as callbacks:
        response = client.post(
            f"/api/v1/workers/tasks/{task.pk}/finish/", {"outcome": outcome(), "archive": archive}, format="multipart"
        )
    assert response.status_code == 200 and response.json()["status"] == "done"
    run = HostedRun.objects.get(pk=task.hosted_run_id)
    assert run.status == HostedRun.Status.COLLECTING
    assert len(callbacks) == 1  # the assembly
    with django_capture_on_commit_callbacks():
        run = hosted_run_assemble(hosted_run_id=run.pk)
    submission = run.submission
    assert submission is not None and submission.origin == Submission.Origin.HOSTED
    assert run.status == HostedRun.Status.GRADING
    manifest = submission.manifest
    assert manifest["runtime_hours"] == round(12.5 / 3600, 6)  # measured, not declared
    assert manifest["hardware"]["gpus"] == [{"model": "A10", "count": 1, "memory_gb": 24.0}]
    assert manifest["agent"]["name"] == "Example agent" and manifest["internet_access"] is False
    from grading.services.submissions import submission_folder

    bundle = submission_folder(submission) / "bundle"
    texts = [p.read_bytes() for p in bundle.rglob("*") if p.is_file()]
    assert not any(SECRET.encode() in text for text in texts)
    assert any(b"[secret OPENAI_API_KEY]" in text for text in texts)
    (run_row,) = submission.runs.all()
    assert run_row.competition.slug == COMPETITION and run_row.seed == 0 and run_row.submission_file
    # A second delivery of the assembly message changes nothing.
    assert hosted_run_assemble(hosted_run_id=run.pk).submission_id == submission.pk
    assert Submission.objects.count() == 1


def test_a_worker_that_stops_beating_has_its_task_queued_again_then_failed(
    registry, alice_api, django_capture_on_commit_callbacks
):
    task, worker, _ = _claimed(alice_api)
    later = timezone.now() + timedelta(hours=1)
    with django_capture_on_commit_callbacks() as callbacks:
        assert hosted_watchdog(now=later)["requeued"] == 1
    assert len(callbacks) == 1
    task.refresh_from_db()
    assert task.status == HostedTask.Status.QUEUED and task.attempt == 2 and task.worker is None
    assert "stopped sending heartbeats" in task.reason
    # The lost worker's late report of attempt 1 is ignored.
    _, client = worker_client(name=worker.name)
    stale = client.post(f"/api/v1/workers/tasks/{task.pk}/finish/", {"outcome": outcome(1)}, format="multipart")
    assert stale.status_code == 409
    with override_settings(HOSTED_MAX_ATTEMPTS=2):
        for attempt in (2,):
            claim = client.post(f"/api/v1/workers/tasks/{task.pk}/claim/", claim_body(task.pk, attempt), format="json")
            assert claim.status_code == 200
            GpuWorker.objects.update(beat_at=timezone.now() - timedelta(hours=2))
            assert hosted_watchdog()["failed"] == 1
    task.refresh_from_db()
    assert task.status == HostedTask.Status.FAILED and "given up after 2 attempts" in task.reason


@override_settings(HOSTED_QUEUE_TIMEOUT_SECONDS=60)
def test_a_task_no_worker_takes_fails_with_the_reason(registry, alice_api):
    run_id = _create(alice_api, gpus_per_run=3).json()["id"]
    assert hosted_watchdog(now=timezone.now() + timedelta(minutes=5))["expired"] == 1
    task = HostedTask.objects.get(hosted_run_id=run_id)
    assert task.status == HostedTask.Status.FAILED and "no worker with 3 free GPUs" in task.reason
    run = HostedRun.objects.get(pk=run_id)  # nothing was collected: nothing is assembled or published
    assert run.status == HostedRun.Status.FAILED and run.submission is None
    assert run.status_reason.startswith("nothing to grade: no task left any output (1 failed of 1)")
    assert "no worker with 3 free GPUs" in run.status_reason


def test_the_workers_page_is_for_maintainers(registry, client, alice, maintainer):
    worker_client(name="gpu-box-7")
    client.force_login(alice)
    assert client.get("/hosted-runs/workers/").status_code == 403
    client.force_login(maintainer)
    page = client.get("/hosted-runs/workers/").content.decode()
    assert "gpu-box-7" in page and "alive" in page


def test_the_form_starts_a_run_and_the_page_shows_it_live_without_the_secret(registry, client, alice):
    from portal.accounts.selectors import teams_for_user

    client.force_login(alice)
    response = client.post(
        "/hosted-runs/",
        {
            "team": teams_for_user(user=alice).first().pk,
            "image": "example-agent:latest",
            "split": "low",
            "seeds": 1,
            "time_limit_hours": 1,
            "gpus_per_run": 0,
            "env": f"OPENAI_API_KEY={SECRET}\nAGENT_MODE=fast",
            "competitions": COMPETITION,
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    page = client.get(response["Location"]).content.decode()
    assert COMPETITION in page and "OPENAI_API_KEY" in page and 'http-equiv="refresh"' in page
    assert SECRET not in page
    bad = client.post(
        "/hosted-runs/",
        {
            "team": teams_for_user(user=alice).first().pk,
            "image": "x y",
            "split": "low",
            "seeds": 1,
            "time_limit_hours": 1,
            "gpus_per_run": 0,
        },
    )
    assert bad.status_code == 400 and "image reference" in bad.content.decode()


def test_an_assembly_that_fails_ends_the_run_failed_with_the_reason(
    registry, alice_api, lite_packs, django_capture_on_commit_callbacks
):
    from django.core.files.storage import storages

    task, _, client = _claimed(alice_api)
    sample = (lite_packs / COMPETITION / "public" / "sample_submission.csv").read_bytes()
    archive = collected_archive(files={"submission/submission.csv": sample})
    with django_capture_on_commit_callbacks():
        client.post(
            f"/api/v1/workers/tasks/{task.pk}/finish/", {"outcome": outcome(), "archive": archive}, format="multipart"
        )
    task.refresh_from_db()
    storages["private"].delete(task.archive_path)  # the collected files are gone before the assembly
    with django_capture_on_commit_callbacks():
        run = hosted_run_assemble(hosted_run_id=task.hosted_run_id)
    assert run.status == HostedRun.Status.FAILED and run.submission is None
    assert run.status_reason.startswith("the portal could not assemble the bundle")
    assert not Submission.objects.exists()


def _claim_at_once(worker, task_id: int, barrier, outcomes: list[str]) -> None:
    from django.db import connection

    from runners.capability import task_capability
    from runners.services.workers import WorkerRefused, task_claim

    try:
        barrier.wait()
        task_claim(
            worker=worker,
            task_id=task_id,
            attempt=1,
            capability=task_capability(task_id=task_id, attempt=1),
            public_data_url=lambda slug: f"http://portal/{slug}",
        )
        outcomes.append("claimed")
    except WorkerRefused as exc:
        outcomes.append(exc.code)
    finally:
        connection.close()


@pytest.mark.django_db(transaction=True)
@override_settings(HOSTED_RUNS_DAILY_QUOTA=10)
def test_two_workers_claiming_one_task_at_once_get_it_once(registry_with_packs, alice_api):
    import threading

    workers = [worker_client(name=f"racer-{n}")[0] for n in range(2)]
    for round_number in range(5):
        run_id = _create(alice_api, gpus_per_run=0, seeds=1).json()["id"]
        task = HostedTask.objects.get(hosted_run_id=run_id)
        barrier, outcomes = threading.Barrier(2), []
        threads = [
            threading.Thread(target=_claim_at_once, args=(worker, task.pk, barrier, outcomes)) for worker in workers
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(outcomes) == ["claimed", "not_queued"], (round_number, outcomes)
        HostedTask.objects.filter(pk=task.pk).update(status=HostedTask.Status.CANCELLED)
