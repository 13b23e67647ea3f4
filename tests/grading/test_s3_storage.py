"""Private storage on an S3-compatible server: answers and bundles go there, and a worker that lacks the
unpacked bundle fetches it back. S3 itself cannot run here; moto's S3 server on localhost stands in."""

import shutil
import uuid
from io import StringIO
from pathlib import Path

import boto3
import pytest
from django.core.management import call_command

from grading.models import Run, Submission
from grading.services import finish, pipeline
from grading.services.submissions import submission_folder
from tests.competitions.builders import SPOOKY, spooky_submission, write_portal_pack
from tests.lite import bundle_with

RUN = "runs/2026-11-30T10-00-00-GMT_run-group_demo/spooky-author-identification_00000000-0000-0000-0000-000000000001"


@pytest.fixture
def s3(settings, tmp_path):
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    credentials = {"aws_access_key_id": "test", "aws_secret_access_key": "test", "region_name": "us-east-1"}
    client = boto3.client("s3", endpoint_url=endpoint, **credentials)
    # moto keeps its state per process, so each test takes a bucket of its own.
    bucket = f"portal-private-{uuid.uuid4().hex[:8]}"
    client.create_bucket(Bucket=bucket)
    client.bucket = bucket
    settings.STORAGES = {
        **settings.STORAGES,
        "private": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": bucket,
                "endpoint_url": endpoint,
                "access_key": "test",
                "secret_key": "test",
                "region_name": "us-east-1",
                "location": "private",
                "default_acl": "private",
            },
        },
    }
    settings.DATA_DIR = tmp_path / "data"
    yield client
    server.stop()


def _keys(client) -> list[str]:
    return sorted(o["Key"] for o in client.list_objects_v2(Bucket=client.bucket).get("Contents", []))


def test_answers_and_bundles_live_in_s3_and_a_worker_without_the_files_fetches_them(
    s3, db, alice, alice_api, tmp_path, django_capture_on_commit_callbacks
):
    from competitions.services import competitions_load

    competitions_load()
    call_command("import_competition_pack", str(write_portal_pack(tmp_path / "spooky")), stdout=StringIO())
    assert any(key.endswith("/test.csv") for key in _keys(s3))

    bundle = bundle_with(
        tmp_path, files={f"{RUN}/submission/submission.csv": spooky_submission(confidence=0.8).encode()}
    )
    with bundle.open("rb") as handle:
        response = alice_api.post("/api/v1/submissions/", {"bundle": handle}, format="multipart")
    assert response.status_code == 202, response.content
    submission = Submission.objects.get(pk=response.json()["id"])
    assert f"private/{submission.bundle_name}" in _keys(s3)

    # Starting the pipeline reads no file: intake did. Another machine's worker has none of the files:
    # it fetches the archive and unpacks it again.
    shutil.rmtree(submission_folder(submission))
    with django_capture_on_commit_callbacks():
        pipeline.submission_validate(submission_id=submission.pk)
    assert not submission_folder(submission).exists()
    run = Run.objects.get(submission=submission)
    with django_capture_on_commit_callbacks():
        pipeline.run_grade(run_id=run.pk)
    finish.submission_finish(submission_id=submission.pk)
    run.refresh_from_db()
    assert run.regraded["competition_id"] == SPOOKY and run.valid_submission
    assert run.score == pytest.approx(0.22314, abs=1e-5)


def test_a_failed_submission_leaves_nothing_in_s3(s3, db, alice, tmp_path, django_capture_on_commit_callbacks):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from competitions.services import competitions_load
    from grading.services.intake import submission_create

    competitions_load()
    bundle = bundle_with(tmp_path, files={f"{RUN}/submission/submission.csv": b"id,EAP,HPL,MWS\n"})
    submission = submission_create(
        team=alice.teams.get(), user=alice, upload=SimpleUploadedFile("b.tar.gz", bundle.read_bytes())
    )
    assert _keys(s3)
    with django_capture_on_commit_callbacks(execute=True):
        pipeline.submission_fail(submission_id=submission.pk, reason="test")
    assert _keys(s3) == [] and not submission_folder(submission).exists()


def _upload(alice, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from competitions.services import competitions_load
    from grading.services.intake import submission_create

    competitions_load()
    bundle = bundle_with(tmp_path, files={f"{RUN}/submission/submission.csv": b"id,EAP,HPL,MWS\n"})
    return submission_create(
        team=alice.teams.get(), user=alice, upload=SimpleUploadedFile("b.tar.gz", bundle.read_bytes())
    )


def _incoming(settings) -> list[Path]:
    return list((Path(settings.PRIVATE_ROOT) / "submissions").glob("*"))


def test_the_archive_is_stored_before_the_transaction_that_locks_the_team(s3, db, alice, tmp_path, monkeypatch):
    from django.core.files.storage import storages
    from django.db import connection

    storage = storages["private"]
    outside = len(connection.atomic_blocks)  # the test's own transaction
    depths = []
    save = storage.save

    def save_noting_the_depth(*args, **kwargs):
        depths.append(len(connection.atomic_blocks))
        return save(*args, **kwargs)

    monkeypatch.setattr(storage, "save", save_noting_the_depth)
    submission = _upload(alice, tmp_path)
    assert depths == [outside]
    assert _keys(s3) == [f"private/{submission.bundle_name}"]


def test_a_failure_after_the_store_removes_the_stored_archive_and_writes_no_row(
    s3, db, alice, tmp_path, monkeypatch, settings
):
    from grading.services import intake

    def fails(**kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(intake.scheduling, "runs_rank", fails)
    with pytest.raises(RuntimeError):
        _upload(alice, tmp_path)
    assert _keys(s3) == [] and not Submission.objects.exists() and _incoming(settings) == []


def test_a_failed_store_writes_no_row_and_leaves_no_file(s3, db, alice, tmp_path, monkeypatch, settings):
    from django.core.files.storage import storages

    def fails(*args, **kwargs):
        raise OSError("the store is down")

    monkeypatch.setattr(storages["private"], "save", fails)
    with pytest.raises(OSError):
        _upload(alice, tmp_path)
    assert _keys(s3) == [] and not Submission.objects.exists() and _incoming(settings) == []


def test_a_stored_archive_that_a_row_names_is_never_removed(s3, db, alice, tmp_path):
    from grading.services.intake import _delete_unclaimed

    submission = _upload(alice, tmp_path)
    _delete_unclaimed(submission.bundle_name)
    assert _keys(s3) == [f"private/{submission.bundle_name}"]
