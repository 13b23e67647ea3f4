import re

import pytest

from portal.accounts.keys import hash_key
from portal.accounts.models import ApiToken


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client


def _create_token(client, user, name="ci") -> str:
    page = client.post("/tokens/", {"name": name, "team": user.teams.get().pk}).content.decode()
    match = re.search(r'id="new-token-key">([^<]+)<', page)
    assert match, page
    return match.group(1)


def test_a_new_token_is_shown_once_and_only_its_hash_is_stored(alice_client, alice):
    key = _create_token(alice_client, alice)
    token = ApiToken.objects.get()
    assert token.key_hash == hash_key(key) and key not in token.key_hash
    assert token.prefix == key[:12]
    listing = alice_client.get("/tokens/").content.decode()
    assert key not in listing and token.prefix in listing


def test_revoking_a_token_stops_it_working(alice_client, alice):
    key = _create_token(alice_client, alice)
    token = ApiToken.objects.get()
    assert alice_client.post(f"/tokens/{token.pk}/revoke/").status_code == 302
    token.refresh_from_db()
    assert token.revoked_at is not None

    from rest_framework.test import APIClient

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response = api.get("/api/v1/me/")
    assert response.status_code == 401
    assert "was revoked" in response.json()["error"]["message"]


def test_bob_cannot_see_or_revoke_alices_tokens(client, alice, bob):
    client.force_login(alice)
    _create_token(client, alice, name="alice-secret-token")
    token = ApiToken.objects.get()

    client.force_login(bob)
    assert "alice-secret-token" not in client.get("/tokens/").content.decode()
    response = client.post(f"/tokens/{token.pk}/revoke/")
    assert response.status_code == 403
    token.refresh_from_db()
    assert token.revoked_at is None


def test_bob_cannot_create_a_token_for_alices_team(client, alice, bob):
    client.force_login(bob)
    response = client.post("/tokens/", {"name": "x", "team": alice.teams.get().pk})
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()
    assert ApiToken.objects.count() == 0


def test_a_token_needs_a_name(alice_client, alice):
    response = alice_client.post("/tokens/", {"name": "   ", "team": alice.teams.get().pk})
    assert "This field is required." in response.content.decode()
    assert ApiToken.objects.count() == 0


def test_pages_need_a_login(client, db):
    for path in ("/team/", "/tokens/", "/submit/"):
        response = client.get(path)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), path
    # The review queue answers anonymous visitors as it answers team members: 403, nothing shown.
    assert client.get("/review/").status_code == 403


def test_only_maintainers_see_the_review_queue(client, alice, maintainer):
    client.force_login(alice)
    assert client.get("/review/").status_code == 403
    assert 'href="/review/"' not in client.get("/leaderboard/").content.decode()
    client.force_login(maintainer)
    assert client.get("/review/").status_code == 200
    assert 'href="/review/"' in client.get("/leaderboard/").content.decode()
