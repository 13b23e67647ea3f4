import json
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from grading.models import PeriodicStamp, WorkerHeartbeat
from portal.celery import app as celery_app
from runners.models import HostedRun, HostedTask
from tests.grading.builders import grading_submission, loaded_benchmark
from tests.runners.builders import worker_client

REPO = Path(__file__).resolve().parents[2]
PROCESS = "grading-box-7:4242:abc123"


def healthz(client) -> tuple[int, dict]:
    response = client.get("/healthz")
    return response.status_code, response.json()


def everything_up(*, beat_seconds_ago: float = 1, watchdog_seconds_ago: float = 1) -> None:
    WorkerHeartbeat.objects.create(name=PROCESS, beat_at=timezone.now() - timedelta(seconds=beat_seconds_ago))
    PeriodicStamp.objects.create(
        task="grading.watchdog", finished_at=timezone.now() - timedelta(seconds=watchdog_seconds_ago)
    )


@pytest.fixture
def registry(db):
    from competitions.services import competitions_load

    competitions_load()


def hosted_tasks(team, *, gpus_per_run: int, count: int = 2) -> None:
    from competitions.models import Competition

    run = HostedRun.objects.create(
        team=team,
        benchmark=loaded_benchmark(),
        image="agent:1",
        split="low",
        seeds=count,
        time_limit_hours=1,
        gpus_per_run=gpus_per_run,
    )
    competition = Competition.objects.get(slug="spooky-author-identification")
    for seed in range(count):
        HostedTask.objects.create(hosted_run=run, competition=competition, seed=seed, queued_at=timezone.now())


def test_it_reports_every_part_ok_when_workers_beat_and_the_watchdog_runs(client, db, django_assert_max_num_queries):
    everything_up()
    with django_assert_max_num_queries(8):  # cheap: a few aggregates, whatever the size of the tables
        status, body = healthz(client)
    assert status == 200 and body["status"] == "ok", body
    assert body["checks"] == {
        "database": "ok",
        "broker": "ok",
        "grading_workers": "ok",
        "grading_queue": "ok",
        "scheduler": "ok",
        "gpu_workers": "none",
    }
    parts = body["parts"]
    assert parts["grading_workers"]["alive"] == 1 and parts["grading_workers"]["lost_after_seconds"] == 30
    assert parts["scheduler"]["every_seconds"] == 15 and parts["scheduler"]["watchdog_finished_seconds"] < 5
    assert parts["gpu_workers"] == {
        "state": "none",
        "detail": "no GPU worker is registered, and no hosted task waits",
        "registered": 0,
        "alive": 0,
        "last_beat_seconds": None,
        "tasks_waiting": 0,
        "oldest_waiting_task_seconds": None,
        "tasks_no_live_worker_fits": 0,
    }
    assert "down" not in body and "late" not in body


def test_it_stays_cheap_while_a_team_has_twenty_thousand_runs_waiting(client, alice, registry):
    everything_up()
    grading_submission(alice.teams.get(), runs=20_000)
    client.get("/healthz")  # the first request imports what it needs
    started = time.monotonic()
    status, body = healthz(client)
    took = time.monotonic() - started
    assert status == 200 and body["parts"]["grading_queue"]["runs_waiting"] == 20_000
    print(f"/healthz with 20,000 runs waiting: {took * 1000:.0f} ms")
    assert took < 2, took


def test_it_answers_503_naming_the_grading_workers_when_none_beat_within_worker_lost_seconds(client, db, settings):
    everything_up(beat_seconds_ago=31)
    status, body = healthz(client)
    assert status == 503 and body["status"] == "unavailable"
    assert body["down"] == ["grading_workers"]
    assert body["checks"]["grading_workers"].startswith(
        "down: no grading worker process has beaten for 30 s (last beat: 31 s ago)"
    )
    settings.WORKER_LOST_SECONDS = 60  # the same beat is fresh enough under a longer limit
    assert healthz(client)[0] == 200


def test_it_answers_503_when_runs_wait_with_no_grading_worker_to_take_them(client, alice, registry):
    grading_submission(alice.teams.get(), runs=5)
    status, body = healthz(client)
    assert status == 503 and body["down"] == ["grading_workers", "grading_queue"]
    assert body["parts"]["grading_queue"]["runs_waiting"] == 5
    assert "5 run(s) and 0 submission step(s) wait, and no grading worker is alive" in body["checks"]["grading_queue"]
    assert body["parts"]["grading_workers"]["last_beat_seconds"] is None
    # What it shows is public: counts and ages, no team, no worker's or host's name.
    text = json.dumps(body)
    assert "Alice" not in text and "alice" not in text

    everything_up()
    status, body = healthz(client)
    assert status == 200 and body["parts"]["grading_queue"]["runs_waiting"] == 5
    assert PROCESS not in json.dumps(body) and "grading-box-7" not in json.dumps(body)


def test_it_names_the_gpu_workers_when_hosted_tasks_wait_that_no_live_worker_can_take(client, alice, registry):
    everything_up()
    hosted_tasks(alice.teams.get(), gpus_per_run=2)
    status, body = healthz(client)
    assert status == 503 and body["down"] == ["gpu_workers"]
    assert body["checks"]["gpu_workers"] == "down: 2 hosted task(s) wait and no GPU worker beat within 60 s"

    worker, _ = worker_client(name="gpu-box-1", gpus=1)  # registered and beating, but too small
    status, body = healthz(client)
    assert status == 503 and "wait for more GPUs than any live worker has (1)" in body["checks"]["gpu_workers"]
    assert body["parts"]["gpu_workers"]["tasks_no_live_worker_fits"] == 2 and "gpu-box-1" not in json.dumps(body)

    worker_client(name="gpu-box-2", gpus=2)
    status, body = healthz(client)
    assert status == 200 and body["parts"]["gpu_workers"]["alive"] == 2, body


def test_a_silent_gpu_worker_with_nothing_waiting_is_a_warning_not_an_outage(client, db):
    everything_up()
    worker, _ = worker_client()
    type(worker).objects.filter(pk=worker.pk).update(beat_at=timezone.now() - timedelta(minutes=5))
    status, body = healthz(client)
    assert status == 200 and body["status"] == "degraded" and body["late"] == ["gpu_workers"]
    assert body["checks"]["gpu_workers"] == "late: 1 registered, none beat within 60 s"


def test_a_watchdog_that_stopped_finishing_shows_the_scheduler_late(client, db):
    everything_up(watchdog_seconds_ago=120)
    status, body = healthz(client)
    assert status == 200 and body["status"] == "degraded" and body["late"] == ["scheduler"]
    assert body["checks"]["scheduler"] == (
        "late: the watchdog last finished 120 s ago, not every 15 s: celery beat may be down, "
        "or no worker takes the default queue"
    )
    PeriodicStamp.objects.all().delete()
    assert "has not finished once yet" in healthz(client)[1]["checks"]["scheduler"]


def test_the_watchdog_leaves_its_trace(db):
    from grading.tasks import watchdog

    watchdog.apply()
    stamp = PeriodicStamp.objects.get(task="grading.watchdog")
    assert timezone.now() - stamp.finished_at < timedelta(seconds=5)


def test_it_answers_503_naming_the_broker_when_the_broker_is_down(client, db):
    everything_up()
    original = celery_app.conf.broker_url
    celery_app.conf.broker_url = "redis://127.0.0.1:9/0"  # nothing listens on port 9
    try:
        response = client.get("/healthz")
    finally:
        celery_app.conf.broker_url = original
    assert response.status_code == 503
    body = response.json()
    assert body["down"] == ["broker"] and body["checks"]["database"] == "ok"


def test_it_answers_503_naming_the_database_when_the_database_is_down(tmp_path):
    code = (
        "import django; django.setup(); from django.test import Client;"
        "r = Client().get('/healthz'); b = r.json(); print(r.status_code, b['down'], b['checks']['scheduler'])"
    )
    env = {
        **os.environ,
        "DATABASE_URL": "postgresql://postgres@127.0.0.1:9/nothing",
        "PORTAL_DATA_DIR": str(tmp_path),
        "ALLOWED_HOSTS": "testserver",
        "DJANGO_SETTINGS_MODULE": "portal.settings",
    }
    # A fresh interpreter imports Django and the whole portal: on a loaded machine that alone can take a minute.
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    assert out.stdout.strip() == "503 ['database'] unknown: the database is down", out.stderr


def test_the_status_page_shows_the_parts_and_only_maintainers_see_the_processes(client, db, maintainer):
    everything_up()
    page = client.get("/status/").content.decode()
    assert 'id="part-grading_workers"' in page and 'id="part-gpu_workers"' in page and ">ok<" in page
    assert PROCESS not in page and 'id="processes"' not in page

    client.force_login(maintainer)
    page = client.get("/status/").content.decode()
    assert PROCESS in page and "alive" in page


@pytest.mark.worker
def test_a_real_workers_heartbeat_keeps_it_up_and_its_death_answers_503_within_worker_lost_seconds(
    client, settings, start_worker
):
    from grading.tasks import watchdog

    settings.WORKER_LOST_SECONDS = 3
    worker = start_worker(WORKER_HEARTBEAT_SECONDS="1", WORKER_LOST_SECONDS="3")
    watchdog.delay().get(timeout=30)  # sent to the worker, as celery beat sends it
    deadline = time.monotonic() + 15
    while healthz(client)[0] != 200:
        assert time.monotonic() < deadline, (healthz(client), worker.output())
        time.sleep(0.2)
    assert healthz(client)[1]["checks"]["scheduler"] == "ok"

    worker.kill(signal.SIGKILL)
    killed = time.monotonic()
    while healthz(client)[0] == 200:
        assert time.monotonic() - killed < 10
        time.sleep(0.2)
    status, body = healthz(client)
    assert status == 503 and body["down"] == ["grading_workers"]
    assert time.monotonic() - killed >= 1  # its last beat was fresh until WORKER_LOST_SECONDS passed
