"""Grading on the server: one submission file against a competition's private answers."""

from pathlib import Path

from competitions.models import Competition
from competitions.selectors import grading_setup
from grading.engine.report import CompetitionReport, grade_submission


def grade_file(*, competition: Competition, submission_path: Path | None, display_path: str | None = None) -> CompetitionReport:
    """Re-grade one submission.csv. Bad files give an invalid report with a reason; a competition that is
    not gradable yet raises NotGradable."""
    answers_path, grader, thresholds = grading_setup(competition)
    return grade_submission(
        competition_id=competition.slug,
        submission_path=submission_path,
        answers_path=answers_path,
        grader=grader,
        thresholds=thresholds,
        display_path=display_path,
    )
