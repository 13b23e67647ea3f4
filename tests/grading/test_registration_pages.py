"""Registrations on the web and in public (SPEC section 9): a team member registers a run group with the API's
fields and validation and reads the team's registrations with their nonces; outsiders get 404; a registration is
public (page and API, nonce included) once an entry uses it or its deadline has passed, and 404 there before."""

from datetime import timedelta

import pytest
from django.utils import timezone

from competitions.demo.runs import default_manifest, pack_answers, write_run_bundle, write_run_group
from grading.models import Registration, Submission
from grading.services.registrations import registration_create
from leaderboard import services
from leaderboard.models import Entry
from tests.lite import pipeline_upload

pytestmark = pytest.mark.django_db

COMPETITION = "spooky-author-identification"


@pytest.fixture
def alice_web(client, alice):
    client.force_login(alice)
    return client


def _form(**overrides) -> dict:
    return {"agent_name": "aide", "agent_version": "1.0", "split": "low", "seeds": "10", **overrides}


def _register(alice, **overrides) -> Registration:
    fields = {"agent_name": "aide", "agent_version": "1.0", "split": "low", "seeds": 3, **overrides}
    return registration_create(team=alice.teams.get(), user=alice, **fields)


def test_a_member_registers_on_the_web_and_sees_id_nonce_and_deadline(registry_with_packs, alice, alice_web):
    team = alice.teams.get()
    url = f"/teams/{team.pk}/registrations/"
    assert f'href="{url}"' in alice_web.get(f"/teams/{team.pk}/").content.decode()
    response = alice_web.post(url, _form(image="sha256:" + "ab" * 32), follow=True)
    registration = Registration.objects.get()
    assert response.redirect_chain == [(f"{url}{registration.pk}/", 302)]
    page = response.content.decode()
    assert f"Registration {registration.pk} created" in page and registration.nonce in page
    assert registration.deadline.strftime("%Y-%m-%d %H:%M") in page
    assert (registration.agent_name, registration.seeds, registration.split) == ("aide", 10, "low")
    assert registration.created_by == alice and registration.team == team
    assert COMPETITION in registration.competitions
    assert "Only your team sees this registration" in page and f'"registration": {registration.pk}' in page
    listed = alice_web.get(url).content.decode()
    assert f'id="registration-{registration.pk}"' in listed and registration.nonce in listed


def test_competitions_instead_of_a_split(registry_with_packs, alice_web, alice):
    team = alice.teams.get()
    response = alice_web.post(
        f"/teams/{team.pk}/registrations/", _form(split="", competitions=f"{COMPETITION}\n", seeds="2")
    )
    assert response.status_code == 302
    assert Registration.objects.get().competitions == [COMPETITION]


@pytest.mark.parametrize(
    ("overrides", "field", "words"),
    [
        ({"split": "tiny"}, "split", "Select a valid choice"),
        ({"split": "", "competitions": "no-such-competition"}, "competitions", "'no-such-competition'"),
        ({"competitions": COMPETITION}, "split", "not both"),
        ({"split": ""}, "split", "or competitions"),
        ({"seeds": "0"}, "seeds", "from 1 to 20"),
        ({"seeds": "ten"}, "seeds", "whole number"),
        ({"image": "latest"}, "image", "sha256:"),
        ({"agent_version": ""}, "agent_version", "required"),
        ({"agent_name": "   "}, "agent_name", "required"),
        ({"agent_name": "x" * 201}, "agent_name", "at most 200"),
    ],
)
def test_bad_input_says_what_is_wrong_by_the_field_and_writes_nothing(
    registry_with_packs, alice, alice_web, overrides, field, words
):
    response = alice_web.post(f"/teams/{alice.teams.get().pk}/registrations/", _form(**overrides))
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert field in errors and words in " ".join(errors[field]), errors
    assert words in response.content.decode().replace("&#x27;", "'")
    assert not Registration.objects.exists()


def test_bob_cannot_see_or_register_for_alices_team(registry_with_packs, alice, bob, client):
    registration = _register(alice)
    team = alice.teams.get()
    client.force_login(bob)
    assert client.get(f"/teams/{team.pk}/registrations/").status_code == 404
    assert client.post(f"/teams/{team.pk}/registrations/", _form()).status_code == 404
    page = client.get(f"/teams/{team.pk}/registrations/{registration.pk}/")
    assert page.status_code == 404 and registration.nonce not in page.content.decode()
    # Nor through his own team's address.
    assert client.get(f"/teams/{bob.teams.get().pk}/registrations/{registration.pk}/").status_code == 404
    assert Registration.objects.count() == 1
    client.logout()
    anonymous = client.get(f"/teams/{team.pk}/registrations/")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]


def test_a_registration_not_yet_public_is_404_in_public(registry_with_packs, alice, client):
    registration = _register(alice)
    page = client.get(f"/registrations/{registration.pk}/")
    assert page.status_code == 404 and registration.nonce not in page.content.decode()
    assert registration.nonce not in client.get("/registrations/").content.decode()
    api = client.get(f"/api/v1/registrations/public/{registration.pk}/")
    assert api.status_code == 404 and registration.nonce not in api.content.decode()
    assert api.json()["error"]["code"] == "not_found"
    assert client.get("/api/v1/registrations/public/").json() == []
    # A made-up id reads the same as one not yet public.
    assert client.get("/registrations/999999/").status_code == 404


def test_past_its_deadline_a_registration_is_public_nonce_included(registry_with_packs, alice, client):
    registration = _register(alice, split="", competitions=[COMPETITION], seeds=5)
    hidden = _register(alice)
    Registration.objects.filter(pk=registration.pk).update(deadline=timezone.now() - timedelta(minutes=1))
    listed = client.get("/registrations/").content.decode()
    assert f'id="registration-{registration.pk}"' in listed and f'id="registration-{hidden.pk}"' not in listed
    assert 'href="/registrations/"' in listed  # the nav's link
    page = client.get(f"/registrations/{registration.pk}/").content.decode()
    assert registration.nonce in page and COMPETITION in page and "Alice Lab" in page and "none yet" in page
    body = client.get(f"/api/v1/registrations/public/{registration.pk}/").json()
    assert body["nonce"] == registration.nonce and body["agent"] == {"name": "aide", "version": "1.0"}
    assert body["competitions"] == [COMPETITION] and body["seeds"] == 5 and body["entries"] == []
    assert body["hosted_run"] is None
    assert [row["id"] for row in client.get("/api/v1/registrations/public/").json()] == [registration.pk]


@pytest.fixture
def upload(registry_with_packs, alice, monkeypatch, django_capture_on_commit_callbacks):
    from grading import queue
    from leaderboard.tasks import refresh_board

    monkeypatch.setattr(queue, "send", lambda task, pk: None)
    monkeypatch.setattr(refresh_board, "delay", lambda *args, **kwargs: None)

    def send(path) -> Submission:
        return pipeline_upload(path, user=alice, capture=django_capture_on_commit_callbacks)

    return send


def test_an_entry_using_it_makes_it_public_and_is_linked(upload, alice, alice_web, lite_packs, tmp_path, client):
    registration = _register(alice, seeds=3)
    group = write_run_group(
        out_dir=tmp_path / "runs",
        seeds=(0, 1, 2),
        quality=0.9,
        answers=pack_answers(lite_packs),
        nonce=registration.nonce,
    )
    manifest = {**default_manifest(split="low", seeds=3), "registration": registration.pk}
    submission = upload(write_run_bundle(run_group=group, out_path=tmp_path / "b.tar.gz", manifest=manifest))
    assert submission.status == Submission.Status.PUBLISHED, submission.status_reason
    assert client.get(f"/registrations/{registration.pk}/").status_code == 404  # not on the board yet
    services.board_refresh(submission_ids=[submission.pk])
    entry = Entry.objects.get(submission=submission)
    page = client.get(f"/registrations/{registration.pk}/").content.decode()
    assert f'href="/leaderboard/entries/{entry.pk}/"' in page and registration.nonce in page
    body = client.get(f"/api/v1/registrations/public/{registration.pk}/").json()
    assert body["entries"] == [{"id": entry.pk, "submission": submission.pk, "status": "published"}]
    own = alice_web.get(f"/teams/{alice.teams.get().pk}/registrations/{registration.pk}/").content.decode()
    assert "Public:" in own and f"entry {entry.pk}" in own
