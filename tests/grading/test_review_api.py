"""The review API (SPEC section 6): maintainers only, the flag shape, decisions in the JSON error shape."""

import pytest
from rest_framework.test import APIClient

from grading.models import Submission
from tests.grading.builders import flagged_submission


def test_team_members_outsiders_and_anonymous_visitors_get_403_and_see_nothing(entry, alice_api, bob_api):
    flag = entry.flags.get()
    for client in (alice_api, bob_api, APIClient()):
        for response in (
            client.get("/api/v1/review/flags/"),
            client.post(
                f"/api/v1/review/flags/{flag.pk}/decision/", {"decision": "accept", "reason": "x"}, format="json"
            ),
            client.post(
                f"/api/v1/review/submissions/{entry.pk}/decision/", {"decision": "accept", "reason": "x"}, format="json"
            ),
        ):
            assert response.status_code == 403
            assert response.json() == {
                "error": {"code": "permission_denied", "message": "Only maintainers can do this.", "details": {}}
            }
    flag.refresh_from_db()
    assert flag.decision == "" and not entry.review_events.exists()


def test_the_queue_lists_open_flags_in_the_spec_shape(entry, maintainer_api, alice):
    body = maintainer_api.get("/api/v1/review/flags/").json()
    flag = entry.flags.get()
    assert len(body) == 1
    item = body[0]
    assert {"id", "code", "severity", "tiers", "message", "evidence", "resolution"} <= item.keys()
    assert (item["id"], item["code"], item["severity"], item["submission_id"], item["team"], item["decision"]) == (
        flag.pk,
        "test_set_feedback",
        "blocking",
        entry.pk,
        "Alice Lab",
        "",
    )
    assert item["evidence"]["hits"][0]["line"] == 41 and item["created_at"]


def test_the_queue_filters_by_code_severity_team_and_age(entry, maintainer_api, bob):
    other = flagged_submission(bob.teams.get(), flags=[{"code": "score_mismatch", "severity": "warning"}])
    ids = lambda query: [f["submission_id"] for f in maintainer_api.get(f"/api/v1/review/flags/{query}").json()]  # noqa: E731
    assert ids("") == [entry.pk, other.pk]
    assert ids("?code=score_mismatch") == [other.pk]
    assert ids("?severity=blocking") == [entry.pk]
    assert ids("?team=bob works") == [other.pk] and ids(f"?team={entry.team_id}") == [entry.pk]
    assert ids("?older_than_days=1") == []
    entry.flags.update(created_at=entry.created_at.replace(year=entry.created_at.year - 1))
    assert ids("?older_than_days=30") == [entry.pk]
    error = maintainer_api.get("/api/v1/review/flags/?older_than_days=soon").json()["error"]
    assert error["code"] == "invalid" and "older_than_days" in error["message"]


def test_a_flag_decision_answers_the_decided_flag(entry, maintainer_api, maintainer):
    flag = entry.flags.get()
    response = maintainer_api.post(
        f"/api/v1/review/flags/{flag.pk}/decision/",
        {"decision": "non_comparable", "reason": "The agent saw its test score."},
        format="json",
    )
    assert response.status_code == 200
    body = response.json()
    assert (body["id"], body["decision"], body["resolution"], body["decided_by"]) == (
        flag.pk,
        "non_comparable",
        "The agent saw its test score.",
        "maya",
    )
    assert maintainer_api.get("/api/v1/review/flags/").json() == []
    public = APIClient().get(f"/api/v1/submissions/{entry.pk}/").json()
    assert public["status"] == "published" and public["comparable"] is False
    assert public["review_reason"] == "The agent saw its test score."
    assert public["review_trail"][0] | {"created_at": None} == {
        "kind": "decision",
        "decision": "non_comparable",
        "reason": "The agent saw its test score.",
        "flag_id": flag.pk,
        "actor": "maya",
        "created_at": None,
    }


def test_an_entry_decision_answers_the_submission(entry, maintainer_api):
    response = maintainer_api.post(
        f"/api/v1/review/submissions/{entry.pk}/decision/",
        {"decision": "reject", "reason": "Answers read from the private folder."},
        format="json",
    )
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == entry.pk and body["status"] == "rejected" and body["review_decision"] == "reject"
    assert body["flags"][0]["decision"] == "reject"


def test_decision_errors_come_in_the_error_shape(entry, maintainer_api):
    flag = entry.flags.get()
    no_reason = maintainer_api.post(
        f"/api/v1/review/flags/{flag.pk}/decision/", {"decision": "accept", "reason": " "}, format="json"
    )
    assert no_reason.status_code == 400 and no_reason.json()["error"]["code"] == "reason_required"
    bad = maintainer_api.post(
        f"/api/v1/review/flags/{flag.pk}/decision/", {"decision": "approve", "reason": "x"}, format="json"
    )
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid"
    missing = maintainer_api.post(
        "/api/v1/review/flags/999999/decision/", {"decision": "accept", "reason": "x"}, format="json"
    )
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    Submission.objects.filter(pk=entry.pk).update(status="grading")
    busy = maintainer_api.post(
        f"/api/v1/review/submissions/{entry.pk}/decision/", {"decision": "accept", "reason": "x"}, format="json"
    )
    assert busy.status_code == 409 and busy.json()["error"]["code"] == "not_reviewable"


def test_the_review_endpoints_are_in_the_openapi_schema(db):
    schema = APIClient().get("/api/schema/", HTTP_ACCEPT="application/json").content.decode()
    for path in (
        "/api/v1/review/flags/",
        "/api/v1/review/flags/{flag_id}/decision/",
        "/api/v1/review/submissions/{submission_id}/decision/",
    ):
        assert path in schema


@pytest.mark.parametrize("team", ["\u00b2", "9" * 400])
def test_an_odd_team_in_the_queue_filter_is_a_400_that_names_the_field(entry, maintainer_api, team):
    response = maintainer_api.get("/api/v1/review/flags/", {"team": team})
    assert response.status_code == 400 and response.json()["error"]["details"]["field"] == "team"
