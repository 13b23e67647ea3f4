import pytest
from django.core.management import call_command
from rest_framework.test import APIClient


def _assert_error_shape(response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
    if code:
        assert body["error"]["code"] == code
    return body["error"]


def test_a_token_identifies_the_user_and_its_team(alice_api):
    body = alice_api.get("/api/v1/me/").json()
    assert body == {
        "username": "alice",
        "email": "alice@example.org",
        "team": "Alice Lab",
        "teams": ["Alice Lab"],
        "maintainer": False,
    }


def test_without_credentials_the_api_answers_401_in_the_error_shape(db):
    error = _assert_error_shape(APIClient().get("/api/v1/me/"), 401, "not_authenticated")
    assert "credentials were not provided" in error["message"]


@pytest.mark.parametrize("header", ["Token", "Token a b", "Token short", "Token mlep_" + "é" * 30])
def test_a_malformed_token_gets_a_clear_401(db, header):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header.encode("utf-8").decode("latin-1"))
    error = _assert_error_shape(client.get("/api/v1/me/"), 401, "invalid_api_key")
    assert error["message"].startswith("This API key is not valid: ")
    assert "copied whole" in error["message"] and "http://testserver/tokens/" in error["message"]
    assert error["details"] == {"reason": "malformed", "tokens_url": "http://testserver/tokens/"}
    assert "Malformed" not in error["message"]


def test_an_unknown_token_gets_a_clear_401(db):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token mlep_" + "x" * 40)
    error = _assert_error_shape(client.get("/api/v1/me/"), 401, "invalid_api_key")
    assert error["message"].startswith("This API key is not valid: this portal never made it")
    assert "copied whole" in error["message"] and "Make a new one at http://testserver/tokens/" in error["message"]
    assert error["details"]["reason"] == "unknown"


def test_a_revoked_token_gets_a_clear_401(alice):
    from portal.accounts.services import token_create, token_revoke

    token, key = token_create(user=alice, team=alice.teams.get(), name="ci")
    token_revoke(user=alice, token_id=token.pk)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    error = _assert_error_shape(client.get("/api/v1/me/"), 401, "invalid_api_key")
    assert error["message"].startswith("This API key is not valid: it was revoked on ")
    assert error["details"] == {"reason": "revoked", "tokens_url": "http://testserver/tokens/"}


def test_an_unknown_api_path_answers_json(db):
    error = _assert_error_shape(APIClient().get("/api/v1/no-such-thing/"), 404, "not_found")
    assert "/api/docs/" in error["message"]


def test_the_schema_and_docs_are_served_without_external_assets(db):
    client = APIClient()
    schema = client.get("/api/schema/?format=json")
    assert schema.status_code == 200
    assert "/api/v1/me/" in schema.json()["paths"]
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    html = docs.content.decode()
    assert "swagger-ui" in html and "cdn" not in html.lower()
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        path = next(part.split('"')[0] for part in html.split('"/static/')[1:] if asset in part.split('"')[0])
        assert client.get(f"/static/{path}").status_code == 200


def test_issue_token_creates_the_user_and_team_and_prints_a_working_token(db, capsys):
    call_command("issue_token", "--username", "ops", "--team", "Ops Team", "--maintainer")
    key = capsys.readouterr().out.strip().splitlines()[-1]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    body = client.get("/api/v1/me/").json()
    assert body["username"] == "ops" and body["team"] == "Ops Team" and body["maintainer"] is True


def test_issue_token_refuses_a_bad_team_name_and_creates_nothing(db):
    from django.contrib.auth import get_user_model
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="A team name is 2 to 80 characters"):
        call_command("issue_token", "--username", "ops", "--team", "!")
    assert not get_user_model().objects.filter(username="ops").exists()
