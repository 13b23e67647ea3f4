"""Registered run groups through the real pipeline (SPEC section 9): every registered seed counts, a missing
one as a failure, and a run whose log lacks the nonce is not part of the registration."""

from datetime import timedelta

import pytest
from django.utils import timezone

from competitions.demo.catalog import split_ids
from competitions.demo.runs import default_manifest, pack_answers, write_run_bundle, write_run_group
from grading.models import Flag, Registration, Run, Submission, TierAggregate
from grading.services.registrations import registration_create
from grading.services.submissions import SubmissionRefused
from leaderboard import services
from leaderboard.models import Entry
from tests.client import test_verify as client
from tests.conftest import api_client_for
from tests.lite import pipeline_upload


@pytest.fixture
def upload(registry_with_packs, alice, monkeypatch, django_capture_on_commit_callbacks):
    from grading import queue
    from leaderboard.tasks import refresh_board

    monkeypatch.setattr(queue, "send", lambda task, pk: None)
    monkeypatch.setattr(refresh_board, "delay", lambda *args, **kwargs: None)

    def send(path, *, user=alice) -> Submission:
        return pipeline_upload(path, user=user, capture=django_capture_on_commit_callbacks)

    return send


def _register(alice, seeds: int) -> Registration:
    return registration_create(
        team=alice.teams.get(), user=alice, agent_name="demo-agent", agent_version="1.0", split="low", seeds=seeds
    )


def _bundle(tmp_path, lite_packs, *, registration: Registration, nonce: str, seeds=(0, 1, 2)):
    group = write_run_group(
        out_dir=tmp_path / "runs", seeds=seeds, quality=0.9, answers=pack_answers(lite_packs), nonce=nonce
    )
    manifest = {**default_manifest(split="low", seeds=len(seeds)), "registration": registration.pk}
    return write_run_bundle(run_group=group, out_path=tmp_path / "bundle.tar.gz", manifest=manifest)


def test_ten_registered_three_reported_scores_over_ten_seeds(upload, alice, lite_packs, tmp_path, client):
    registration = _register(alice, 10)
    submission = upload(_bundle(tmp_path, lite_packs, registration=registration, nonce=registration.nonce))
    assert submission.registration_id == registration.pk
    api = api_client_for(alice)
    assert api.get(f"/api/v1/submissions/{submission.pk}/").json()["registration"] == registration.pk
    low = {agg.kind: agg.data for agg in TierAggregate.objects.filter(submission=submission, tier="low")}
    assert low["complete"]["seeds"] == 10 and low["padded"]["seeds"] == 10
    flag = Flag.objects.get(submission=submission, code="registration", key="unreported_seeds")
    assert flag.severity == "warning"
    assert flag.message.startswith("10 seeds registered, 3 reported; the 7 seed(s) not reported")
    assert flag.evidence["runs_missing"] == 7 * len(split_ids("low"))
    assert not Flag.objects.filter(submission=submission, code="registration", key="no_nonce").exists()
    # The three reported seeds' figures, diluted by the seven failures.
    unregistered = _three_seed_any_medal(upload, lite_packs, tmp_path / "plain")
    assert low["complete"]["any_medal"]["mean"] == pytest.approx(unregistered * 3 / 10)
    # The entry page says it, and the board counts ten seeds.
    assert submission.status == Submission.Status.PUBLISHED, submission.status_reason
    services.board_refresh(submission_ids=[submission.pk])
    entry = Entry.objects.get(submission=submission)
    page = client.get(f"/leaderboard/entries/{entry.pk}/").content.decode()
    assert "10 seeds registered, 3 reported" in page
    assert f"The {7 * len(split_ids('low'))} registered run(s) not reported count as failures" in page


def _three_seed_any_medal(upload, lite_packs, tmp_path) -> float:
    group = write_run_group(out_dir=tmp_path / "runs", seeds=(0, 1, 2), quality=0.9, answers=pack_answers(lite_packs))
    plain = upload(write_run_bundle(run_group=group, out_path=tmp_path / "bundle.tar.gz"))
    data = TierAggregate.objects.get(submission=plain, tier="low", kind="complete").data
    assert data is not None
    return data["any_medal"]["mean"]


def test_a_run_without_the_nonce_is_not_counted_and_is_flagged(upload, alice, lite_packs, tmp_path):
    registration = _register(alice, 3)
    path = _bundle(tmp_path, lite_packs, registration=registration, nonce="")
    submission = upload(path)
    flag = Flag.objects.get(submission=submission, code="registration", key="no_nonce")
    assert flag.severity == "blocking" and submission.status == Submission.Status.IN_REVIEW
    runs = Run.objects.filter(submission=submission)
    assert flag.evidence["total"] == runs.count() and all(run.outside_registration for run in runs)
    assert all(path.startswith("runs/") for path in flag.evidence["runs"])
    # None counts: every registered run is a failure.
    low = TierAggregate.objects.get(submission=submission, tier="low", kind="complete").data
    assert low["seeds"] == 3 and low["any_medal"]["mean"] == 0 and low["valid_submission"]["mean"] == 0


def test_a_registration_of_another_team_is_refused(upload, alice, bob, lite_packs, tmp_path):
    theirs = registration_create(
        team=bob.teams.get(), user=bob, agent_name="x", agent_version="1", split="low", seeds=3
    )
    path = _bundle(tmp_path, lite_packs, registration=theirs, nonce=theirs.nonce)
    with pytest.raises(SubmissionRefused) as refused:
        upload(path)
    assert refused.value.code == "registration_unknown"
    assert f"'registration' is {theirs.pk}, which is not a registration of Alice Lab" in refused.value.message
    assert not Submission.objects.exists()


def test_a_registration_past_its_deadline_is_refused(upload, alice, lite_packs, tmp_path):
    mine = registration_create(
        team=alice.teams.get(), user=alice, agent_name="x", agent_version="1", split="low", seeds=3
    )
    Registration.objects.filter(pk=mine.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    path = _bundle(tmp_path, lite_packs, registration=mine, nonce=mine.nonce)
    with pytest.raises(SubmissionRefused) as refused:
        upload(path)
    assert refused.value.code == "registration_expired"
    assert f"registration {mine.pk} closed on" in refused.value.message
    assert not Submission.objects.exists()


def test_the_manifest_key_must_be_a_whole_number(upload, lite_packs, tmp_path):
    group = write_run_group(out_dir=tmp_path / "runs", seeds=(0,), answers=pack_answers(lite_packs))
    manifest = {**default_manifest(split="low", seeds=1), "registration": "seven"}
    path = write_run_bundle(run_group=group, out_path=tmp_path / "bundle.tar.gz", manifest=manifest)
    with pytest.raises(SubmissionRefused) as refused:
        upload(path)
    assert "'registration' must be a whole number" in refused.value.message


@pytest.fixture
def folder(tmp_path):
    """The client alone in a clean folder, beside a copy of the engine (as tests/client/test_verify.py has it)."""
    return client.clean.__wrapped__(tmp_path)


def test_a_registered_entry_verifies_with_the_client(upload, alice, lite_packs, tmp_path, live_server, folder):
    """mleportal verify recomputes the figures as the portal counts them: ten registered seeds, three reported."""
    registration = _register(alice, 10)
    submission = upload(_bundle(tmp_path, lite_packs, registration=registration, nonce=registration.nonce))
    services.board_refresh(submission_ids=[submission.pk])
    entry = Entry.objects.get(submission=submission)
    done = client.verify(folder, f"{live_server.url}/leaderboard/entries/{entry.pk}/")
    assert done.returncode == 0, done.stdout + done.stderr
    found = client.rows(done.stdout)
    assert {result for result, _ in found.values()} == {"ok"}
    assert "(10 seeds," in found["low, all competitions: figures"][1]
