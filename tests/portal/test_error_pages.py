"""Error pages say what happened and nothing more, with DEBUG on (scripts/run) as with it off: no URL pattern
listing, no traceback or settings; JSON in the error shape under /api/; a 403 page says why."""

import pytest
from django.test import Client

from portal.accounts.models import ApiToken
from portal.accounts.services import token_create
from tests.portal.failing_urls import SECRET

# Words of Django's DEBUG pages: the URL pattern listing of its 404, the traceback and settings of its 500.
DEBUG_PAGE_WORDS = ("URLconf", "urlpatterns", "Traceback", "SECRET_KEY", "DATABASES", "Request information")


@pytest.fixture(params=[True, False], ids=["debug-on", "debug-off"])
def debug(request, settings):
    settings.DEBUG = request.param
    return request.param


def _page(response, status: int) -> str:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"].startswith("text/html")
    text = response.content.decode()
    for word in DEBUG_PAGE_WORDS:
        assert word not in text
    return text


def _json_error(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    return body["error"]


@pytest.mark.parametrize("path", ["/no-such-page/", "/accounts", "/competitions/x/y/z/"])
def test_an_unknown_page_gets_the_portals_404_without_the_url_patterns(db, debug, path):
    text = _page(Client().get(path), 404)
    assert "Not found" in text and "There is nothing at this address." in text
    assert "api/v1/" not in text.replace('href="/api/docs/"', "")


def test_a_404_raised_by_a_view_shows_its_message(db, debug):
    text = _page(Client().get("/competitions/no-such-competition/"), 404)
    assert "No competition &#x27;no-such-competition&#x27; in the current benchmark version." in text


@pytest.mark.parametrize("path", ["/api/v1/nope/", "/api/whatever", "/api/v1/nope/deeper/?x=1", "/api/"])
def test_an_unknown_api_path_answers_404_in_the_error_shape(db, debug, path):
    error = _json_error(Client().get(path), 404, "not_found")
    assert error["message"] == f"No API endpoint at {path.split('?')[0]}; see /api/docs/."


@pytest.mark.urls("tests.portal.failing_urls")
def test_a_failing_page_shows_no_traceback_and_the_error_is_logged(db, debug, caplog):
    text = _page(Client(raise_request_exception=False).get("/failing/"), 500)
    assert "Server error" in text and SECRET not in text
    assert any(
        SECRET in record.getMessage() or (record.exc_info and SECRET in str(record.exc_info[1]))
        for record in caplog.records
    )


@pytest.mark.urls("tests.portal.failing_urls")
def test_a_failing_api_view_answers_500_in_the_error_shape(db, debug):
    error = _json_error(Client(raise_request_exception=False).get("/api/v1/failing/"), 500, "server_error")
    assert SECRET not in error["message"]


def test_a_request_for_another_host_name_gets_a_plain_400(db, debug):
    response = Client().get("/competitions/", HTTP_HOST="attacker.example")
    text = _page(response, 400)
    assert "Bad request" in text and "DisallowedHost" not in text and "ALLOWED_HOSTS" not in text
    _json_error(Client().get("/api/v1/competitions/", HTTP_HOST="attacker.example"), 400, "bad_request")


@pytest.mark.parametrize(
    ("method", "path", "message"),
    [
        ("get", "/review/", "The review queue is for maintainers."),
        ("post", "/submissions/1/regrade/", "Only maintainers can re-grade."),
        ("post", "/review/regrade-all/", "Only maintainers can re-grade."),
    ],
)
def test_a_403_page_says_why(alice, debug, method, path, message):
    client = Client()
    client.force_login(alice)
    text = _page(getattr(client, method)(path), 403)
    assert "Not allowed" in text and message in text


def test_a_403_for_someone_elses_token_says_why(alice, bob, debug):
    token, _ = token_create(user=alice, team=alice.teams.first(), name="ci")
    client = Client()
    client.force_login(bob)
    text = _page(client.post(f"/tokens/{token.pk}/revoke/"), 403)
    assert "No such token among yours." in text
    assert ApiToken.objects.get(pk=token.pk).revoked_at is None


def test_a_form_without_its_csrf_token_gets_a_page_saying_what_happened(alice, debug):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    text = _page(client.post("/team/", {"name": "Sneaky"}), 403)
    assert "Form could not be accepted" in text
    assert "security token (CSRF) is missing or stale. Reload the page and send the form again" in text
