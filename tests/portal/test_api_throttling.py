"""API throttles: per account with a token or session, per client address without; a tighter budget for
uploads; 429 in the error shape with Retry-After. Counters in Redis, rates lowered through settings."""

from typing import Any

from rest_framework.test import APIClient

from tests.conftest import api_client_for


def _assert_throttled(response, *, window: int) -> dict:
    assert response.status_code == 429, response.content
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    error = body["error"]
    assert error["code"] == "throttled"
    assert error["message"].startswith("Request was throttled. Expected available in")
    wait = error["details"]["retry_after_seconds"]
    assert isinstance(wait, int) and 1 <= wait <= window
    assert response["Retry-After"] == str(wait)
    return error


def _anonymous(remote: str = "192.0.2.10", forwarded: str | None = None):
    headers: dict[str, Any] = {"REMOTE_ADDR": remote}  # WSGI environ, passed as **extra
    if forwarded:
        headers["HTTP_X_FORWARDED_FOR"] = forwarded
    return APIClient().get("/api/v1/competitions/", **headers)


def test_anonymous_requests_are_throttled_per_address(db, settings):
    settings.API_RATE_ANONYMOUS = "2/m"
    assert _anonymous().status_code == 200
    assert _anonymous().status_code == 200
    _assert_throttled(_anonymous(), window=60)
    assert _anonymous(remote="192.0.2.11").status_code == 200


def test_behind_a_trusted_proxy_each_client_address_has_its_own_budget(db, settings):
    settings.API_RATE_ANONYMOUS = "1/m"
    settings.TRUSTED_PROXY_COUNT = 1
    assert _anonymous(remote="10.0.0.1", forwarded="203.0.113.5").status_code == 200
    _assert_throttled(_anonymous(remote="10.0.0.1", forwarded="203.0.113.5"), window=60)
    # A client writing its own X-Forwarded-For entry before the proxy's still counts as itself.
    _assert_throttled(_anonymous(remote="10.0.0.1", forwarded="192.0.2.77, 203.0.113.5"), window=60)
    assert _anonymous(remote="10.0.0.1", forwarded="198.51.100.7").status_code == 200


def test_without_a_trusted_proxy_forwarded_for_buys_no_new_budget(db, settings):
    settings.API_RATE_ANONYMOUS = "1/m"
    assert _anonymous(forwarded="203.0.113.1").status_code == 200
    _assert_throttled(_anonymous(forwarded="203.0.113.2"), window=60)


def test_requests_with_a_token_are_throttled_per_account(alice_api, bob_api, alice, settings):
    settings.API_RATE_AUTHENTICATED = "3/m"
    for _ in range(3):
        assert alice_api.get("/api/v1/me/").status_code == 200
    _assert_throttled(alice_api.get("/api/v1/me/"), window=60)
    # Another token of the same account shares its budget; other accounts and anonymous visitors do not.
    _assert_throttled(api_client_for(alice).get("/api/v1/me/"), window=60)
    assert bob_api.get("/api/v1/me/").status_code == 200
    assert APIClient().get("/api/v1/competitions/").status_code == 200


def test_a_browser_session_counts_against_the_same_account(alice_api, alice, settings):
    settings.API_RATE_AUTHENTICATED = "2/m"
    alice_api.get("/api/v1/me/")
    session = APIClient()
    session.force_login(alice)
    assert session.get("/api/v1/me/").status_code == 200
    _assert_throttled(session.get("/api/v1/me/"), window=60)


def test_uploads_have_their_own_tighter_budget(alice_api, settings):
    settings.API_RATE_UPLOADS = "2/h"
    for _ in range(2):
        refused = alice_api.post("/api/v1/submissions/")
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "bundle_required"
    _assert_throttled(alice_api.post("/api/v1/submissions/"), window=3600)
    # Reading is not uploading.
    assert alice_api.get("/api/v1/submissions/").status_code == 200
