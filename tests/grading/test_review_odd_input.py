"""Odd input to the review queue and the other id-like parameters is a 400 (or a 404 for an id in a path)
that names the field, never a 500: a 20-digit number overflows PostgreSQL's bigint, and str.isdigit() is
true for '²', which int() refuses."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

HUGE = "9" * 20


@pytest.mark.parametrize("team", [HUGE, "²", "١٢", "No such team", "12abc", "0"])
def test_a_team_filter_naming_no_team_is_a_400_on_the_api_and_the_page(entry, maintainer_api, client, maintainer, team):
    response = maintainer_api.get("/api/v1/review/flags/", {"team": team})
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid" and error["details"]["field"] == "team"
    assert error["message"].startswith("team: no team has the id or the name")
    client.force_login(maintainer)
    page = client.get("/review/", {"team": team})
    assert page.status_code == 400 and "No team has the id or the name" in page.content.decode()


def test_a_team_filter_by_id_or_name_still_works(entry, maintainer_api):
    for team in (str(entry.team_id), "alice lab"):
        body = maintainer_api.get("/api/v1/review/flags/", {"team": team}).json()
        assert [item["submission_id"] for item in body] == [entry.pk]


@pytest.mark.parametrize("days", [HUGE, "²", "-1", "soon"])
def test_an_odd_age_filter_is_a_400_on_the_api_and_the_page(entry, maintainer_api, client, maintainer, days):
    response = maintainer_api.get("/api/v1/review/flags/", {"older_than_days": days})
    assert response.status_code == 400 and response.json()["error"]["details"]["field"] == "older_than_days"
    client.force_login(maintainer)
    assert client.get("/review/", {"older_than_days": days}).status_code == 400


def test_a_20_digit_id_in_a_review_path_is_a_404(entry, maintainer_api, client, maintainer):
    body = {"decision": "accept", "reason": "x"}
    for path in (f"/api/v1/review/flags/{HUGE}/decision/", f"/api/v1/review/submissions/{HUGE}/decision/"):
        response = maintainer_api.post(path, body, format="json")
        assert response.status_code == 404 and response.json()["error"]["code"] == "not_found", path
    assert maintainer_api.post(f"/api/v1/submissions/{HUGE}/regrade/").status_code == 404
    client.force_login(maintainer)
    assert client.get(f"/review/submissions/{HUGE}/").status_code == 404
    assert client.post(f"/review/flags/{HUGE}/decision/", {}).status_code == 404
    assert client.post(f"/review/submissions/{HUGE}/decision/", {}).status_code == 302  # a message, nothing done


@pytest.mark.parametrize("value", [HUGE, "²", "0"])
def test_an_odd_team_or_replaces_on_an_upload_is_a_400_naming_the_field(entry, alice, value):
    api = APIClient()
    api.force_authenticate(alice)
    for field in ("team", "replaces"):
        bundle = SimpleUploadedFile("b.tar.gz", b"not read: the query is refused first")
        response = api.post(f"/api/v1/submissions/?{field}={value}", {"bundle": bundle}, format="multipart")
        assert response.status_code == 400, (field, response.content)
        assert response.json()["error"]["details"] == {"field": field}
