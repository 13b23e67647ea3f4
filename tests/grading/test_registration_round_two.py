"""Registrations, round two (SPEC section 9): a lapsed registration no bundle named counts as failures of its
agent's entries, the board changes when its deadline passes, a maintainer may accept a team's withdrawal, and the
entry page and API list the team's registrations of that agent and version."""

from datetime import timedelta

import pytest
from django.utils import timezone

from competitions.demo.catalog import split_ids
from competitions.demo.runs import default_manifest, pack_answers, write_run_bundle, write_run_group
from grading.models import Flag, Registration, Submission, TierAggregate, Withdrawal
from grading.services.registrations import registration_create, registrations_lapse
from grading.services.submissions import SubmissionRefused
from leaderboard import services
from leaderboard.models import BoardRow, Entry
from portal.accounts.services import maintainer_grant
from tests.client import test_verify as client_cli
from tests.conftest import api_client_for, persona
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


def _register(user, seeds: int, *, version: str = "1.0") -> Registration:
    return registration_create(
        team=user.teams.get(), user=user, agent_name="demo-agent", agent_version=version, split="low", seeds=seeds
    )


def _lapse(registration: Registration) -> None:
    Registration.objects.filter(pk=registration.pk).update(deadline=timezone.now() - timedelta(seconds=1))


def _bundle(tmp_path, lite_packs, *, registration: Registration | None = None, seeds=(0, 1, 2)):
    group = write_run_group(
        out_dir=tmp_path / "runs",
        seeds=seeds,
        quality=0.9,
        answers=pack_answers(lite_packs),
        nonce=registration.nonce if registration else "",
    )
    manifest = default_manifest(split="low", seeds=len(seeds))
    if registration is not None:
        manifest["registration"] = registration.pk
    return write_run_bundle(run_group=group, out_path=tmp_path / "bundle.tar.gz", manifest=manifest)


def _low(submission) -> dict:
    return {agg.kind: agg.data for agg in TierAggregate.objects.filter(submission=submission, tier="low")}


def _entry(submission) -> Entry:
    services.board_refresh(submission_ids=[submission.pk])
    return Entry.objects.get(submission=submission)


def test_ten_registered_best_three_uploaded_scores_over_ten_with_the_seven_shown(
    upload, alice, lite_packs, tmp_path, client
):
    """The issue's "done when": register 10 seeds, upload the best 3; the entry is scored over 10, and its page
    and API show the 7 unreported seeds as failures."""
    registration = _register(alice, 10)
    submission = upload(_bundle(tmp_path, lite_packs, registration=registration))
    assert submission.status == Submission.Status.PUBLISHED, submission.status_reason
    assert _low(submission)["complete"]["seeds"] == 10
    entry = _entry(submission)
    assert BoardRow.objects.get(entry=entry, tier="low", excluding_leaky=False).seeds == 10
    runs = 7 * len(split_ids("low"))
    page = client.get(f"/leaderboard/entries/{entry.pk}/").content.decode()
    assert (
        f"10 seeds registered, 3 reported (registration {registration.pk}, named by this entry); the 7 seed(s) "
        f"not reported ({runs} run(s)) count as failures." in page
    )
    listed = client.get(f"/api/v1/entries/{entry.pk}/").json()["registrations"]
    assert listed["imported"] is False
    [row] = listed["rows"]
    assert (row["id"], row["state"], row["seeds_registered"], row["seeds_reported"]) == (
        registration.pk,
        "this_entry",
        10,
        3,
    )
    assert row["runs_counted_as_failures"] == runs


def test_an_unnamed_lapsed_registration_counts_as_failures_until_a_withdrawal_is_accepted(
    upload, alice, bob, lite_packs, tmp_path, client, django_capture_on_commit_callbacks
):
    plain = upload(_bundle(tmp_path / "plain", lite_packs))
    assert plain.status == Submission.Status.PUBLISHED, plain.status_reason
    before = _low(plain)["complete"]
    assert before["seeds"] == 3 and plain.unnamed_registrations == []
    unnamed = _register(alice, 2)
    _register(alice, 4, version="2.0")  # another version: not this entry's
    _register(bob, 5)  # another team's: not this entry's
    # Before its deadline it counts for nothing, and is not public.
    assert registrations_lapse() == 0
    assert client.get(f"/api/v1/entries/{_entry(plain).pk}/").json()["registrations"]["rows"] == []

    # Its deadline passes: the watchdog re-checks the entry, once.
    _lapse(unnamed)
    with django_capture_on_commit_callbacks(execute=True):
        assert registrations_lapse() == 1
    assert registrations_lapse() == 0
    plain.refresh_from_db()
    assert plain.unnamed_registrations == [{"id": unnamed.pk, "competitions": unnamed.competitions, "seeds": 2}]
    assert Registration.objects.get(pk=unnamed.pk).lapse_checked_at is not None
    after = _low(plain)["complete"]
    assert after["seeds"] == 5
    assert after["any_medal"]["mean"] == pytest.approx(before["any_medal"]["mean"] * 3 / 5)
    flag = Flag.objects.get(submission=plain, code="registration", key="unnamed_registrations")
    assert flag.severity == "warning"
    assert flag.message.startswith(f"2 seeds registered in registration {unnamed.pk} (")
    assert "never reported: counted as failures" in flag.message
    assert plain.status == Submission.Status.PUBLISHED
    entry = _entry(plain)
    assert BoardRow.objects.get(entry=entry, tier="low", excluding_leaky=False).seeds == 5
    page = client.get(f"/leaderboard/entries/{entry.pk}/").content.decode()
    runs = 2 * len(split_ids("low"))
    assert f"its {runs} registered run(s) count as failures" in page
    served = client.get(f"/api/v1/entries/{entry.pk}/").json()
    assert [(r["id"], r["state"]) for r in served["registrations"]["rows"]] == [(unnamed.pk, "counted")]
    assert served["tiers"]["low"]["all"]["complete"]["seeds"] == 5

    # The team asks to withdraw it; another team cannot, and a reason is required.
    api, bob_api = api_client_for(alice), api_client_for(bob)
    url = f"/api/v1/registrations/{unnamed.pk}/withdrawal/"
    assert bob_api.post(url, {"reason": "not ours"}, format="json").status_code == 404
    refused = api.post(url, {"reason": "  "}, format="json")
    assert refused.status_code == 400 and refused.json()["error"]["details"]["field"] == "reason"
    assert not Withdrawal.objects.exists()
    asked = api.post(url, {"reason": "the cluster died before any seed ran"}, format="json")
    assert asked.status_code == 201, asked.content
    withdrawal = Withdrawal.objects.get(pk=asked.json()["id"])
    assert asked.json()["status"] == "pending"
    assert api.post(url, {"reason": "again"}, format="json").json()["error"]["code"] == "withdrawal_exists"
    assert api.get(f"/api/v1/registrations/{unnamed.pk}/").json()["withdrawal"]["status"] == "pending"
    # Pending, the reason is not public yet.
    assert "the cluster died" not in client.get(f"/leaderboard/entries/{entry.pk}/").content.decode()

    # Only maintainers see the review page; a maintainer of the team never decides it.
    decide = f"/review/withdrawals/{withdrawal.pk}/decision/"
    form = {f"withdrawal-{withdrawal.pk}-decision": "accept", f"withdrawal-{withdrawal.pk}-reason": "fair"}
    client.force_login(alice)
    assert client.get("/review/withdrawals/").status_code == 403
    assert client.post(decide, form).status_code == 403
    maintainer_grant(user=alice)
    page = client.get("/review/withdrawals/").content.decode()
    assert "Your team&#x27;s: another maintainer decides." in page or "another maintainer decides" in page
    assert client.post(decide, form).status_code == 403
    withdrawal.refresh_from_db()
    assert withdrawal.status == Withdrawal.Status.PENDING
    # Another maintainer: a decision without a reason decides nothing.
    client.force_login(persona("maya", maintainer=True))
    page = client.get("/review/withdrawals/").content.decode()
    assert f'id="withdrawal-{withdrawal.pk}"' in page and "the cluster died before any seed ran" in page
    assert "<script" not in page and " onclick=" not in page
    client.post(decide, {f"withdrawal-{withdrawal.pk}-decision": "accept"})
    withdrawal.refresh_from_db()
    assert withdrawal.status == Withdrawal.Status.PENDING
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(decide, form).status_code == 302
    withdrawal.refresh_from_db()
    assert withdrawal.status == Withdrawal.Status.ACCEPTED and withdrawal.decision_reason == "fair"
    assert client.post(decide, form).status_code == 302  # decided already: a message, nothing changes
    withdrawal.refresh_from_db()
    assert withdrawal.status == Withdrawal.Status.ACCEPTED

    # Accepted: its seeds no longer count, the flag is gone, and the reason is public on the entry.
    plain.refresh_from_db()
    assert plain.unnamed_registrations == []
    assert _low(plain)["complete"] == before
    assert not Flag.objects.filter(submission=plain, code="registration", key="unnamed_registrations").exists()
    entry = _entry(plain)
    assert BoardRow.objects.get(entry=entry, tier="low", excluding_leaky=False).seeds == 3
    client.logout()
    page = client.get(f"/leaderboard/entries/{entry.pk}/").content.decode()
    assert "withdrawn, a maintainer accepted the team&#x27;s reason" in page
    assert "The team's reason: the cluster died before any seed ran" in page
    row = client.get(f"/api/v1/entries/{entry.pk}/").json()["registrations"]["rows"][0]
    assert row["state"] == "withdrawn" and row["withdrawal_reason"] == "the cluster died before any seed ran"

    # An upload naming the withdrawn registration is refused, and nothing of it is kept.
    count = Submission.objects.count()
    with pytest.raises(SubmissionRefused) as upload_refused:
        upload(_bundle(tmp_path / "again", lite_packs, registration=unnamed))
    assert upload_refused.value.code == "registration_withdrawn"
    assert f"registration {unnamed.pk} was withdrawn" in upload_refused.value.message
    assert Submission.objects.count() == count


def test_a_registration_a_bundle_names_cannot_be_withdrawn(upload, alice, lite_packs, tmp_path):
    registration = _register(alice, 3)
    upload(_bundle(tmp_path, lite_packs, registration=registration))
    answer = api_client_for(alice).post(
        f"/api/v1/registrations/{registration.pk}/withdrawal/", {"reason": "changed our mind"}, format="json"
    )
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "registration_named"
    assert not Withdrawal.objects.exists()


def test_a_refused_withdrawal_keeps_counting(upload, alice, maintainer, lite_packs, tmp_path):
    from grading.services.registrations import withdrawal_decide

    plain = upload(_bundle(tmp_path, lite_packs))
    unnamed = _register(alice, 1)
    _lapse(unnamed)
    registrations_lapse()
    withdrawal = Withdrawal.objects.create(registration=unnamed, reason="oops", requested_by=alice)
    withdrawal_decide(withdrawal_id=withdrawal.pk, accept=False, reason="no evidence", actor=maintainer)
    plain.refresh_from_db()
    assert [r["id"] for r in plain.unnamed_registrations] == [unnamed.pk]
    assert _low(plain)["complete"]["seeds"] == 4


def test_an_upload_after_the_lapse_counts_it_at_its_check(upload, alice, lite_packs, tmp_path):
    """An entry checked after a registration lapsed counts it from the start (no watchdog needed)."""
    unnamed = _register(alice, 2)
    _lapse(unnamed)
    submission = upload(_bundle(tmp_path, lite_packs))
    assert [r["id"] for r in submission.unnamed_registrations] == [unnamed.pk]
    assert _low(submission)["complete"]["seeds"] == 5
    assert Flag.objects.filter(submission=submission, code="registration", key="unnamed_registrations").exists()


def test_an_imported_entry_says_it_has_no_registration(db):
    from leaderboard.selectors.entry import entry_registrations

    imported = Entry(submission=Submission(origin=Submission.Origin.IMPORT))
    found = entry_registrations(imported)
    assert found.imported and found.rows == []
    assert found.sentence == "No registration: imported from MLE-bench's table."


@pytest.fixture
def folder(tmp_path):
    return client_cli.clean.__wrapped__(tmp_path)


def test_an_entry_with_an_unnamed_registration_verifies_with_the_client(
    upload, alice, lite_packs, tmp_path, live_server, folder
):
    """mleportal verify counts the unnamed registration's failures as the portal does."""
    submission = upload(_bundle(tmp_path / "plain", lite_packs))
    unnamed = _register(alice, 2)
    _lapse(unnamed)
    registrations_lapse()
    entry = _entry(submission)
    done = client_cli.verify(folder, f"{live_server.url}/leaderboard/entries/{entry.pk}/")
    assert done.returncode == 0, done.stdout + done.stderr
    found = client_cli.rows(done.stdout)
    assert {result for result, _ in found.values()} == {"ok"}
    assert "(5 seeds," in found["low, all competitions: figures"][1]


def test_the_withdrawals_page_is_for_maintainers_and_unknown_ids_are_404(client, maintainer, alice):
    assert client.get("/review/withdrawals/").status_code == 403
    assert client.post("/review/withdrawals/1/decision/", {}).status_code == 403
    client.force_login(maintainer)
    assert "No withdrawal is waiting." in client.get("/review/withdrawals/").content.decode()
    form = {"withdrawal-999-decision": "accept", "withdrawal-999-reason": "fine"}
    assert client.post("/review/withdrawals/999/decision/", form).status_code == 404
    answer = api_client_for(alice).post("/api/v1/registrations/999/withdrawal/", {"reason": "x"}, format="json")
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "not_found"


def test_a_hosted_runs_registration_cannot_be_withdrawn(registry_with_packs, alice_api):
    from tests.runners.builders import hosted_body

    asked = alice_api.post("/api/v1/hosted-runs/", hosted_body(seeds=2), format="json")
    assert asked.status_code == 202, asked.content
    registration = Registration.objects.get(hosted_run__pk=asked.json()["id"])
    answer = alice_api.post(f"/api/v1/registrations/{registration.pk}/withdrawal/", {"reason": "x"}, format="json")
    assert answer.status_code == 409 and answer.json()["error"]["code"] == "registration_hosted"
    assert not Withdrawal.objects.exists()
