"""Hosted runs meet the workers that exist: the form starts from what they can run and says what a run gets on
each backend; a request no available (approved, lately heard from) worker can hold is refused at once and costs
no quota; a queued task that no worker can hold any more (a worker came back smaller) says so in its Reason."""

import re

import pytest
from django.test import override_settings

from portal.accounts.selectors import teams_for_user
from runners.models import GpuWorker, HostedRun, HostedTask
from runners.services.workers import Capacity, worker_register, worker_token_issue
from tests.runners.builders import COMPETITION, approve, hosted_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def registry(registry_with_packs):
    return registry_with_packs


def register(name: str = "gpu-box-1", *, gpus: int, backend: str = "process", sandbox: str = "bwrap") -> GpuWorker:
    worker, _ = worker_token_issue(name=name)
    capacity = Capacity(
        gpus=gpus,
        gpu_model="A10" if gpus else "",
        gpu_memory_gb=24 if gpus else 0,
        cpus=8,
        memory_gb=64,
        slots=2,
        backend=backend,
        version="",
        sandbox=sandbox,
    )
    return approve(worker_register(worker=worker, capacity=capacity))


def _gpus_input(page: str) -> str:
    match = re.search(r'<input[^>]*name="gpus_per_run"[^>]*>', page)
    assert match, page
    value = re.search(r'value="(\d+)"', match.group(0))
    assert value, match.group(0)
    return value.group(1)


def test_the_form_defaults_to_the_gpus_the_workers_have(registry, client, alice):
    client.force_login(alice)
    register(gpus=0)
    page = client.get("/hosted-runs/").content.decode()
    assert _gpus_input(page) == "0"
    assert "GPUs per run" in page and "The largest worker has 0" in page
    assert "LLMs" in page and "Environment variables" in page and "Gpus" not in page and "Llms" not in page
    register("gpu-box-2", gpus=4)
    assert _gpus_input(client.get("/hosted-runs/").content.decode()) == "1"  # the board's standard, not all 4


@override_settings(HOSTED_RUNS_DAILY_QUOTA=2)
def test_a_request_no_worker_can_hold_is_refused_at_once_and_costs_no_quota(registry, alice_api):
    register(gpus=0)
    response = alice_api.post("/api/v1/hosted-runs/", hosted_body(gpus_per_run=1), format="json")

    assert response.status_code == 409, response.content
    error = response.json()["error"]
    assert error["code"] == "does_not_fit" and error["details"] == {"field": "gpus_per_run"}
    assert "no worker has 1 GPU; the largest has 0" in error["message"]
    assert "ask for at most 0 GPUs per run" in error["message"]
    assert not HostedRun.objects.exists() and not HostedTask.objects.exists()
    for _ in range(2):  # the whole quota of 2 is still there
        assert alice_api.post("/api/v1/hosted-runs/", hosted_body(gpus_per_run=0), format="json").status_code == 202


def test_the_form_says_no_worker_has_the_gpus_asked_for(registry, client, alice):
    register(gpus=1)
    client.force_login(alice)
    response = client.post(
        "/hosted-runs/",
        {
            "team": teams_for_user(user=alice).first().pk,
            "image": "example-agent:latest",
            "split": "low",
            "seeds": 1,
            "time_limit_hours": 1,
            "gpus_per_run": 2,
            "competitions": COMPETITION,
        },
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "no worker has 2 GPUs; the largest has 1" in page and not HostedRun.objects.exists()


def test_a_queued_task_that_no_worker_can_hold_any_more_says_so_and_clears_when_one_can(
    registry, alice_api, client, alice
):
    register(gpus=2)
    run_id = alice_api.post("/api/v1/hosted-runs/", hosted_body(gpus_per_run=2), format="json").json()["id"]
    task = HostedTask.objects.get(hosted_run_id=run_id)
    assert task.reason == ""

    register(gpus=1)  # the same worker comes back with one GPU
    task.refresh_from_db()
    assert task.status == HostedTask.Status.QUEUED
    assert task.reason.startswith("waiting: no worker has 2 GPUs; the largest has 1 now")
    client.force_login(alice)
    assert "no worker has 2 GPUs; the largest has 1" in client.get(f"/hosted-runs/{run_id}/").content.decode()

    register("gpu-box-2", gpus=2)
    task.refresh_from_db()
    assert task.reason == ""


def test_with_no_worker_registered_the_form_and_the_tasks_say_so(registry, alice_api, client, alice):
    client.force_login(alice)
    page = client.get("/hosted-runs/").content.decode()
    assert "No approved worker has been heard from in the last minutes" in page and _gpus_input(page) == "0"

    run_id = alice_api.post("/api/v1/hosted-runs/", hosted_body(gpus_per_run=1), format="json").json()["id"]
    task = HostedTask.objects.get(hosted_run_id=run_id)
    assert task.reason.startswith("waiting: no approved worker was heard from in the last 60 s")

    register(gpus=1)
    task.refresh_from_db()
    assert task.reason == ""


def test_the_form_says_what_a_run_gets_on_each_backend_there_is(registry, client, alice):
    client.force_login(alice)
    register(gpus=0, backend="process", sandbox="bwrap")
    page = client.get("/hosted-runs/").content.decode()
    offer = page[page.index('<section id="hosted-offer">') :]
    offer = offer[: offer.index("</section>")]
    assert "a container with no network" not in page  # what the process backend is not
    assert "<li>Not a container" in offer and "bubblewrap sandbox with no network" in offer
    assert "a uid of its own" in offer and "processes and" in offer and "CPU time of the time limit" in offer

    register("gpu-box-2", gpus=1, backend="docker", sandbox="")
    register("trusted-box", gpus=0, backend="process", sandbox="off")
    offer = client.get("/hosted-runs/").content.decode()
    assert "gpu-box-2: a Docker container of the image with no network, at most 4 CPUs and 16 GB of memory" in offer
    assert "trusted-box: a plain process on the worker machine, as the worker&#x27;s own user" in offer
    assert "<li>gpu-box-1: not a container" in offer
