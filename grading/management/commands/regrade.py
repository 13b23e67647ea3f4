from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from grading.services.regrade import submission_regrade, submissions_regrade_all


class Command(BaseCommand):
    help = "Re-grade submissions (after a grader fix or a new benchmark version): given ids, or --all."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("ids", nargs="*", type=int)
        parser.add_argument("--all", action="store_true")

    def handle(self, *args: Any, ids: list[int], all: bool, **options: Any) -> None:
        if all == bool(ids):
            raise CommandError("Give submission ids or --all (not both).")
        if all:
            self.stdout.write(f"{submissions_regrade_all()} submission(s) queued for re-grading.")
            return
        for submission_id in ids:
            queued = submission_regrade(submission_id=submission_id)
            self.stdout.write(f"{submission_id}: {'queued' if queued else 'not re-gradable in its current status'}")
