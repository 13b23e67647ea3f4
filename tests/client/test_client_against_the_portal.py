"""The one-file client against the real portal: live server, Redis, a Celery worker, PostgreSQL."""

import subprocess
import sys
from pathlib import Path

import pytest

from grading.models import Submission
from portal.accounts import services

CLIENT = Path(__file__).resolve().parents[2] / "client" / "mleportal.py"


@pytest.mark.worker
def test_make_bundle_then_upload_waits_and_prints_the_tiers(
    live_server, registry_with_packs, alice, celery_worker, lite_run_group, tmp_path
):
    bundle = tmp_path / "lite.tar.gz"
    made = subprocess.run(
        [
            sys.executable,
            str(CLIENT),
            "make-bundle",
            str(lite_run_group),
            "--out",
            str(bundle),
            "--agent-name",
            "demo-agent",
            "--split",
            "low",
            "--seeds",
            "3",
            "--llm",
            "none",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert made.returncode == 0, made.stderr
    _, key = services.token_create(user=alice, team=alice.teams.get(), name="cli")
    uploaded = subprocess.run(
        [
            sys.executable,
            str(CLIENT),
            "upload",
            str(bundle),
            "--url",
            live_server.url,
            "--token",
            key,
            "--poll-interval",
            "1",
            "--timeout",
            "300",
        ],
        capture_output=True,
        text=True,
        timeout=360,
    )
    assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr
    assert "low" in uploaded.stdout and "±" in uploaded.stdout
    submission_id = Submission.objects.get().pk
    assert uploaded.stdout.splitlines()[-1] == f"page: {live_server.url}/submissions/{submission_id}/"


@pytest.mark.worker
def test_upload_of_a_bad_bundle_exits_non_zero_with_the_portals_message(
    live_server, registry_with_packs, alice, tmp_path
):
    bundle = tmp_path / "bad.tar.gz"
    bundle.write_bytes(b"not an archive at all")
    _, key = services.token_create(user=alice, team=alice.teams.get(), name="cli")
    result = subprocess.run(
        [sys.executable, str(CLIENT), "upload", str(bundle), "--url", live_server.url, "--token", key],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 5
    assert "HTTP 400" in result.stderr and "not_an_archive" in result.stderr
