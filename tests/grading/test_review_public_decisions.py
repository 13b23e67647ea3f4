"""Every decision's reason is public (SPEC section 4), rejected entries' too, and nothing else of them: no
files, no flag messages or evidence (they quote the bundle), no manifest. Read as a visitor, not signed in."""

import pytest
from rest_framework.test import APIClient

from competitions.services import competitions_load
from grading.services.review import entry_decide, flag_decide
from tests.grading.builders import flagged_submission

SECRET_MESSAGE = "agent.log line 41 quotes the private leaderboard"


@pytest.fixture
def entries(db, alice, bob, maintainer):
    competitions_load()
    rejected = flagged_submission(
        alice.teams.get(),
        user=alice,
        flags=[
            {
                "code": "test_set_feedback",
                "severity": "blocking",
                "message": SECRET_MESSAGE,
                "evidence": {"hits": [{"file": "runs/g/x/logs/secret-name.log", "line": 3, "excerpt": ["tok-123"]}]},
            }
        ],
    )
    rejected.manifest = {"agent": {"name": "Stealth agent 9000"}, "benchmark": {"split": "low"}}
    rejected.save()
    flag_decide(
        flag_id=rejected.flags.get().pk,
        decision="reject",
        reason="The agent read the private answers.",
        actor=maintainer,
    )
    non_comparable = flagged_submission(bob.teams.get(), user=bob)
    entry_decide(
        submission_id=non_comparable.pk, decision="non_comparable", reason="Saw its test score.", actor=maintainer
    )
    return rejected, non_comparable


def test_a_visitor_sees_every_decision_and_reason_on_the_decisions_page(client, entries):
    rejected, non_comparable = entries
    page = client.get("/decisions/")
    assert page.status_code == 200
    text = page.content.decode()
    for words in (
        "The agent read the private answers.",
        "Alice Lab",
        "rejected",
        "test_set_feedback",
        "Saw its test score.",
        "Bob Works",
        "non comparable",
        "the whole entry",
        "maya",
    ):
        assert words in text, words
    assert f'href="/submissions/{non_comparable.pk}/"' in text
    assert f'href="/submissions/{rejected.pk}/"' not in text
    for private in (SECRET_MESSAGE, "secret-name.log", "tok-123", "Stealth agent 9000", "leaderboard says"):
        assert private not in text, private


def test_a_visitor_reads_the_decisions_through_the_api_without_anything_private(entries):
    rejected, non_comparable = entries
    response = APIClient().get("/api/v1/decisions/")
    assert response.status_code == 200
    body = response.json()
    assert (body["count"], body["page"], body["pages"]) == (2, 1, 1)
    by_submission = {item["submission_id"]: item for item in body["results"]}
    assert by_submission[rejected.pk] | {"created_at": None, "flag": None} == {
        "submission_id": rejected.pk,
        "team": "Alice Lab",
        "status": "rejected",
        "decision": "reject",
        "reason": "The agent read the private answers.",
        "flag": None,
        "decided_by": "maya",
        "created_at": None,
        "url": None,
    }
    assert by_submission[rejected.pk]["flag"] == {
        "id": rejected.flags.get().pk,
        "code": "test_set_feedback",
        "severity": "blocking",
    }
    assert by_submission[non_comparable.pk]["flag"] is None
    assert by_submission[non_comparable.pk]["url"].endswith(f"/api/v1/submissions/{non_comparable.pk}/")
    raw = response.content.decode()
    for private in (SECRET_MESSAGE, "secret-name.log", "tok-123", "Stealth agent 9000", "evidence", "manifest"):
        assert private not in raw, private


def test_the_rejected_entry_itself_stays_private_and_the_published_one_shows_its_reason(client, entries):
    rejected, non_comparable = entries
    for path in ("", "results/", "grading-report/"):
        assert APIClient().get(f"/api/v1/submissions/{rejected.pk}/{path}").status_code == 404
    assert client.get(f"/submissions/{rejected.pk}/").status_code == 404
    text = client.get(f"/submissions/{non_comparable.pk}/").content.decode()
    assert 'id="non-comparable"' in text and "Saw its test score." in text


@pytest.mark.parametrize("page", ["abc", "0", "-1", "99999999999999999999", "²", "1.5"])
def test_an_odd_page_is_a_400(client, entries, page):
    response = APIClient().get("/api/v1/decisions/", {"page": page})
    assert response.status_code == 400
    assert response.json()["error"]["details"] == {"field": "page"}
    html = client.get("/decisions/", {"page": page})
    assert html.status_code == 400 and "a page is a whole number" in html.content.decode()


def test_a_page_past_the_end_is_empty(client, entries):
    body = APIClient().get("/api/v1/decisions/", {"page": 7}).json()
    assert (body["count"], body["page"], body["results"]) == (2, 7, [])
    assert "No decisions on page 7" in client.get("/decisions/?page=7").content.decode()
