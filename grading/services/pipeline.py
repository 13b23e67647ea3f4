"""The re-grading pipeline: validating → grading → checking → in_review | published.

Every step is safe to run twice: work is claimed by conditional updates, results are keyed by unique
constraints, and the step that finishes a submission runs once because only one caller wins its claim.
"""

import logging
import math
import traceback
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from competitions.selectors import NotGradable
from grading import queue
from grading.engine import GRADER_VERSION
from grading.engine.safe_json import NAN_MARKER, storable_report
from grading.models import Run, Submission
from grading.services import scheduling
from grading.services.grade_file import grade_run_file
from grading.services.submissions import (
    submission_bundle_root,
    submission_files_delete,
    submission_transition,
)

logger = logging.getLogger(__name__)
S = Submission.Status


def submission_validate(*, submission_id: int) -> None:
    """Start grading a submission whose bundle intake has read and validated: its runs exist already.

    Nothing here reads the bundle again; a bundle that could not be graded never got a row.
    """
    if not submission_transition(submission_id=submission_id, to=S.VALIDATING, expected=(S.RECEIVED,)):
        return

    with transaction.atomic():
        runs = list(Run.objects.filter(submission_id=submission_id))
        Submission.objects.filter(pk=submission_id).update(progress_total=len(runs), progress_done=0)
        if runs:
            submission_transition(submission_id=submission_id, to=S.GRADING, expected=(S.VALIDATING,))
            transaction.on_commit(scheduling.runs_dispatch)
        else:
            submission_transition(submission_id=submission_id, to=S.CHECKING, expected=(S.VALIDATING,))
            queue.finish_after_commit(submission_id=submission_id)


def invalid_run_report(run: Run, reason: str) -> dict:
    report = {
        "competition_id": run.competition.slug,
        "score": None,
        "gold_threshold": run.competition.gold_threshold,
        "silver_threshold": run.competition.silver_threshold,
        "bronze_threshold": run.competition.bronze_threshold,
        "median_threshold": run.competition.median_threshold,
        "any_medal": False,
        "gold_medal": False,
        "silver_medal": False,
        "bronze_medal": False,
        "above_median": False,
        "submission_exists": bool(run.submission_file),
        "valid_submission": False,
        "is_lower_better": run.competition.is_lower_better,
        "created_at": timezone.now().isoformat(),
        "submission_path": run.submission_file or "None",
    }
    if not run.competition.has_thresholds:
        report["medals_known"] = False  # as a graded report of a competition without a leaderboard says
    return {**report, "reason": reason}


def run_grade(*, run_id: int, redelivered: bool = False) -> None:
    """Grade one run if this process wins its claim. Twice is harmless: a run that is done, or that another
    live process is grading, is left alone, and of two results the first to land is kept."""
    run = Run.objects.select_related("submission", "competition__pack").filter(pk=run_id).first()
    if run is None:
        return
    if scheduling.run_claim(run_id=run_id, redelivered=redelivered):
        scheduling.runs_dispatch()  # the place this run held in the queue goes to the next one
        path = submission_bundle_root(run.submission) / run.submission_file if run.submission_file else None
        measured = None
        try:
            graded, measured = grade_run_file(
                competition=run.competition, submission_path=path, display_path=run.submission_file or None
            )
            report = graded.to_dict(with_reason=True)
        except NotGradable as exc:
            report = invalid_run_report(run, str(exc))
        _run_record(run, report, agreement=measured)
        scheduling.runs_dispatch()
    submission_maybe_finish(submission_id=run.submission_id)


def _run_record(run: Run, report: dict, *, agreement: dict | None = None) -> None:
    """Store a run's result (and its agreement with the answers) unless one already landed; count it once."""
    report = storable_report(report)
    with transaction.atomic():
        landed = (
            Run.objects.filter(pk=run.pk)
            .exclude(status=Run.Status.DONE)
            .update(
                status=Run.Status.DONE,
                regraded=report,
                score=math.nan if report.get(NAN_MARKER) else report["score"],
                valid_submission=report["valid_submission"],
                any_medal=report["any_medal"],
                graded_at=timezone.now(),
                grader_version=GRADER_VERSION,
                answer_agreement=agreement,
            )
        )
        if landed:
            Submission.objects.filter(pk=run.submission_id).update(progress_done=F("progress_done") + 1)


def run_give_up(*, run_id: int, reason: str) -> None:
    """Record a run that cannot be graded (too slow, its worker lost too often) as invalid, with the reason."""
    run = Run.objects.select_related("competition").filter(pk=run_id).exclude(status=Run.Status.DONE).first()
    if run is None:
        return
    _run_record(run, invalid_run_report(run, reason))
    scheduling.runs_dispatch()
    submission_maybe_finish(submission_id=run.submission_id)


def runs_requeue_lost(*, now: datetime | None = None) -> tuple[int, int]:
    """Re-queue runs whose worker was lost; one lost MAX_RUN_ATTEMPTS times is given up with a reason.
    Returns (requeued, given up)."""
    requeued, hopeless = scheduling.runs_requeue_lost(now=now)
    for run_id, attempts in hopeless:
        run_give_up(run_id=run_id, reason=f"its worker was lost {attempts} times while grading it")
    return requeued, len(hopeless)


def _our_file(filename: str) -> str | None:
    """A traceback frame's file relative to the checkout, when it is the portal's own code (not a package)."""
    path = Path(filename)
    if not path.is_relative_to(settings.BASE_DIR):
        return None
    relative = path.relative_to(settings.BASE_DIR)
    return None if relative.parts[0].startswith((".", "venv")) else relative.as_posix()


def grading_error_reason(exc: BaseException, *, attempts: int) -> str:
    """What went wrong, in words a maintainer can act on: the exception's type and the line of our code it came
    from, never its message (a grader's message may quote the answers it was reading)."""
    ours = [(shown, frame) for frame in traceback.extract_tb(exc.__traceback__) if (shown := _our_file(frame.filename))]
    where = f" in {ours[-1][0]}:{ours[-1][1].lineno} ({ours[-1][1].name})" if ours else ""
    return f"{type(exc).__name__}{where}, after {attempts} attempt(s)"


def run_grading_error(*, run_id: int, reason: str) -> None:
    """Record a run the server failed to grade (an error of ours, after its retries): done, with no result and
    the reason, so it counts for nothing, never as an invalid submission of the team's. The submission goes on
    to its checks, where the grading_error flag holds it for a maintainer, who re-grades it after a fix."""
    run = Run.objects.filter(pk=run_id).only("pk", "submission_id").first()
    if run is None:
        return
    with transaction.atomic():
        landed = (
            Run.objects.filter(pk=run_id)
            .exclude(status=Run.Status.DONE)
            .update(
                status=Run.Status.DONE,
                regraded=None,
                score=None,
                valid_submission=False,
                any_medal=False,
                graded_at=timezone.now(),
                grader_version=GRADER_VERSION,
                grading_error=reason[:500],
            )
        )
        if landed:
            Submission.objects.filter(pk=run.submission_id).update(progress_done=F("progress_done") + 1)
    if landed:
        logger.error("run %s: recorded as a grading error of ours: %s", run_id, reason)
    scheduling.runs_dispatch()
    submission_maybe_finish(submission_id=run.submission_id)


def submission_maybe_finish(*, submission_id: int) -> None:
    if Run.objects.filter(submission_id=submission_id).exclude(status=Run.Status.DONE).exists():
        return
    if submission_transition(submission_id=submission_id, to=S.CHECKING, expected=(S.GRADING,)):
        queue.finish_after_commit(submission_id=submission_id)


def submission_fail(*, submission_id: int, reason: str) -> None:
    """A failure of ours after intake. It counts against no quota, and the bundle's files are removed so a
    failed upload cannot fill the disk: the team uploads the bundle again."""
    with transaction.atomic():
        if submission_transition(
            submission_id=submission_id,
            to=S.FAILED,
            reason=reason,
            expected=(S.RECEIVED, S.VALIDATING, S.GRADING, S.CHECKING),
        ):
            submission = Submission.objects.get(pk=submission_id)
            transaction.on_commit(lambda: submission_files_delete(submission))
