"""Shared fixtures: the three personas, API clients, a real Celery worker process, a real browser."""

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from portal.accounts import services

REPO = Path(__file__).resolve().parent.parent
pytest_plugins = ["tests.lite", "tests.engine_wheel", "tests.client.data_evidence"]


def persona(username: str, *, team: str | None = None, maintainer: bool = False):
    """A user who logs in with <username>@example.org and the password '<username>-password-1'."""
    user = services.user_ensure(username=username, email=f"{username}@example.org")
    user.set_password(f"{username}-password-1")
    user.save()
    if team:
        services.team_create(user=user, name=team)
    if maintainer:
        services.maintainer_grant(user=user)
    return user


@pytest.fixture
def alice(db):
    return persona("alice", team="Alice Lab")


@pytest.fixture
def bob(db):
    return persona("bob", team="Bob Works")


@pytest.fixture
def maintainer(db):
    return persona("maya", maintainer=True)


def api_client_for(user) -> APIClient:
    team = user.teams.first()
    _, key = services.token_create(user=user, team=team, name="tests")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


@pytest.fixture
def alice_api(alice):
    return api_client_for(alice)


@pytest.fixture
def bob_api(bob):
    return api_client_for(bob)


# --- a real Celery worker process, talking to the test database through Redis ----------------


def worker_services_required() -> None:
    """Skip, saying why, a test whose worker processes would have no PostgreSQL or Redis to talk through."""
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("worker tests need DATABASE_URL to name PostgreSQL (scripts/test sets it)")
    if not settings.REDIS_URL:
        pytest.skip("worker tests need REDIS_URL (scripts/test sets it)")


def _worker_env(extra: dict | None = None) -> dict:
    worker_services_required()
    db = settings.DATABASES["default"]
    host, port, user = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432, db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    env = dict(os.environ)
    env["DATABASE_URL"] = f"postgresql://{user}{password}@{host}:{port}/{db['NAME']}"
    env["PYTHONUNBUFFERED"] = "1"
    env["PORTAL_PRIVATE_ROOT"] = str(settings.PRIVATE_ROOT)
    env.update(extra or {})
    return env


def stop_group(process: subprocess.Popen, sig: int = 15, *, grace: float = 20) -> None:
    """Signal a process started in a session of its own, and its whole group; SIGKILL after the grace."""
    if process.poll() is None:
        os.killpg(process.pid, sig)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()


class WorkerProcess:
    def __init__(self, *, queues: str = "default,grading", concurrency: int = 1, env: dict | None = None):
        self.name = f"test-{uuid.uuid4().hex[:8]}@%h"
        self.log = Path(settings.DATA_DIR) / f"worker-{uuid.uuid4().hex[:8]}.log"
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "portal",
            "worker",
            "-Q",
            queues,
            "-c",
            str(concurrency),
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
            env=_worker_env(env),
        )

    def wait_ready(self, timeout: float = 60) -> None:
        from portal.tasks import ping

        deadline = time.monotonic() + timeout
        result = ping.delay("ready?")
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"worker exited with {self.process.returncode}:\n{self.output()}")
            if result.ready():
                return
            time.sleep(0.2)
        raise RuntimeError(f"worker not ready after {timeout}s:\n{self.output()}")

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-5000:]

    def kill(self, sig: int = 15) -> None:
        stop_group(self.process, sig)
        self._log_file.close()


@pytest.fixture
def mail_dir(tmp_path) -> Path:
    folder = tmp_path / "mail"
    folder.mkdir()
    return folder


@pytest.fixture
def start_worker(transactional_db, mail_dir):
    """Start worker processes against the test database (and this test's private storage); stop them after."""
    import redis

    worker_services_required()  # before Redis is touched: without REDIS_URL the test skips, it does not error
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    started: list[WorkerProcess] = []

    def start(**env) -> WorkerProcess:
        worker = WorkerProcess(env={"EMAIL_FILE_PATH": str(mail_dir), **env})
        started.append(worker)
        worker.wait_ready()
        return worker

    try:
        yield start
    finally:
        for worker in started:
            worker.kill()


@pytest.fixture
def celery_worker(start_worker):
    return start_worker()


# --- a real browser: Debian's Chromium driven by Playwright ----------------------------------


def _chromium_path() -> str:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("Chromium is not installed; scripts/test installs Debian's chromium package with apt")


@pytest.fixture(scope="session")
def live_server(django_db_setup, django_db_blocker, live_server):
    # Depending on the database set-up makes the server stop before the test database is dropped. Its
    # request threads can leave a connection open behind them; end those so the drop succeeds.
    yield live_server
    live_server.stop()
    from django.db import connection

    with django_db_blocker.unblock(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )


@pytest.fixture
def page(live_server):
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; Django's ORM calls in the test are still synchronous.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=_chromium_path(),
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        context = browser.new_context(base_url=live_server.url)
        context.set_default_timeout(15000)
        page = context.new_page()
        try:
            yield page
        finally:
            context.close()
            browser.close()
    os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture(autouse=True)
def private_storage(settings, tmp_path):
    """Each test gets its own private storage folder, so what one leaves behind another cannot see."""
    root = tmp_path / "private"
    settings.PRIVATE_ROOT = root
    settings.STORAGES = {
        **settings.STORAGES,
        "private": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": root, "base_url": None},
        },
    }
    return root


@pytest.fixture(autouse=True)
def fresh_counters(settings):
    """Rate-limit counters of this test alone: the same Redis, under a key prefix no other test uses.

    Login and API counters (uploads: 30 an hour) are keyed by email address, account id and client address,
    which repeat across tests and test runs (the test database restarts its ids), and they outlive a test by
    their window; without this a test could be throttled by an earlier run's uploads.
    """
    settings.CACHES = {
        name: {**config, "KEY_PREFIX": f"test-{uuid.uuid4().hex}"} for name, config in settings.CACHES.items()
    }
