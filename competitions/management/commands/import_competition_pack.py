from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from competitions.pack_services import pack_import
from competitions.packs import PackError


class Command(BaseCommand):
    help = (
        "Import competition packs (answers, sample submission, leaderboard, description, grader) from a pack "
        "folder in the portal's layout, a folder of packs, or an MLE-bench data directory "
        "(<data>/<id>/prepared/{public,private}). Answers go to private storage. Prints, per competition, "
        "the leaderboard now in force."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path)

    def handle(self, *args: Any, path: Path, **options: Any) -> None:
        try:
            imported = pack_import(path=path)
        except PackError as exc:
            raise CommandError(str(exc)) from None
        for item in imported:
            pack, competition = item.pack, item.pack.competition
            board = competition.leaderboard_label
            if competition.leaderboard_scores:
                board += f", {len(competition.leaderboard_scores)} teams"
            if item.leaderboard.note:
                board += f" ({item.leaderboard.note})"
            self.stdout.write(
                f"{competition.slug}: answers {pack.answers_bytes} bytes, honest submissions up to "
                f"{pack.max_submission_bytes} bytes; leaderboard: {board}"
            )
        self.stdout.write(self.style.SUCCESS(f"Imported {len(imported)} pack(s)."))
