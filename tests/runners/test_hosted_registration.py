"""Hosted runs register themselves (SPEC section 9): asking for a run makes its registration, the claim hands the
worker its nonce, run.log starts with it, the assembled bundle's manifest names the registration, intake takes
that bundle even past the deadline, and no team may upload a bundle that claims a hosted run's registration."""

from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from competitions.demo.runs import default_manifest, pack_answers, write_run_bundle, write_run_group
from grading.models import Flag, Registration, Submission
from grading.services.intake import submission_create
from grading.services.submissions import SubmissionRefused, submission_folder
from runners.models import HostedRun, HostedTask
from runners.services.assembly import hosted_run_assemble
from runners.worker.execute import nonce_first
from tests.runners.builders import COMPETITION, claim_body, collected_archive, hosted_body, outcome, worker_client

pytestmark = pytest.mark.django_db


def _ask(api, **overrides) -> HostedRun:
    response = api.post("/api/v1/hosted-runs/", hosted_body(**overrides), format="json")
    assert response.status_code == 202, response.content
    return HostedRun.objects.select_related("registration").get(pk=response.json()["id"])


def test_asking_for_a_hosted_run_registers_it(registry_with_packs, alice, alice_api):
    run = _ask(alice_api, seeds=3, image="example-agent:2.1")
    registration = run.registration
    assert registration is not None and registration.team == alice.teams.get()
    # The agent as the assembled manifest will name it, the competitions the tasks run, the seeds asked for.
    assert (registration.agent_name, registration.agent_version) == ("Example agent", "2.1")
    assert registration.competitions == [COMPETITION] and registration.split == "" and registration.seeds == 3
    assert registration.created_by == alice and len(registration.nonce) == 32
    # The team reads it with its other registrations.
    listed = alice_api.get("/api/v1/registrations/").json()
    assert [row["id"] for row in listed] == [registration.pk]


def test_a_whole_split_is_registered_by_name_and_a_digest_is_kept(registry_with_packs, alice_api):
    digest = "sha256:" + "cd" * 32
    run = _ask(alice_api, competitions=[], image=f"example-agent:1@{digest}")
    assert run.registration.split == "low" and COMPETITION in run.registration.competitions
    assert run.registration.image == digest


def test_a_refused_request_registers_nothing(registry_with_packs, alice_api):
    response = alice_api.post("/api/v1/hosted-runs/", hosted_body(seeds=0), format="json")
    assert response.status_code == 400
    assert not Registration.objects.exists() and not HostedRun.objects.exists()


def test_the_claim_hands_the_nonce_and_the_bundle_names_the_registration_even_past_the_deadline(
    registry_with_packs, alice_api, lite_packs, django_capture_on_commit_callbacks
):
    run = _ask(alice_api, seeds=2)
    first, second = HostedTask.objects.filter(hosted_run=run).order_by("seed")
    _, client = worker_client()
    spec = client.post(f"/api/v1/workers/tasks/{first.pk}/claim/", claim_body(first.pk), format="json").json()
    assert spec["registration"] == {"id": run.registration.pk, "nonce": run.registration.nonce}
    sample = (lite_packs / COMPETITION / "public" / "sample_submission.csv").read_bytes()
    log = f"{run.registration.nonce}\nthe agent's output\n".encode()
    archive = collected_archive(files={"submission/submission.csv": sample, "run.log": log})
    with django_capture_on_commit_callbacks(execute=False):
        finished = client.post(
            f"/api/v1/workers/tasks/{first.pk}/finish/", {"outcome": outcome(), "archive": archive}, format="multipart"
        )
    assert finished.status_code == 200, finished.content
    # The second task never ran: it is still one of the registered runs, a failed one.
    assert (
        alice_api.post(
            f"/api/v1/hosted-runs/{run.pk}/cancel/", {"competition_id": COMPETITION, "seed": 1}, format="json"
        ).status_code
        == 200
    ), second
    # The queue held the run past its registration's deadline: the portal's own bundle is taken all the same.
    Registration.objects.filter(pk=run.registration.pk).update(deadline=timezone.now() - timedelta(days=1))
    with django_capture_on_commit_callbacks():
        run = hosted_run_assemble(hosted_run_id=run.pk)
    submission = run.submission
    assert submission is not None, run.status_reason
    assert submission.manifest["registration"] == run.registration_id
    assert submission.registration_id == run.registration_id
    logs = [path.read_text().splitlines() for path in (submission_folder(submission) / "bundle").rglob("run.log")]
    assert [lines[0] for lines in logs] == [run.registration.nonce] * 2
    portal_own, agents = sorted(lines[1] for lines in logs)  # "[" sorts before "t"
    assert agents == "the agent's output"
    assert portal_own.startswith("[the portal collected no output of this run: cancelled")


def test_an_upload_naming_a_hosted_runs_registration_is_refused(
    registry_with_packs, alice, alice_api, lite_packs, tmp_path
):
    run = _ask(alice_api)
    registration = run.registration
    group = write_run_group(
        out_dir=tmp_path / "runs", seeds=(0,), quality=0.9, answers=pack_answers(lite_packs), nonce=registration.nonce
    )
    manifest = {**default_manifest(split="low", seeds=1), "registration": registration.pk}
    bundle = write_run_bundle(run_group=group, out_path=tmp_path / "bundle.tar.gz", manifest=manifest)
    with pytest.raises(SubmissionRefused) as refused:
        submission_create(
            team=alice.teams.get(), user=alice, upload=SimpleUploadedFile("b.tar.gz", bundle.read_bytes())
        )
    assert refused.value.code == "registration_hosted"
    assert f"hosted run {run.pk}'s own" in refused.value.message and "mleportal register" in refused.value.message
    assert not Submission.objects.exists() and not Flag.objects.exists()


def test_the_worker_writes_the_nonce_first_in_run_log(tmp_path: Path):
    log = tmp_path / "run.log"
    log.write_bytes(b"line 1\nline 2\n")
    nonce_first(log, "ab" * 16)
    assert log.read_bytes() == b"abababababababababababababababab\nline 1\nline 2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.log"]
    missing = tmp_path / "none" / "run.log"
    missing.parent.mkdir()
    nonce_first(missing, "cd" * 16)  # the agent never started: run.log holds the nonce alone
    assert missing.read_bytes() == b"cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd\n"
    linked = tmp_path / "linked"
    linked.mkdir()
    (tmp_path / "host-file").write_text("not the agent's")
    (linked / "run.log").symlink_to(tmp_path / "host-file")
    (linked / "run.log.agent").symlink_to(tmp_path / "host-file")
    nonce_first(linked / "run.log", "ef" * 16)  # links the agent made are never read through
    assert (linked / "run.log").read_bytes() == b"efefefefefefefefefefefefefefefef\n"
    assert not (linked / "run.log").is_symlink() and sorted(p.name for p in linked.iterdir()) == ["run.log"]
    untouched = tmp_path / "plain.log"
    untouched.write_bytes(b"x")
    nonce_first(untouched, "")  # a run without a registration (asked for before they existed)
    assert untouched.read_bytes() == b"x"


def test_the_run_page_and_api_name_the_registration(registry_with_packs, alice, alice_api, client):
    run = _ask(alice_api)
    assert alice_api.get(f"/api/v1/hosted-runs/{run.pk}/").json()["registration_id"] == run.registration_id
    client.force_login(alice)
    page = client.get(f"/hosted-runs/{run.pk}/").content.decode()
    assert f'href="/teams/{run.team_id}/registrations/{run.registration_id}/"' in page
    own = client.get(f"/teams/{run.team_id}/registrations/{run.registration_id}/").content.decode()
    assert f"hosted run {run.pk} registered itself" in own and run.registration.nonce in own


def test_seeds_a_bundle_cannot_hold_refuse_the_run_and_leave_nothing(registry_with_packs, alice_api, settings):
    settings.BUNDLE_MAX_SEEDS = 2
    response = alice_api.post("/api/v1/hosted-runs/", hosted_body(seeds=3), format="json")
    assert response.status_code == 400 and response.json()["error"]["details"]["field"] == "seeds"
    assert "BUNDLE_MAX_SEEDS" in response.json()["error"]["message"]
    assert not Registration.objects.exists() and not HostedRun.objects.exists()
