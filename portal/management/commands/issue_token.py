from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from portal.accounts import services
from portal.accounts.models import Membership, Team


class Command(BaseCommand):
    help = "Create (when missing) a user and a team, and print a new API token for them on the last line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", required=True)
        parser.add_argument("--team", required=True, help="Team name; created with the user as owner when missing")
        parser.add_argument("--email", help="Email of a new user (default USERNAME@localhost)")
        parser.add_argument("--maintainer", action="store_true", help="Also grant the maintainer role")
        parser.add_argument("--name", default="issued", help="Token name")

    def handle(
        self, *args: Any, username: str, team: str, email: str | None, maintainer: bool, name: str, **options: Any
    ) -> None:
        try:
            with transaction.atomic():
                user = services.user_ensure(username=username, email=email)
                team_obj = Team.objects.filter(name__iexact=team.strip()).first()
                if team_obj is None:
                    team_obj = services.team_create(user=user, name=team)
                else:
                    Membership.objects.get_or_create(team=team_obj, user=user)
                if maintainer:
                    services.maintainer_grant(user=user)
                _, key = services.token_create(user=user, team=team_obj, name=name)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        role = " (maintainer)" if maintainer else ""
        self.stderr.write(f"Token for {user.get_username()}{role} acting for team {team_obj.name}:")
        self.stdout.write(key)
