"""Synthetic Lite material shared by pipeline, page and client tests: packs, a simulated agent's run group and
its bundle."""

import json
import tarfile
from pathlib import Path

import pytest

from competitions.demo.packs import make_demo_pack
from competitions.demo.runs import default_manifest, pack_answers, write_run_bundle, write_run_group

LITE_SEEDS = (0, 1, 2)


@pytest.fixture(scope="session")
def lite_packs(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("lite-packs")
    make_demo_pack(out_dir=out, split="low", size="small", seed=0, n_teams=80)
    return out


@pytest.fixture(scope="session")
def lite_run_group(lite_packs, tmp_path_factory) -> Path:
    return write_run_group(
        out_dir=tmp_path_factory.mktemp("runs"), seeds=LITE_SEEDS, quality=0.9, answers=pack_answers(lite_packs)
    )


@pytest.fixture(scope="session")
def lite_bundle(lite_run_group, tmp_path_factory) -> Path:
    return write_run_bundle(run_group=lite_run_group, out_path=tmp_path_factory.mktemp("bundle") / "lite.tar.gz")


@pytest.fixture
def registry_with_packs(db, lite_packs):
    from competitions.pack_services import pack_import
    from competitions.services import competitions_load

    competitions_load()
    pack_import(path=lite_packs)


def bundle_with(
    tmp_path: Path, *, manifest: dict | None = None, files: dict[str, bytes] | None = None, name: str = "bundle.tar.gz"
) -> Path:
    """A small bundle-v1 archive built member by member."""
    path = tmp_path / name
    with tarfile.open(path, "w:gz") as tar:
        members = {"manifest.json": json.dumps(manifest or default_manifest()).encode(), **(files or {})}
        for member, data in members.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            import io

            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def lite_entry(registry_with_packs, alice, lite_bundle, monkeypatch):
    """The Lite bundle (three seeds) through the real pipeline's steps, called in this process rather than by a
    worker: intake, validation, grading every run against the packs' answers, the checks, publication, and the
    board's refresh. The published entry."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from grading import queue
    from grading.models import Run
    from grading.services import finish, pipeline
    from grading.services.intake import submission_create
    from leaderboard import services
    from leaderboard.models import Entry
    from leaderboard.tasks import refresh_board

    monkeypatch.setattr(queue, "send", lambda task, pk: None)
    monkeypatch.setattr(refresh_board, "delay", lambda *args, **kwargs: None)
    upload = SimpleUploadedFile("lite.tar.gz", lite_bundle.read_bytes())
    submission = submission_create(team=alice.teams.get(), user=alice, upload=upload)
    pipeline.submission_validate(submission_id=submission.pk)
    for run in Run.objects.filter(submission=submission):
        pipeline.run_grade(run_id=run.pk)
    finish.submission_finish(submission_id=submission.pk)
    submission.refresh_from_db()
    assert submission.status == "published", (submission.status, submission.status_reason)
    services.board_refresh(submission_ids=[submission.pk])
    return Entry.objects.get(submission=submission)


def pipeline_upload(path: Path, *, user, capture, commit_create: bool = False):
    """Upload the bundle at ``path`` as ``user`` (to their team) and take it through the pipeline in this process:
    validate, grade each run, finish, each step's on-commit callbacks run. ``capture`` is pytest-django's
    django_capture_on_commit_callbacks; ``commit_create`` runs the upload's own on-commit callbacks too (the audit
    is chosen there). Queue sends and board refreshes are the caller's to stub."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from grading.models import Run
    from grading.services import finish, pipeline
    from grading.services.intake import submission_create

    file = SimpleUploadedFile(path.name, path.read_bytes())
    with capture(execute=commit_create):
        submission = submission_create(team=user.teams.get(), user=user, upload=file)
    with capture(execute=True):
        pipeline.submission_validate(submission_id=submission.pk)
        for run in Run.objects.filter(submission=submission):
            pipeline.run_grade(run_id=run.pk)
        finish.submission_finish(submission_id=submission.pk)
    submission.refresh_from_db()
    return submission
