from django.contrib.auth.models import AbstractUser, AnonymousUser
from django.db.models import QuerySet
from django.http import Http404

from portal.accounts.models import ApiToken, Membership, Team
from portal.accounts.services import MAINTAINER_PERMISSION


def is_maintainer(user: AbstractUser | AnonymousUser) -> bool:
    return bool(user.is_authenticated and user.has_perm(MAINTAINER_PERMISSION))


def teams_for_user(*, user: AbstractUser) -> QuerySet[Team]:
    return Team.objects.filter(memberships__user=user).order_by("name")


def team_for_member(*, user: AbstractUser, team_id: int) -> Team:
    """The team, if the user belongs to it; otherwise 404, so outsiders learn nothing."""
    team = teams_for_user(user=user).filter(pk=team_id).first()
    if team is None:
        raise Http404("No such team among yours.")
    return team


def team_members(*, team: Team) -> QuerySet[Membership]:
    return team.memberships.select_related("user").order_by("joined_at")


def tokens_for_user(*, user: AbstractUser) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).select_related("team")
