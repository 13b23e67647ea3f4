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
        parser.add_argument(
            "--trusted",
            action="store_true",
            help="The operator's own machine: approve whatever hardware it declares as it registers. Without it, a "
            "maintainer approves the worker on /hosted-runs/workers/approval/ before it gets any task.",
        )

    def handle(self, *args: Any, name: str, trusted: bool = False, **options: Any) -> None:
        if not NAME.fullmatch(name):
            raise CommandError(f"--name {name!r}: letters, digits, '.', '_' and '-', at most 100 characters")
        worker, key = worker_token_issue(name=name, trusted=trusted)
        approval = "approved as it registers" if trusted else "a maintainer approves it before it gets tasks"
        self.stderr.write(f"Token for worker {worker.name} ({approval}; shown once; issuing again revokes it):")
        self.stdout.write(key)
