from typing import Any

from django.core.management.base import BaseCommand

from competitions.services import competitions_load


class Command(BaseCommand):
    help = "Load the shipped benchmark registry (competitions, tiers, leaderboards, thresholds). Safe to rerun."

    def handle(self, *args: Any, **options: Any) -> None:
        benchmark, created, updated = competitions_load()
        self.stdout.write(
            f"{benchmark} @ {benchmark.commit[:8]}: {benchmark.competitions.count()} competitions "
            f"({created} created, {updated} updated)"
        )
