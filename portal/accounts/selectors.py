from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404

from portal.accounts.models import ApiToken, Membership, Team
from portal.accounts.services import MAINTAINER_PERMISSION


def signed_in_user(user: User | AnonymousUser) -> User:
    """The account of a request whose view requires login (login_required, DRF's IsAuthenticated).

    Those guards turn anonymous requests away before the view runs, so the refusal here is never reached;
    it narrows the type, and keeps an unguarded view from acting for nobody."""
    if not isinstance(user, User):
        raise PermissionDenied("Log in first.")
    return user


def is_maintainer(user: User | AnonymousUser) -> bool:
    return bool(user.is_authenticated and user.has_perm(MAINTAINER_PERMISSION))


def teams_for_user(*, user: User) -> QuerySet[Team]:
    return Team.objects.filter(memberships__user=user).order_by("name")


def team_for_member(*, user: User, team_id: int) -> Team:
    """The team, if the user belongs to it; otherwise 404, so outsiders learn nothing."""
    team = teams_for_user(user=user).filter(pk=team_id).first()
    if team is None:
        raise Http404("No such team among yours.")
    return team


def team_members(*, team: Team) -> QuerySet[Membership]:
    return team.memberships.select_related("user").order_by("joined_at")


def tokens_for_user(*, user: User) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).select_related("team")
