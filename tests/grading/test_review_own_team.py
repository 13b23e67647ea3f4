"""A maintainer never decides on an entry of a team they belong to (SPEC section 4): every decision path, the
API and the pages, answers 403 own_team and changes nothing; the queue says who decides. Tried as a maintainer
who wants their own team's flagged entry on the comparable board."""

import pytest
from rest_framework.test import APIClient

from competitions.services import competitions_load
from grading.models import Flag, ReviewEvent, Submission
from portal.accounts.models import Membership
from tests.conftest import persona
from tests.grading.builders import flagged_submission


@pytest.fixture
def entry(db, alice):
    competitions_load()
    return flagged_submission(alice.teams.get(), user=alice)


@pytest.fixture
def insider(entry, alice):
    """Mallory maintains the portal and is a member of Alice Lab."""
    mallory = persona("mallory", maintainer=True)
    Membership.objects.create(team=alice.teams.get(), user=mallory)
    return mallory


def api_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def assert_untouched(entry: Submission) -> None:
    entry.refresh_from_db()
    assert entry.status == Submission.Status.IN_REVIEW and entry.comparable is False
    assert entry.review_decision == "" and not ReviewEvent.objects.exists()
    assert not Flag.objects.exclude(decision="").exists()


def test_every_api_decision_path_refuses_the_maintainers_own_team(entry, insider):
    api = api_for(insider)
    flag = entry.flags.get()
    for decision in ("accept", "non_comparable", "reject", "request_changes"):
        body = {"decision": decision, "reason": "Looks fine to me."}
        for response in (
            api.post(f"/api/v1/review/flags/{flag.pk}/decision/", body, format="json"),
            api.post(f"/api/v1/review/submissions/{entry.pk}/decision/", body, format="json"),
        ):
            assert response.status_code == 403, response.content
            error = response.json()["error"]
            assert error["code"] == "own_team"
            assert "Alice Lab" in error["message"] and "Another maintainer" in error["message"]
    regrade = api.post(f"/api/v1/submissions/{entry.pk}/regrade/")
    assert regrade.status_code == 403 and regrade.json()["error"]["code"] == "own_team"
    assert_untouched(entry)


def test_every_page_decision_path_refuses_the_maintainers_own_team(client, entry, insider):
    flag = entry.flags.get()
    client.force_login(insider)
    for response in (
        client.post(
            f"/review/flags/{flag.pk}/decision/",
            {f"flag-{flag.pk}-decision": "accept", f"flag-{flag.pk}-reason": "Looks fine to me."},
        ),
        client.post(
            f"/review/submissions/{entry.pk}/decision/", {"entry-decision": "accept", "entry-reason": "Looks fine."}
        ),
        client.post(f"/submissions/{entry.pk}/regrade/"),
    ):
        assert response.status_code == 403
        assert "a maintainer never decides on their own team" in response.content.decode()
    assert_untouched(entry)


def test_the_author_of_an_entry_is_refused_after_leaving_the_team(entry, alice):
    """Memberships leave no row when they end; the entry's author is recorded, so they stay refused."""
    alice_team = alice.teams.get()
    flagged_by_author = flagged_submission(alice_team, user=persona("mallory", maintainer=True))
    mallory = flagged_by_author.created_by
    assert not Membership.objects.filter(user=mallory).exists()
    response = api_for(mallory).post(
        f"/api/v1/review/submissions/{flagged_by_author.pk}/decision/",
        {"decision": "accept", "reason": "mine"},
        format="json",
    )
    assert response.status_code == 403 and response.json()["error"]["code"] == "own_team"
    assert not ReviewEvent.objects.exists()


def test_the_queue_marks_the_own_teams_entries_and_offers_no_decision(client, entry, insider, bob, maintainer):
    other = flagged_submission(bob.teams.get(), flags=[{"code": "score_mismatch", "severity": "warning"}])
    listed = {item["submission_id"]: item["own_team"] for item in api_for(insider).get("/api/v1/review/flags/").json()}
    assert listed == {entry.pk: True, other.pk: False}
    assert {item["own_team"] for item in api_for(maintainer).get("/api/v1/review/flags/").json()} == {False}

    client.force_login(insider)
    queue = client.get("/review/").content.decode()
    mine = queue[queue.index(f'id="entry-{entry.pk}"') : queue.index(f'id="entry-{other.pk}"')]
    assert "Your team's: another maintainer decides." in mine
    assert "another maintainer decides" not in queue[queue.index(f'id="entry-{other.pk}"') :]
    page = client.get(f"/review/submissions/{entry.pk}/").content.decode()
    assert 'id="own-team"' in page and "decision-form" not in page and "<button" not in page.split("<main")[-1]
    assert "decision-form" in client.get(f"/review/submissions/{other.pk}/").content.decode()
    public = client.get(f"/submissions/{entry.pk}/").content.decode()
    assert 'id="own-team"' in public and 'id="regrade"' not in public


def test_another_maintainer_decides_the_same_entry(entry, insider, maintainer):
    flag = entry.flags.get()
    response = api_for(maintainer).post(
        f"/api/v1/review/flags/{flag.pk}/decision/",
        {"decision": "accept", "reason": "The excerpt is the agent's own validation score."},
        format="json",
    )
    assert response.status_code == 200 and response.json()["own_team"] is False
    assert ReviewEvent.objects.get(kind=ReviewEvent.Kind.DECISION).actor == maintainer
