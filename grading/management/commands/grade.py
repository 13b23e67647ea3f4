import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.http import Http404

from competitions.selectors import NotGradable, competition_get
from grading.services.grade_file import grade_file


class Command(BaseCommand):
    help = "Grade one submission file and print the competition report in MLE-bench's JSON format."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--competition", required=True, help="Competition id, e.g. spooky-author-identification")
        parser.add_argument("submission", type=Path, help="Path to submission.csv")
        parser.add_argument("--with-reason", action="store_true", help="Add 'reason' (why a submission is invalid)")

    def handle(self, *args: Any, competition: str, submission: Path, with_reason: bool, **options: Any) -> None:
        try:
            competition_obj = competition_get(slug=competition)
            report = grade_file(competition=competition_obj, submission_path=submission)
        except Http404 as exc:
            raise CommandError(str(exc)) from None
        except NotGradable as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(json.dumps(report.to_dict(with_reason=with_reason), indent=2))
        if report.reason:
            self.stderr.write(f"invalid submission: {report.reason}")
