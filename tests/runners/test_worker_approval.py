"""A worker waits for a maintainer's approval, tried as a hostile operator with a worker token would: a worker
that declares 8 H100s gets no task until a maintainer approved it, having seen what it measured of itself; one
that declares other hardware is back to pending; only maintainers approve; an approval is for the declaration
the maintainer saw. Capacity is judged against approved workers heard from lately, and a run cancelled before
any of its tasks started costs no quota."""

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from runners.models import GpuWorker, HostedRun, HostedTask
from runners.services.approval import declared_hardware, hardware_fingerprint
from runners.services.workers import worker_token_issue
from tests.runners.builders import claim_body, hosted_body, worker_client

pytestmark = pytest.mark.django_db

EIGHT_H100 = {
    "gpus": 8,
    "gpu_model": "H100",
    "gpu_memory_gb": 80,
    "cpus": 8,
    "memory_gb": 64,
    "slots": 8,
    "backend": "process",
    "sandbox": "bwrap",
    # What the machine's driver and kernel said: no GPU at all, 8 CPUs, 62.7 GB.
    "measured": {
        "gpus": [],
        "gpu_source": "nvidia-smi",
        "cpus": 8,
        "memory_gb": 62.7,
    },
}


@pytest.fixture
def registry(registry_with_packs):
    return registry_with_packs


def _worker_api(name: str = "hostile-box") -> tuple[GpuWorker, APIClient]:
    worker, key = worker_token_issue(name=name)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Worker {key}")
    return worker, client


def _register(client: APIClient, **overrides) -> dict:
    response = client.post("/api/v1/workers/register/", {**EIGHT_H100, **overrides}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def _ask(api, **overrides) -> HostedTask:
    response = api.post("/api/v1/hosted-runs/", hosted_body(**overrides), format="json")
    assert response.status_code == 202, response.content
    return HostedTask.objects.get(hosted_run_id=response.json()["id"])


def _claim(client: APIClient, task: HostedTask):
    return client.post(f"/api/v1/workers/tasks/{task.pk}/claim/", claim_body(task.pk, task.attempt), format="json")


def _approve(client, worker: GpuWorker, fingerprint: str | None = None):
    worker.refresh_from_db()
    fingerprint = fingerprint or hardware_fingerprint(declared_hardware(worker))
    return client.post(
        f"/hosted-runs/workers/{worker.pk}/approval/", {"decision": "approve", "fingerprint": fingerprint}, follow=True
    )


def test_a_worker_claiming_8_h100s_gets_no_task_until_a_maintainer_approves_it(registry, alice_api, client, maintainer):
    worker, hostile = _worker_api()
    answer = _register(hostile)
    assert answer["approved"] is False and "pending" in answer["approval"]
    task = _ask(alice_api, gpus_per_run=8)
    # It promises nothing: the task waits, saying no approved worker is there.
    assert task.reason.startswith("waiting: no approved worker was heard from")

    refused = _claim(hostile, task)
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "not_approved"
    task.refresh_from_db()
    assert task.status == HostedTask.Status.QUEUED and task.worker is None

    # The maintainer sees what it declares beside what it measured, and the gap is marked.
    client.force_login(maintainer)
    page = client.get("/hosted-runs/workers/approval/").content.decode()
    section = page[page.index(f'id="worker-{worker.pk}"') :]
    assert 'data-state="pending"' in section[:200] and "pending approval" in section
    assert "H100" in section and "declares more than measured" in section and "nvidia-smi" in section
    assert section.count("declares more than measured") == 2  # 8 GPUs against 0, and their model

    approved = _approve(client, worker)
    assert approved.status_code == 200 and "is approved" in approved.content.decode()
    worker.refresh_from_db()
    assert worker.approved_at and worker.approved_by == maintainer
    assert worker.approved_hardware == declared_hardware(worker)
    task.refresh_from_db()
    assert task.reason == ""  # it fits an approved worker now
    assert _claim(hostile, task).status_code == 200


def test_a_worker_that_declares_other_hardware_waits_for_approval_again(registry, alice_api, client, maintainer):
    worker, hostile = _worker_api()
    _register(hostile)
    client.force_login(maintainer)
    _approve(client, worker)
    response = alice_api.post("/api/v1/hosted-runs/", hosted_body(gpus_per_run=1, seeds=2), format="json")
    first, second = HostedTask.objects.filter(hosted_run_id=response.json()["id"]).order_by("seed")
    assert _claim(hostile, first).status_code == 200

    # The same token, restarted with the same hardware (a new version): still approved.
    assert _register(hostile, version="2.0")["approved"] is True
    # The same token declares more memory: back to pending, and no new task.
    assert _register(hostile, memory_gb=512)["approved"] is False
    worker.refresh_from_db()
    assert worker.approved_at is None and worker.approved_hardware["memory_gb"] == 64
    refused = _claim(hostile, second)
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "not_approved"
    page = client.get("/hosted-runs/workers/approval/").content.decode()
    assert "It declared other hardware when it was last approved" in page
    # What it already runs goes on: its heartbeat is answered without a cancel.
    beat = hostile.post(
        "/api/v1/workers/heartbeat/",
        {"running": [{"task_id": first.pk, "attempt": 1, "elapsed_seconds": 3, "output_tail": ""}]},
        format="json",
    )
    assert beat.status_code == 200 and beat.json() == {"cancel": []}


def test_an_approval_is_for_the_declaration_the_maintainer_saw(registry, client, maintainer):
    worker, hostile = _worker_api()
    _register(hostile, gpus=1)
    worker.refresh_from_db()
    seen = hardware_fingerprint(declared_hardware(worker))
    _register(hostile, gpus=8)  # between the page load and the click
    client.force_login(maintainer)
    answer = _approve(client, worker, fingerprint=seen)
    assert "declared other hardware since this page was loaded: nothing was approved" in answer.content.decode()
    worker.refresh_from_db()
    assert worker.approved_at is None


def test_only_maintainers_see_the_approval_page_or_approve(registry, client, alice, bob, maintainer):
    worker, hostile = _worker_api()
    _register(hostile)
    for user in (alice, bob):
        client.force_login(user)
        assert client.get("/hosted-runs/workers/approval/").status_code == 403
        assert _approve(client, worker).status_code == 403
    client.logout()
    assert _approve(client, worker).status_code in (302, 403)
    worker.refresh_from_db()
    assert worker.approved_at is None
    # A worker token is no maintainer either.
    assert hostile.post(f"/hosted-runs/workers/{worker.pk}/approval/", {"decision": "approve"}).status_code in (
        302,
        403,
    )
    client.force_login(maintainer)
    assert client.get("/hosted-runs/workers/approval/").status_code == 200
    assert client.get("/hosted-runs/workers/999999/approval/").status_code == 405  # POST only
    assert client.post("/hosted-runs/workers/999999/approval/", {"decision": "approve"}).status_code == 404


def test_a_withdrawn_approval_stops_new_tasks(registry, alice_api, client, maintainer):
    worker, hostile = worker_client(name="gpu-box-9", gpus=2)
    client.force_login(maintainer)
    answer = client.post(f"/hosted-runs/workers/{worker.pk}/approval/", {"decision": "withdraw"}, follow=True)
    assert "is pending again" in answer.content.decode()
    task = _ask(alice_api, gpus_per_run=1)
    assert _claim(hostile, task).json()["error"]["code"] == "not_approved"


@pytest.mark.parametrize(
    ("measured", "field"),
    [
        ({"gpus": [{"model": "H100", "memory_gb": -1}]}, "memory_gb"),
        ({"gpus": [{"model": "H100", "memory_gb": 80}] * 65}, "gpus"),
        ({"cpus": "many"}, "cpus"),
        ({"gpus": "eight"}, "gpus"),
    ],
)
def test_a_bad_measurement_is_a_400_naming_it_and_records_nothing(registry, measured, field):
    worker, hostile = _worker_api()
    response = hostile.post("/api/v1/workers/register/", {**EIGHT_H100, "measured": measured}, format="json")
    assert response.status_code == 400 and field in response.content.decode()
    worker.refresh_from_db()
    assert worker.registered_at is None and worker.measured == {}


# --- capacity ------------------------------------------------------------------------------------------------


def test_a_worker_that_never_polls_promises_nothing(registry, alice_api, client, maintainer):
    big, hostile = _worker_api("big-but-silent")
    _register(hostile)
    client.force_login(maintainer)
    _approve(client, big)
    worker_client(name="small-and-alive", gpus=1)
    # The big one registered, was approved, then was never heard from again.
    GpuWorker.objects.filter(pk=big.pk).update(beat_at=timezone.now() - timedelta(minutes=10))

    response = alice_api.post("/api/v1/hosted-runs/", hosted_body(gpus_per_run=8), format="json")
    assert response.status_code == 409, response.content
    assert "no worker has 8 GPUs; the largest has 1" in response.json()["error"]["message"]
    assert not HostedRun.objects.exists()
    page = client.get("/hosted-runs/").content.decode()
    assert "big-but-silent" not in page[page.index('<section id="hosted-offer">') :].split("</section>")[0]


def test_an_unapproved_worker_promises_nothing(registry, alice_api):
    _, hostile = _worker_api()
    _register(hostile)  # alive, 8 GPUs declared, not approved
    worker_client(name="small-and-alive", gpus=1)
    response = alice_api.post("/api/v1/hosted-runs/", hosted_body(gpus_per_run=8), format="json")
    assert response.status_code == 409 and "the largest has 1" in response.json()["error"]["message"]


@override_settings(HOSTED_RUNS_DAILY_QUOTA=1)
def test_a_run_cancelled_before_any_task_started_costs_no_quota(registry, alice_api):
    task = _ask(alice_api, gpus_per_run=0)
    assert alice_api.post(f"/api/v1/hosted-runs/{task.hosted_run_id}/cancel/").status_code == 200
    run = HostedRun.objects.get(pk=task.hosted_run_id)
    assert run.status == HostedRun.Status.CANCELLED and run.started_at is None

    # The quota of 1 is still there; a run that started, then was cancelled, uses it.
    task = _ask(alice_api, gpus_per_run=0)
    _, worker = worker_client()
    assert _claim(worker, task).status_code == 200
    assert HostedRun.objects.get(pk=task.hosted_run_id).started_at is not None
    assert alice_api.post(f"/api/v1/hosted-runs/{task.hosted_run_id}/cancel/").status_code == 200
    refused = alice_api.post("/api/v1/hosted-runs/", hosted_body(gpus_per_run=0), format="json")
    assert refused.status_code == 429 and "cancelled before any of their tasks started" in refused.content.decode()


@override_settings(HOSTED_RUNS_DAILY_QUOTA=1)
def test_a_run_whose_task_was_lost_and_queued_again_then_cancelled_still_counts(registry, alice_api):
    task = _ask(alice_api, gpus_per_run=0)
    worker, client = worker_client()
    assert _claim(client, task).status_code == 200
    from runners.services.watchdog import hosted_watchdog

    hosted_watchdog(now=timezone.now() + timedelta(hours=1))  # its worker went silent: queued again
    task.refresh_from_db()
    assert task.status == HostedTask.Status.QUEUED and task.started_at is None
    assert alice_api.post(f"/api/v1/hosted-runs/{task.hosted_run_id}/cancel/").status_code == 200
    assert alice_api.post("/api/v1/hosted-runs/", hosted_body(gpus_per_run=0), format="json").status_code == 429


def test_the_local_worker_of_a_one_machine_install_is_approved_as_it_registers(registry):
    worker, client = _worker_api("local")
    GpuWorker.objects.filter(pk=worker.pk).update(auto_approve=True)
    assert _register(client)["approved"] is True
    worker.refresh_from_db()
    assert worker.approved_by is None and worker.approved_hardware == declared_hardware(worker)


def test_a_new_token_waits_for_approval_again_unless_the_operator_vouches_for_the_machine(registry, capsys):
    from django.core.management import call_command

    worker, _ = worker_client(name="gpu-box-3")
    assert worker.approved_at is not None
    call_command("issue_worker_token", "--name", "gpu-box-3")  # the token may go to another machine
    worker.refresh_from_db()
    assert worker.approved_at is None and not worker.auto_approve
    assert "a maintainer approves it" in capsys.readouterr().err
    call_command("issue_worker_token", "--name", "gpu-box-3", "--trusted")
    worker.refresh_from_db()
    assert worker.auto_approve
