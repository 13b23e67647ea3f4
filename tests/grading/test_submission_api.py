"""Intake through the API: bad bundles, limits, quota and who sees what. Nothing here needs a worker:
refused bundles never reach one, and accepted ones are only queued."""

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest
from django.conf import settings

from competitions.demo.runs import default_manifest
from grading.models import Run, Submission
from tests.lite import bundle_with

RUN = "runs/2026-11-30T10-00-00-GMT_run-group_demo/spooky-author-identification_00000000-0000-0000-0000-000000000001"


def upload(api, path: Path):
    with path.open("rb") as handle:
        return api.post("/api/v1/submissions/", {"bundle": handle}, format="multipart")


def private_files() -> list[Path]:
    root = Path(settings.PRIVATE_ROOT) / "submissions"
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def upload_files() -> list[Path]:
    return [p for p in Path(settings.FILE_UPLOAD_TEMP_DIR).rglob("*") if p.is_file()]


@pytest.fixture
def registry(db):
    from competitions.services import competitions_load

    competitions_load()


def tar_with(tmp_path: Path, build) -> Path:
    path = tmp_path / "bad.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        data = json.dumps(default_manifest()).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        build(tar)
    return path


def _member(tar, name, data=b"id,EAP,HPL,MWS\n", **attrs):
    info = tarfile.TarInfo(name)
    info.size = len(data) if not attrs.get("type") else 0
    for key, value in attrs.items():
        setattr(info, key, value)
    tar.addfile(info, io.BytesIO(data) if not attrs.get("type") else None)


def _zip_slip(tmp_path):
    path = tmp_path / "slip.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("manifest.json", json.dumps(default_manifest()))
        archive.writestr("../../evil.csv", "x")
    return path


def _bomb(tmp_path):
    path = tmp_path / "bomb.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        data = json.dumps(default_manifest()).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo(f"{RUN}/logs/zeros.log")
        info.size = 300 * 1024**2

        class Zeros:
            def read(self, size=-1):
                return bytes(size)

        tar.addfile(info, Zeros())
    return path


BAD_BUNDLES = {
    "zip_slip": (_zip_slip, "../"),
    "absolute_path": (lambda t: tar_with(t, lambda tar: _member(tar, "/etc/evil.csv")), "/etc/evil.csv"),
    "symlink": (
        lambda t: tar_with(
            t,
            lambda tar: _member(tar, f"{RUN}/submission/submission.csv", type=tarfile.SYMTYPE, linkname="/etc/passwd"),
        ),
        "link",
    ),
    "hard_link": (
        lambda t: tar_with(
            t,
            lambda tar: _member(
                tar, f"{RUN}/submission/submission.csv", type=tarfile.LNKTYPE, linkname="manifest.json"
            ),
        ),
        "link",
    ),
    "device": (lambda t: tar_with(t, lambda tar: _member(tar, f"{RUN}/dev", type=tarfile.CHRTYPE)), "device"),
    "bomb": (_bomb, ""),
    "corrupt": (lambda t: _write(t / "corrupt.tar.gz", b"\x1f\x8b\x08\x00" + b"garbage" * 100), ""),
    "not_an_archive": (lambda t: _write(t / "notes.tar.gz", b"just some text\n"), ""),
    "missing_manifest": (lambda t: _no_manifest(t), "manifest.json"),
    "wrong_manifest_key": (
        lambda t: bundle_with(
            t,
            manifest={**default_manifest(), "benchmark": {**default_manifest()["benchmark"], "split": "lite"}},
            files={f"{RUN}/run.log": b"x"},
        ),
        "benchmark.split",
    ),
    "unknown_competition": (
        lambda t: bundle_with(t, files={"runs/g/no-such-competition_1234/submission/submission.csv": b"id\n"}),
        "no-such-competition",
    ),
}


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _no_manifest(tmp_path: Path) -> Path:
    path = tmp_path / "nomanifest.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        _member(tar, f"{RUN}/run.log", b"log")
    return path


def _truncated(tmp_path: Path) -> Path:
    good = bundle_with(tmp_path, files={f"{RUN}/submission/submission.csv": b"id,EAP,HPL,MWS\n" * 5000})
    data = good.read_bytes()
    return _write(tmp_path / "truncated.tar.gz", data[: len(data) // 2])


BAD_BUNDLES["truncated"] = (_truncated, "")


@pytest.mark.parametrize("case", sorted(BAD_BUNDLES))
def test_a_bad_bundle_is_refused_with_a_clear_message_and_leaves_nothing(registry, alice_api, tmp_path, case):
    build, expected_text = BAD_BUNDLES[case]
    response = upload(alice_api, build(tmp_path))
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] and len(error["message"]) > 20
    assert expected_text in error["message"] + json.dumps(error["details"])
    assert Submission.objects.count() == 0 and Run.objects.count() == 0
    assert private_files() == [] and upload_files() == []
    assert not (Path(settings.PRIVATE_ROOT).parent / "evil.csv").exists()


def test_a_submission_csv_over_the_limit_is_refused(registry, alice_api, tmp_path, settings):
    settings.BUNDLE_MAX_SUBMISSION_BYTES = 100_000
    big = b"id,EAP,HPL,MWS\n" + b"id00001,0.3,0.3,0.4\n" * 10_000
    response = upload(alice_api, bundle_with(tmp_path, files={f"{RUN}/submission/submission.csv": big}))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "submission_too_large"
    assert "submission.csv" in response.json()["error"]["message"] and Submission.objects.count() == 0


def test_a_competition_whose_honest_submissions_are_large_accepts_them_up_to_the_bound_of_its_format(
    registry, alice_api, tmp_path, settings
):
    from competitions.models import Competition, CompetitionPack

    settings.BUNDLE_MAX_SUBMISSION_BYTES = 100_000
    spooky = Competition.objects.get(slug="spooky-author-identification")
    # The bound recorded at import (rows x the widest honest row), not the size of the small answers file.
    CompetitionPack.objects.create(
        competition=spooky, answers_path="packs/x/test.csv", answers_bytes=1_000, max_submission_bytes=240_000
    )
    rows = b"id00001,0.3,0.3,0.4\n"
    fits = b"id,EAP,HPL,MWS\n" + rows * (230_000 // len(rows))
    response = upload(alice_api, bundle_with(tmp_path, files={f"{RUN}/submission/submission.csv": fits}))
    assert response.status_code == 202, response.content

    too_big = b"id,EAP,HPL,MWS\n" + rows * (250_000 // len(rows))
    response = upload(
        alice_api, bundle_with(tmp_path, name="b.tar.gz", files={f"{RUN}/submission/submission.csv": too_big})
    )
    assert response.status_code == 400 and response.json()["error"]["code"] == "submission_too_large"
    assert "at most 240000 bytes" in response.json()["error"]["message"]


def test_a_pack_imported_before_the_bound_was_recorded_accepts_twice_its_answers(
    registry, alice_api, tmp_path, settings
):
    from competitions.models import Competition, CompetitionPack

    settings.BUNDLE_MAX_SUBMISSION_BYTES = 100_000
    spooky = Competition.objects.get(slug="spooky-author-identification")
    CompetitionPack.objects.create(competition=spooky, answers_path="packs/x/test.csv", answers_bytes=120_000)
    too_big = b"id,EAP,HPL,MWS\n" + b"id00001,0.3,0.3,0.4\n" * (250_000 // 20)
    response = upload(alice_api, bundle_with(tmp_path, files={f"{RUN}/submission/submission.csv": too_big}))
    assert response.status_code == 400 and "at most 240000 bytes" in response.json()["error"]["message"]


def test_a_bundle_over_the_size_limit_gets_413(registry, alice_api, tmp_path, settings):
    settings.BUNDLE_MAX_BYTES = 2048
    response = upload(alice_api, _write(tmp_path / "big.tar.gz", b"\x1f\x8b" + bytes(10_000)))
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"
    assert Submission.objects.count() == 0 and upload_files() == []


def test_the_request_needs_the_bundle_field(registry, alice_api):
    response = alice_api.post("/api/v1/submissions/", {"other": "x"}, format="multipart")
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "Send the bundle as the multipart/form-data field 'bundle'."


def test_the_daily_quota_gives_429_and_rejected_submissions_do_not_count(
    registry, alice, alice_api, tmp_path, settings
):
    settings.SUBMISSION_DAILY_QUOTA = 1
    good = bundle_with(tmp_path, files={f"{RUN}/submission/submission.csv": b"id,EAP,HPL,MWS\n"})
    first = upload(alice_api, good)
    assert first.status_code == 202
    Submission.objects.filter(pk=first.json()["id"]).update(status=Submission.Status.REJECTED)
    assert upload(alice_api, good).status_code == 202
    third = upload(alice_api, good)
    assert third.status_code == 429 and "the limit is 1" in third.json()["error"]["message"]
    assert Submission.objects.count() == 2


def test_bob_cannot_see_alices_unpublished_submission(registry, alice_api, bob_api, tmp_path, client):
    good = bundle_with(tmp_path, files={f"{RUN}/submission/submission.csv": b"id,EAP,HPL,MWS\n"})
    submission_id = upload(alice_api, good).json()["id"]
    assert alice_api.get(f"/api/v1/submissions/{submission_id}/").status_code == 200
    for path in ("", "results/", "grading-report/"):
        response = bob_api.get(f"/api/v1/submissions/{submission_id}/{path}")
        assert response.status_code == 404, path
        assert client.get(f"/api/v1/submissions/{submission_id}/{path}").status_code == 404
    assert bob_api.get("/api/v1/submissions/").json() == []
    assert [s["id"] for s in alice_api.get("/api/v1/submissions/").json()] == [submission_id]
    Submission.objects.filter(pk=submission_id).update(status=Submission.Status.PUBLISHED)
    assert bob_api.get(f"/api/v1/submissions/{submission_id}/").status_code == 200


def test_an_accepted_bundle_is_kept_in_its_own_private_folder(registry, alice_api, tmp_path):
    good = bundle_with(tmp_path, files={f"{RUN}/submission/submission.csv": b"id,EAP,HPL,MWS\n"})
    body = upload(alice_api, good).json()
    submission = Submission.objects.get(pk=body["id"])
    folder = Path(settings.PRIVATE_ROOT) / "submissions" / str(submission.pk)
    assert all(p.is_relative_to(folder) for p in private_files())
    assert (folder / "bundle" / RUN / "submission" / "submission.csv").is_file()
    assert submission.manifest["agent"]["name"] == "demo-agent" and submission.status == "received"
