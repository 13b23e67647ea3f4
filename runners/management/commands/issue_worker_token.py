import re
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from runners.services.workers import worker_token_issue

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class Command(BaseCommand):
    help = (
        "Create a GPU worker (or give an existing one a new token, revoking its old one) and print its token "
        "alone on the last line. The worker sends it as 'Authorization: Worker <token>' (PORTAL_WORKER_TOKEN)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True, help="The worker machine's name, e.g. gpu-box-1")

    def handle(self, *args: Any, name: str, **options: Any) -> None:
        if not NAME.fullmatch(name):
            raise CommandError(f"--name {name!r}: letters, digits, '.', '_' and '-', at most 100 characters")
        worker, key = worker_token_issue(name=name)
        self.stderr.write(f"Token for worker {worker.name} (shown once; issuing again revokes it):")
        self.stdout.write(key)
