from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from competitions.pack_services import pack_import
from competitions.packs import PackError


class Command(BaseCommand):
    help = (
        "Import competition packs (answers, sample submission, leaderboard, description, grader) from a pack "
        "folder in the portal's layout, a folder of packs, or an MLE-bench data directory "
        "(<data>/<id>/prepared/{public,private}). Answers go to private storage."
    )

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path)

    def handle(self, *args, path, **options):
        try:
            packs = pack_import(path=path)
        except PackError as exc:
            raise CommandError(str(exc)) from None
        for pack in packs:
            competition = pack.competition
            thresholds = "thresholds from " + (competition.get_leaderboard_source_display() if competition.has_thresholds else "nowhere yet")
            self.stdout.write(f"{competition.slug}: answers {pack.answers_bytes} bytes, {thresholds}")
        self.stdout.write(self.style.SUCCESS(f"Imported {len(packs)} pack(s)."))
