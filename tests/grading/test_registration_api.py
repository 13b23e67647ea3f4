"""Registering a run group through the API (SPEC section 9): created with a nonce and a deadline, listed for the
team only, and bad input refused with the field named."""

from datetime import timedelta

import pytest
from django.utils import timezone

from grading.models import Registration

pytestmark = pytest.mark.django_db


@pytest.fixture
def registry(db):
    from competitions.services import competitions_load

    competitions_load()


def register(api, **body):
    return api.post("/api/v1/registrations/", body, format="json")


def test_register_a_split_answers_id_nonce_and_deadline(registry, alice_api, settings):
    settings.REGISTRATION_DEADLINE_DAYS = 3
    image = "sha256:" + "ab" * 32
    response = register(alice_api, agent={"name": "aide", "version": "1.0"}, split="low", seeds=10, image=image)
    assert response.status_code == 201, response.content
    body = response.json()
    registration = Registration.objects.get(pk=body["id"])
    assert body["nonce"] == registration.nonce and len(registration.nonce) == 32
    assert body["team"] == "Alice Lab" and body["agent"] == {"name": "aide", "version": "1.0"}
    assert body["seeds"] == 10 and body["image"] == image and body["split"] == "low"
    assert "spooky-author-identification" in body["competitions"]
    assert abs(registration.deadline - (timezone.now() + timedelta(days=3))) < timedelta(minutes=1)
    other = register(alice_api, agent={"name": "aide", "version": "1.0"}, split="low", seeds=10).json()
    assert other["nonce"] != body["nonce"]


def test_register_competitions_and_list_own_only(registry, alice_api, bob_api):
    created = register(
        alice_api, agent={"name": "aide", "version": "2"}, competitions=["spooky-author-identification"], seeds=2
    ).json()
    assert created["competitions"] == ["spooky-author-identification"] and created["split"] == ""
    listed = alice_api.get("/api/v1/registrations/").json()
    assert [row["id"] for row in listed] == [created["id"]]
    assert alice_api.get(f"/api/v1/registrations/{created['id']}/").json()["nonce"] == created["nonce"]
    assert bob_api.get("/api/v1/registrations/").json() == []
    refused = bob_api.get(f"/api/v1/registrations/{created['id']}/")
    assert refused.status_code == 404 and "nonce" not in refused.content.decode()


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"split": "tiny", "seeds": 3}, "split", "must be one of low"),
        ({"competitions": ["no-such-competition"], "seeds": 3}, "competitions", "'no-such-competition'"),
        ({"split": "low", "competitions": ["spooky-author-identification"], "seeds": 3}, "split", "not both"),
        ({"seeds": 3}, "split", "or competitions"),
        ({"split": "low", "seeds": 0}, "seeds", "from 1 to 20"),
        ({"split": "low", "seeds": 10_000}, "seeds", "from 1 to 20"),
        ({"split": "low", "seeds": 3, "image": "latest"}, "image", "sha256:"),
        ({"split": "low"}, "seeds", "required"),
    ],
)
def test_bad_input_is_refused_naming_the_field(registry, alice_api, body, field, words):
    response = register(alice_api, agent={"name": "aide", "version": "1"}, **body)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["details"]["field"] == field
    assert words in str(error), error
    assert not Registration.objects.exists()


def test_agent_version_is_required(registry, alice_api):
    response = register(alice_api, agent={"name": "aide"}, split="low", seeds=3)
    assert response.status_code == 400 and response.json()["error"]["details"]["field"] == "agent.version"


def test_anonymous_cannot_register(registry, client):
    response = client.post("/api/v1/registrations/", {}, content_type="application/json")
    assert response.status_code in (401, 403)


def test_registrations_are_in_the_openapi_schema(client):
    schema = client.get("/api/schema/").content.decode()
    assert "/api/v1/registrations/" in schema and "RegistrationInput" in schema
