import pytest
from django.contrib.auth import get_user_model
from django.core import mail

from portal.accounts.models import Invitation, Membership, Team


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client


def test_it_creates_a_team_with_the_creator_as_owner(client, db):
    user = get_user_model().objects.create_user(username="carol", email="carol@example.org", password="x-pass-123456")
    client.force_login(user)
    response = client.post("/team/", {"name": "  Carol   Research "})
    team = Team.objects.get()
    assert team.name == "Carol Research"
    assert response.status_code == 302 and response["Location"] == f"/teams/{team.pk}/"
    assert Membership.objects.get(team=team).user == user
    assert Membership.objects.get(team=team).role == Membership.Role.OWNER


def test_it_refuses_a_duplicate_team_name_whatever_the_case(alice_client):
    response = alice_client.post("/team/", {"name": "alice LAB"})
    assert response.status_code == 200
    assert "A team named &#x27;alice LAB&#x27; already exists; choose another name." in response.content.decode()
    assert Team.objects.count() == 1


@pytest.mark.parametrize("name", ["", "x", "<script>", "a" * 81, "-starts-with-dash"])
def test_it_refuses_a_bad_team_name_and_creates_nothing(alice_client, name):
    response = alice_client.post("/team/", {"name": name})
    assert response.status_code == 200
    assert 'class="errorlist' in response.content.decode()
    assert Team.objects.count() == 1


def test_a_member_sees_the_team_members(alice_client, alice):
    team = alice.teams.get()
    page = alice_client.get(f"/teams/{team.pk}/").content.decode()
    assert "alice@example.org" in page and "Owner" in page


def test_bob_cannot_see_alices_team(client, alice, bob):
    client.force_login(bob)
    team = alice.teams.get()
    response = client.get(f"/teams/{team.pk}/")
    assert response.status_code == 404
    assert "alice@example.org" not in response.content.decode()


def test_bob_cannot_invite_into_alices_team(client, alice, bob):
    client.force_login(bob)
    response = client.post(f"/teams/{alice.teams.get().pk}/", {"email": "mallory@example.org"})
    assert response.status_code == 404
    assert Invitation.objects.count() == 0


def test_an_invited_member_joins_through_the_emailed_link(client, alice, bob, django_capture_on_commit_callbacks):
    client.force_login(alice)
    team = alice.teams.get()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/teams/{team.pk}/", {"email": "bob@example.org"})
    assert response.status_code == 302
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["bob@example.org"]
    link = next(line for line in mail.outbox[0].body.splitlines() if "/invitations/" in line).split("Accept: ")[1]
    path = link.split("testserver", 1)[1]

    client.force_login(bob)
    assert client.post(path).status_code == 302
    assert team.members.filter(pk=bob.pk).exists()
    # The link works once.
    again = client.post(path)
    assert again.status_code == 400 and "already used" in again.content.decode()


def test_an_invitation_cannot_be_accepted_by_another_account(client, alice, bob, maintainer):
    from portal.accounts import services

    team = alice.teams.get()
    services.invitation_create(team=team, invited_by=alice, email="bob@example.org", accept_url_template="/i/{key}")
    invitation = Invitation.objects.get()
    key = "mlep_wrong"
    client.force_login(maintainer)
    response = client.post(f"/invitations/{key}/")
    assert response.status_code == 400 and "not valid" in response.content.decode()
    assert invitation.accepted_at is None and not team.members.filter(pk=maintainer.pk).exists()


def test_it_refuses_a_second_open_invitation_and_a_bad_email(alice_client, alice):
    team = alice.teams.get()
    assert alice_client.post(f"/teams/{team.pk}/", {"email": "new@example.org"}).status_code == 302
    again = alice_client.post(f"/teams/{team.pk}/", {"email": "NEW@example.org"}).content.decode()
    assert "already has an open invitation" in again
    bad = alice_client.post(f"/teams/{team.pk}/", {"email": "not-an-email"}).content.decode()
    assert "Enter a valid email address." in bad
    assert Invitation.objects.count() == 1


def test_a_form_without_its_csrf_token_is_refused_with_a_clear_message(alice):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post("/team/", {"name": "Sneaky"})
    assert response.status_code == 403
    assert "security token (CSRF) is missing or stale" in response.content.decode()
    assert not Team.objects.filter(name="Sneaky").exists()
