"""Intake under hostile input: every bad bundle is a 400 naming the file and the field, before any row or
file exists; the team's own report never sinks a good bundle; the run count is capped; a failure of ours
after intake removes the files. Each case here was a 500, a frozen process or a quota bypass once."""

import gzip
import io
import json
import struct
import tarfile
import threading
import time
import zipfile
from datetime import timedelta
from pathlib import Path

import pytest
import requests
from django.conf import settings

from competitions.demo.runs import default_manifest
from grading.models import Run, Submission
from grading.services import pipeline
from grading.services.submissions import submission_folder
from tests.grading.test_submission_api import RUN, private_files, upload, upload_files

GROUP = RUN.split("/")[1]
SAMPLE = b"id,EAP,HPL,MWS\nid00001,0.3,0.3,0.4\n"


@pytest.fixture
def registry(db):
    from competitions.services import competitions_load

    competitions_load()


def assert_refused(response, *words: str) -> dict:
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    for word in words:
        assert word in error["message"], error["message"]
    assert Submission.objects.count() == 0 and Run.objects.count() == 0
    assert private_files() == [] and upload_files() == []
    return error


def pax_digits_bundle(path: Path, digits: int = 200_000) -> Path:
    data = b"1" * digits
    header = tarfile.TarInfo("././@PaxHeader")
    header.type, header.size = tarfile.XHDTYPE, len(data)
    raw = header.tobuf(format=tarfile.USTAR_FORMAT) + data + bytes(-len(data) % 512)
    raw += tarfile.TarInfo("manifest.json").tobuf(format=tarfile.USTAR_FORMAT) + bytes(1024)
    path.write_bytes(gzip.compress(raw, 9))
    return path


def manifest_text(**overrides) -> bytes:
    return json.dumps({**default_manifest(), **overrides}).encode()


def _raw(tmp_path: Path, manifest: bytes, files: dict[str, bytes] | None = None, name: str = "b.tar.gz") -> Path:
    path = tmp_path / name
    with tarfile.open(path, "w:gz") as tar:
        for member, data in {
            "manifest.json": manifest,
            f"{RUN}/submission/submission.csv": SAMPLE,
            **(files or {}),
        }.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _zip(tmp_path: Path, files: dict[str, bytes]) -> Path:
    path = tmp_path / "b.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for member, data in files.items():
            archive.writestr(member, data)
    return path


EMOJI_PATH = "/".join(["\U0001f600" * 63] * 16) + "/x.csv"
GOOD = manifest_text()


def _zip64_far(tmp_path: Path) -> Path:
    data = bytearray(_zip(tmp_path, {"manifest.json": GOOD}).read_bytes())
    at = data.rindex(b"PK\x05\x06")
    struct.pack_into("<HHII", data, at + 8, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF)
    path = tmp_path / "z64.zip"
    path.write_bytes(bytes(data[:at]) + b"PK\x06\x07" + struct.pack("<IQI", 0, 2**62, 1) + bytes(data[at:]))
    return path


def _joined_zips(tmp_path: Path) -> Path:
    decoy = _zip(tmp_path, {"manifest.json": GOOD}).read_bytes()
    real = _zip(tmp_path, {"manifest.json": GOOD, f"{RUN}/submission/submission.csv": SAMPLE}).read_bytes()
    path = tmp_path / "joined.zip"
    path.write_bytes(decoy + real)
    return path


HOSTILE = {
    # case: (builder, words the message must hold)
    "pax_header_of_200000_digits": (lambda t: pax_digits_bundle(t / "pax.tar.gz"), ["tar header of more than 8 KiB"]),
    "manifest_nested_deep": (
        lambda t: _raw(t, b'{"notes": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
        ["manifest.json", "'notes[0]", "levels deep"],
    ),
    "manifest_5000_digit_integer": (
        lambda t: _raw(t, b'{"schema": "bundle-v1", "seeds": ' + b"9" * 5000 + b"}"),
        ["manifest.json", "'seeds'", "5000 digits"],
    ),
    "manifest_1e400": (
        lambda t: _raw(t, GOOD[:-1] + b', "runtime_hours": 1e400}'),
        ["manifest.json", "'runtime_hours'", "too large"],
    ),
    "manifest_4000_digit_seeds": (
        lambda t: _raw(t, GOOD[:-1] + b', "seeds": ' + b"4" * 4000 + b"}"),
        ["manifest.json", "'seeds'", "4000 digits"],
    ),
    "manifest_runtime_1e308": (
        lambda t: _raw(t, manifest_text(runtime_hours=1e308)),
        ["manifest.json", "'runtime_hours'"],
    ),
    "manifest_javascript_url": (
        lambda t: _raw(t, manifest_text(agent={"name": "A", "source_url": "javascript:alert(1)"})),
        ["'agent.source_url'", "http://"],
    ),
    "metadata_seed_10_to_the_30": (
        lambda t: _raw(
            t,
            GOOD,
            {f"runs/{GROUP}/metadata.json": json.dumps({"runs": {RUN.split("/")[2]: {"seed": 10**30}}}).encode()},
        ),
        [f"runs/{GROUP}/metadata.json", ".seed'", "31 digits"],
    ),
    "metadata_nested_deep": (
        lambda t: _raw(t, GOOD, {f"runs/{GROUP}/metadata.json": b'{"runs": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"}),
        [f"runs/{GROUP}/metadata.json", "levels deep"],
    ),
    "tar_name_over_4096_bytes_on_disk": (
        lambda t: _raw(t, GOOD, {EMOJI_PATH: b"x"}),
        ["unsafe member name", "bytes long"],
    ),
    "zip_name_over_4096_bytes_on_disk": (
        lambda t: _zip(t, {"manifest.json": GOOD, EMOJI_PATH: b"x"}),
        ["unsafe member name", "bytes long"],
    ),
    "zip64_locator_at_2_to_the_62": (_zip64_far, ["zip64 locator points at byte 4611686018427387904"]),
    "two_zips_joined": (_joined_zips, ["in front of the first entry"]),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_bundle_is_a_400_naming_the_file_and_field_and_leaves_nothing(registry, alice_api, tmp_path, case):
    build, words = HOSTILE[case]
    assert_refused(upload(alice_api, build(tmp_path)), *words)


def test_hostile_bundles_never_count_against_the_quota_or_leave_files(registry, alice_api, tmp_path, settings):
    settings.SUBMISSION_DAILY_QUOTA = 2
    for index, case in enumerate(["metadata_seed_10_to_the_30", "manifest_1e400", "pax_header_of_200000_digits"] * 3):
        folder = tmp_path / str(index)
        folder.mkdir()
        assert_refused(upload(alice_api, HOSTILE[case][0](folder)))
    good = _raw(tmp_path, GOOD, name="good.tar.gz")
    assert upload(alice_api, good).status_code == 202
    assert upload(alice_api, good).status_code == 202
    assert upload(alice_api, good).status_code == 429


def test_a_bundle_with_more_runs_than_the_cap_is_refused(registry, alice_api, tmp_path, settings):
    settings.BUNDLE_MAX_SEEDS = 2
    runs = {f"runs/{GROUP}/spooky-author-identification_{i:04d}/submission/submission.csv": b"id\n" for i in range(3)}
    error = assert_refused(
        upload(alice_api, _raw(tmp_path, GOOD, runs)), "4 runs of spooky-author-identification", "at most 2 seeds"
    )
    assert error["code"] == "too_many_runs"


def test_a_bundle_of_thousands_of_header_only_runs_is_refused_before_any_is_queued(registry, alice_api, tmp_path):
    runs = {
        f"runs/g{i % 30}/spooky-author-identification_{i:05d}/submission/submission.csv": b"id\n" for i in range(2000)
    }
    error = assert_refused(
        upload(
            alice_api,
            _raw(tmp_path, manifest_text(benchmark={**default_manifest()["benchmark"], "split": "low"}), runs),
        ),
        "the bundle holds 2001 runs",
    )
    assert error["code"] == "too_many_runs" and error["details"]["limit"] == 22 * settings.BUNDLE_MAX_SEEDS


BAD_REPORTS = {
    "null_threshold": lambda entry: {**entry, "gold_threshold": None},
    "unknown_key": lambda entry: {**entry, "my_extra_field": 1},
    "wrong_type": lambda entry: {**entry, "valid_submission": "yes"},
    "score_1e400": None,
    "nested_10000_deep": None,
    "not_an_object": None,
}


def report_entry() -> dict:
    return {
        "competition_id": "spooky-author-identification",
        "score": 0.5,
        "gold_threshold": 0.16506,
        "silver_threshold": 0.26996,
        "bronze_threshold": 0.29381,
        "median_threshold": 0.41879,
        "any_medal": False,
        "gold_medal": False,
        "silver_medal": False,
        "bronze_medal": False,
        "above_median": False,
        "submission_exists": True,
        "valid_submission": True,
        "is_lower_better": True,
        "created_at": "2026-11-30T10:00:00",
        "submission_path": f"{RUN}/submission/submission.csv",
    }


def report_bytes(case: str) -> bytes:
    if case == "score_1e400":
        return json.dumps({"competition_reports": [report_entry()]}).replace('"score": 0.5', '"score": 1e400').encode()
    if case == "not_an_object":
        return b'"competition_reports"'
    if case == "nested_10000_deep":
        return b'{"competition_reports": [' + b"[" * 10_000 + b"]" * 10_000 + b"]}"
    spoil = BAD_REPORTS[case]
    assert spoil is not None, f"{case} is written out above"
    return json.dumps({"competition_reports": [spoil(report_entry())]}).encode()


@pytest.mark.parametrize("case", sorted(BAD_REPORTS))
def test_a_bad_team_report_is_kept_and_noted_while_the_submissions_are_graded(registry, alice_api, tmp_path, case):
    path = _raw(tmp_path, GOOD, {f"runs/{GROUP}/grading_report.json": report_bytes(case)})
    response = upload(alice_api, path)
    assert response.status_code == 202, response.content
    submission = Submission.objects.get()
    run = Run.objects.get(submission=submission)  # the run exists from intake on, ready to grade
    assert run.submission_file.endswith("submission/submission.csv") and run.seed == 0
    problems = submission.report_claims["problems"]
    assert [p["file"] for p in problems] == [f"runs/{GROUP}/grading_report.json"]
    assert problems[0]["total"] >= 1 and all(isinstance(text, str) for text in problems[0]["problems"])
    if case == "unknown_key":  # the claim itself still fits: it is kept for comparison
        assert run.claimed["score"] == 0.5 and "my_extra_field" in problems[0]["problems"][0]
    else:
        assert run.claimed is None
    assert (submission_folder(submission) / "bundle" / f"runs/{GROUP}/grading_report.json").is_file()


def test_a_good_team_report_is_matched_to_its_run_at_intake(registry, alice_api, tmp_path):
    report = json.dumps({"competition_reports": [report_entry(), {**report_entry(), "submission_path": "x"}]})
    response = upload(alice_api, _raw(tmp_path, GOOD, {f"runs/{GROUP}/grading_report.json": report.encode()}))
    assert response.status_code == 202
    submission = Submission.objects.get()
    assert Run.objects.get().claimed["score"] == 0.5
    # Both entries count, so the checking step can see the one without a run as padding.
    assert submission.report_claims == {"entries_per_competition": {"spooky-author-identification": 2}, "problems": []}


def test_a_failure_of_ours_after_intake_removes_the_files_and_counts_against_nothing(
    registry, alice_api, tmp_path, settings, django_capture_on_commit_callbacks
):
    settings.SUBMISSION_DAILY_QUOTA = 1
    assert upload(alice_api, _raw(tmp_path, GOOD)).status_code == 202
    submission = Submission.objects.get()
    assert submission_folder(submission).is_dir()
    with django_capture_on_commit_callbacks(execute=True):
        pipeline.submission_fail(submission_id=submission.pk, reason="The server failed while grading.")
    submission.refresh_from_db()
    assert submission.status == Submission.Status.FAILED
    assert not submission_folder(submission).exists() and private_files() == []
    assert upload(alice_api, _raw(tmp_path, GOOD, name="again.tar.gz")).status_code == 202


@pytest.mark.django_db(transaction=True)
def test_healthz_answers_within_a_second_while_hostile_uploads_are_refused(live_server, tmp_path):
    from competitions.services import competitions_load
    from portal.accounts import services
    from tests.conftest import persona

    competitions_load()
    user = persona("mallory", team="Mallory")
    _, key = services.token_create(user=user, team=user.teams.first(), name="t")
    hostile = pax_digits_bundle(tmp_path / "pax.tar.gz").read_bytes()
    answers: list[int] = []

    def attack() -> None:
        for _ in range(10):
            response = requests.post(
                f"{live_server.url}/api/v1/submissions/",
                headers={"Authorization": f"Token {key}"},
                files={"bundle": ("b.tar.gz", hostile)},
                timeout=60,
            )
            answers.append(response.status_code)

    attacker = threading.Thread(target=attack)
    attacker.start()
    slowest = 0.0
    while attacker.is_alive():
        started = time.monotonic()
        assert requests.get(f"{live_server.url}/healthz", timeout=5).status_code in (200, 503)
        slowest = max(slowest, time.monotonic() - started)
    attacker.join()
    assert answers == [400] * 10
    assert slowest < 1.0
    assert Submission.objects.count() == 0


def _team_clients(user, names: list[str]) -> list:
    """An API client per team of `user` (teams made when missing), each with a token of that team."""
    from rest_framework.test import APIClient

    from portal.accounts import services
    from portal.accounts.models import Team

    clients = []
    for name in names:
        team = Team.objects.filter(name=name).first() or services.team_create(user=user, name=name)
        _, key = services.token_create(user=user, team=team, name="quota")
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        clients.append(client)
    return clients


def test_one_user_with_three_teams_gets_one_users_quota_not_three(registry, alice, tmp_path, settings):
    settings.SUBMISSION_DAILY_QUOTA = 2
    settings.SUBMISSION_DAILY_QUOTA_PER_USER = None  # unset, the default: the team's number
    first_team, second_team, third_team = _team_clients(alice, ["Alice Lab", "Alice Lab 2", "Alice Lab 3"])
    good = _raw(tmp_path, GOOD, name="good.tar.gz")
    assert upload(first_team, good).status_code == 202
    assert upload(second_team, good).status_code == 202
    refused = upload(third_team, good)
    assert refused.status_code == 429
    error = refused.json()["error"]
    oldest = Submission.objects.order_by("created_at").first()
    assert error["code"] == "quota_exceeded"
    assert error["details"] == {
        "limit": "user",
        "used": 2,
        "quota": 2,
        "frees_at": (oldest.created_at + timedelta(days=1)).isoformat(),
    }
    for words in ("You (alice)", "across all your teams", "per user (SUBMISSION_DAILY_QUOTA_PER_USER)", "fits at"):
        assert words in error["message"], error["message"]
    assert Submission.objects.count() == 2 and private_files_of_incoming() == []
    oldest.status = Submission.Status.REJECTED  # a rejected upload frees the user's slot
    oldest.save()
    assert upload(third_team, good).status_code == 202


def test_a_full_teams_other_member_is_refused_by_the_teams_limit(registry, alice, tmp_path, settings):
    from portal.accounts.models import Membership
    from tests.conftest import persona

    settings.SUBMISSION_DAILY_QUOTA = 1
    settings.SUBMISSION_DAILY_QUOTA_PER_USER = 5
    carol = persona("carol")
    Membership.objects.create(team=alice.teams.get(), user=carol)
    good = _raw(tmp_path, GOOD, name="good.tar.gz")
    assert upload(_team_clients(alice, ["Alice Lab"])[0], good).status_code == 202
    refused = upload(_team_clients(carol, ["Alice Lab"])[0], good)
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["details"]["limit"] == "team" and "Alice Lab made 1 uploads" in error["message"]
    assert "per team (SUBMISSION_DAILY_QUOTA)" in error["message"]


def test_uploads_brought_in_by_a_hosted_run_do_not_count_against_the_upload_quota(registry, alice, tmp_path, settings):
    settings.SUBMISSION_DAILY_QUOTA = settings.SUBMISSION_DAILY_QUOTA_PER_USER = 1
    Submission.objects.create(
        team=alice.teams.get(), created_by=alice, benchmark_id=_benchmark_id(), origin=Submission.Origin.HOSTED
    )
    assert upload(_team_clients(alice, ["Alice Lab"])[0], _raw(tmp_path, GOOD, name="g.tar.gz")).status_code == 202


@pytest.mark.django_db(transaction=True)
def test_one_user_uploading_to_two_teams_at_once_gets_one_slot(tmp_path, settings):
    from competitions.services import competitions_load
    from tests.conftest import persona

    competitions_load()
    settings.SUBMISSION_DAILY_QUOTA, settings.SUBMISSION_DAILY_QUOTA_PER_USER = 5, 1
    user = persona("alice", team="Alice Lab")
    clients = _team_clients(user, ["Alice Lab", "Alice Lab 2", "Alice Lab 3", "Alice Lab 4"])
    good = _raw(tmp_path, GOOD, name="good.tar.gz")
    barrier = threading.Barrier(len(clients))
    codes: list[int] = []

    def send(client) -> None:
        from django.db import connection

        try:
            barrier.wait()
            codes.append(upload(client, good).status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(client,)) for client in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert sorted(codes) == [202, 429, 429, 429]
    assert Submission.objects.count() == 1


def _benchmark_id() -> int:
    from tests.grading.builders import loaded_benchmark

    return loaded_benchmark().pk


def private_files_of_incoming() -> list[Path]:
    return [path for path in private_files() if "incoming-" in str(path)]
