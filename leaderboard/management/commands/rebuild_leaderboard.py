from typing import Any

from django.core.management.base import BaseCommand

from leaderboard.services import board_rebuild


class Command(BaseCommand):
    help = (
        "Recompute every board entry, row and rank from what grading stored (after a change to the "
        "aggregation or to the known-issue list). Safe to rerun."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        count = board_rebuild()
        self.stdout.write(f"Rebuilt the board from {count} published submission(s).")
