"""A task's output tail reaches the run page when it ends, also for an agent that failed before its first
heartbeat (the finish carries it), redacted of the run's secrets like every tail."""

import json

import pytest

from runners.models import HostedTask
from tests.runners.builders import SECRET, claim_body, hosted_body, worker_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def registry(registry_with_packs):
    return registry_with_packs


def test_a_task_that_failed_at_once_shows_its_output_tail_open_on_the_run_page(registry, alice_api, client, alice):
    worker, worker_api = worker_client()
    run_id = alice_api.post("/api/v1/hosted-runs/", hosted_body(), format="json").json()["id"]
    task = HostedTask.objects.get(hosted_run_id=run_id)
    assert (
        worker_api.post(f"/api/v1/workers/tasks/{task.pk}/claim/", claim_body(task.pk), format="json").status_code
        == 200
    )

    tail = f"reading /home/data\nkey {SECRET}\nno sample_submission.csv in /home/data: nothing to submit\n"
    outcome = {"attempt": 1, "status": "exited", "exit_code": 1, "reason": "the agent exited with code 1",
               "elapsed_seconds": 0.4, "output_tail": tail}  # fmt: skip
    finished = worker_api.post(
        f"/api/v1/workers/tasks/{task.pk}/finish/", {"outcome": json.dumps(outcome)}, format="multipart"
    )
    assert finished.status_code == 200, finished.content

    task.refresh_from_db()
    assert "no sample_submission.csv in /home/data" in task.output_tail and SECRET not in task.output_tail
    client.force_login(alice)
    page = client.get(f"/hosted-runs/{run_id}/").content.decode()
    assert "<details open><summary>Output (last lines)</summary>" in page
    assert "no sample_submission.csv in /home/data: nothing to submit" in page and SECRET not in page
    shown = alice_api.get(f"/api/v1/hosted-runs/{run_id}/").json()["runs"][0]["output_tail"]
    assert "nothing to submit" in shown and SECRET not in shown


def test_a_finish_without_a_tail_keeps_the_heartbeats_and_a_bad_one_is_refused(registry, alice_api):
    worker, worker_api = worker_client()
    run_id = alice_api.post("/api/v1/hosted-runs/", hosted_body(), format="json").json()["id"]
    task = HostedTask.objects.get(hosted_run_id=run_id)
    worker_api.post(f"/api/v1/workers/tasks/{task.pk}/claim/", claim_body(task.pk), format="json")
    beat = {"running": [{"task_id": task.pk, "attempt": 1, "elapsed_seconds": 3, "output_tail": "step 1"}]}
    assert worker_api.post("/api/v1/workers/heartbeat/", beat, format="json").status_code == 200
    url = f"/api/v1/workers/tasks/{task.pk}/finish/"

    bad = worker_api.post(url, {"outcome": json.dumps({"attempt": 1, "status": "exited", "output_tail": 7})})
    assert bad.status_code == 400 and bad.json()["error"]["details"] == {"field": "outcome.output_tail"}
    ok = worker_api.post(url, {"outcome": json.dumps({"attempt": 1, "status": "exited", "exit_code": 0})})
    assert ok.status_code == 200
    task.refresh_from_db()
    assert task.output_tail == "step 1"
