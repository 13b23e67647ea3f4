from django.contrib.auth.models import User
from django.core import mail

from portal.accounts.models import Membership
from portal.accounts.services import team_mail


def test_it_mails_every_member_with_an_address(alice):
    team = alice.teams.get()
    no_address = User.objects.create_user(username="carl", email="")
    Membership.objects.create(team=team, user=no_address, role=Membership.Role.MEMBER)
    team_mail(team=team, subject="Submission 7: published", lines=["one", "two"])
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["alice@example.org"]
    assert mail.outbox[0].subject == "Submission 7: published"
    assert mail.outbox[0].body == "one\ntwo"


def test_it_sends_nothing_when_no_member_has_an_address(alice):
    alice.email = ""
    alice.save()
    team_mail(team=alice.teams.get(), subject="Submission 7: published", lines=["one"])
    assert mail.outbox == []
