"""Writes for accounts and teams. Each service validates, writes atomically, and raises
ValidationError (a message for the person) or PermissionDenied; nothing half-created."""

import re

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission, User
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.utils import timezone

from portal.accounts.keys import hash_key, new_key
from portal.accounts.models import ApiToken, Invitation, Membership, Team

MAINTAINERS_GROUP = "maintainers"
MAINTAINER_PERMISSION = "accounts.maintain_portal"
_TEAM_NAME = re.compile(r"^[\w][\w .\-]{1,79}$")


def _clean_team_name(name: str) -> str:
    name = " ".join((name or "").split())
    if not _TEAM_NAME.fullmatch(name):
        raise ValidationError(
            "A team name is 2 to 80 characters: letters, digits, spaces, '.', '-' or '_', starting with a letter "
            "or digit.",
            code="invalid_team_name",
        )
    return name


def team_create(*, user: User, name: str) -> Team:
    name = _clean_team_name(name)
    if Team.objects.filter(name__iexact=name).exists():
        raise ValidationError(f"A team named '{name}' already exists; choose another name.", code="duplicate_team")
    try:
        with transaction.atomic():
            team = Team.objects.create(name=name)
            Membership.objects.create(team=team, user=user, role=Membership.Role.OWNER)
    except IntegrityError:
        # Two requests raced for the same name; the constraint decided.
        raise ValidationError(
            f"A team named '{name}' already exists; choose another name.", code="duplicate_team"
        ) from None
    return team


def _require_member(*, user: User, team: Team) -> Membership:
    membership = Membership.objects.filter(team=team, user=user).first()
    if membership is None:
        raise PermissionDenied("You are not a member of this team.")
    return membership


def invitation_create(*, team: Team, invited_by: User, email: str, accept_url_template: str) -> Invitation:
    """Invite someone by email. accept_url_template holds '{key}' where the invitation key goes."""
    _require_member(user=invited_by, team=team)
    email = (email or "").strip()
    try:
        validate_email(email)
    except ValidationError:
        raise ValidationError(f"'{email}' is not an email address.", code="invalid_email") from None
    if team.members.filter(email__iexact=email).exists():
        raise ValidationError(f"{email} is already a member of {team.name}.", code="already_member")
    if team.invitations.filter(email__iexact=email, accepted_at__isnull=True).exists():
        raise ValidationError(f"{email} already has an open invitation to {team.name}.", code="already_invited")
    key = new_key()
    with transaction.atomic():
        invitation = Invitation.objects.create(team=team, email=email, key_hash=hash_key(key), invited_by=invited_by)
        url = accept_url_template.format(key=key)
        transaction.on_commit(
            lambda: send_mail(
                subject=f"You are invited to join {team.name}",
                message=f"{invited_by.email} invites you to the team {team.name}.\n\nAccept: {url}\n",
                from_email=settings.DEFAULT_FROM_EMAIL,
                recipient_list=[email],
            )
        )
    return invitation


def invitation_accept(*, key: str, user: User) -> Membership:
    invitation = Invitation.objects.filter(key_hash=hash_key(key or "")).select_related("team").first()
    if invitation is None:
        raise ValidationError("This invitation link is not valid.", code="invalid_invitation")
    if invitation.accepted_at is not None:
        raise ValidationError("This invitation was already used.", code="used_invitation")
    if invitation.email.lower() != (user.email or "").lower():
        raise ValidationError(
            f"This invitation is for {invitation.email}; log in with that address to accept it.",
            code="wrong_account",
        )
    with transaction.atomic():
        claimed = Invitation.objects.filter(pk=invitation.pk, accepted_at__isnull=True).update(
            accepted_at=timezone.now()
        )
        if not claimed:
            raise ValidationError("This invitation was already used.", code="used_invitation")
        membership, _ = Membership.objects.get_or_create(team=invitation.team, user=user)
    return membership


def token_create(*, user: User, team: Team, name: str) -> tuple[ApiToken, str]:
    """Create a token; the key is returned once and only its hash is stored."""
    _require_member(user=user, team=team)
    name = " ".join((name or "").split())
    if not 1 <= len(name) <= 80:
        raise ValidationError("Give the token a name of 1 to 80 characters, e.g. 'ci'.", code="invalid_token_name")
    key = new_key()
    token = ApiToken.objects.create(user=user, team=team, name=name, prefix=key[:12], key_hash=hash_key(key))
    return token, key


def token_revoke(*, user: User, token_id: int) -> ApiToken:
    token = ApiToken.objects.filter(pk=token_id, user=user).first()
    if token is None:
        # Someone else's token looks the same as a missing one.
        raise PermissionDenied("No such token among yours.")
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    token.refresh_from_db()
    return token


def maintainers_group() -> Group:
    group, _ = Group.objects.get_or_create(name=MAINTAINERS_GROUP)
    app_label, codename = MAINTAINER_PERMISSION.split(".")
    permission = Permission.objects.get(content_type__app_label=app_label, codename=codename)
    group.permissions.add(permission)
    return group


def maintainer_grant(*, user: User) -> None:
    user.groups.add(maintainers_group())


def user_ensure(*, username: str, email: str | None = None) -> User:
    user_model = get_user_model()
    user = user_model.objects.filter(username=username).first()
    if user is None:
        user = user_model.objects.create_user(username=username, email=email or f"{username}@localhost")
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def team_mail(*, team: Team, subject: str, lines: list[str]) -> None:
    """Email every member of the team who gave an address (the console backend by default)."""
    recipients = list(team.members.exclude(email="").values_list("email", flat=True))
    if recipients:
        send_mail(
            subject=subject,
            message="\n".join(lines),
            from_email=settings.DEFAULT_FROM_EMAIL,
            recipient_list=recipients,
        )
