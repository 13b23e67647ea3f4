import os
import subprocess
import sys
from pathlib import Path

from portal.celery import app as celery_app

REPO = Path(__file__).resolve().parents[2]


def test_it_reports_database_and_broker_up(client, db):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "broker": "ok"}}


def test_it_answers_503_naming_the_broker_when_the_broker_is_down(client, db):
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
        "r = Client().get('/healthz'); print(r.status_code, r.json()['down'])"
    )
    env = {
        **os.environ,
        "DATABASE_URL": "postgresql://postgres@127.0.0.1:9/nothing",
        "PORTAL_DATA_DIR": str(tmp_path),
        "ALLOWED_HOSTS": "testserver",
        "DJANGO_SETTINGS_MODULE": "portal.settings",
    }
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "503 ['database']", out.stderr
