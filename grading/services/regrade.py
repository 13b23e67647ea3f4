"""Re-grading on demand: after a grader fix or a new benchmark version, by a maintainer."""

from django.contrib.auth.models import User
from django.db import transaction

from grading import queue
from grading.checks.comparability import not_comparable
from grading.models import Flag, Run, Submission
from grading.services.review import refuse_own_entry
from grading.services.scheduling import runs_dispatch
from grading.services.submissions import submission_transition
from grading.signals import board_cause

S = Submission.Status
REGRADE_REASON = "re-grading on a maintainer's request"
# A failed submission's files are removed (the team uploads again), so only graded ones can be re-graded.
REGRADABLE = (S.IN_REVIEW, S.PUBLISHED)


def submission_regrade(*, submission_id: int, actor: User | None = None) -> bool:
    """Grade every run of a submission again; False when it is not in a state that can be re-graded.

    The team's claims and maintainers' decided flags stay; open flags and aggregates are made anew. An entry
    imported from another board's reports has nothing to re-grade (import_mlebench_runs updates it). A
    maintainer (`actor`) of the entry's team is refused (ReviewRefused, 403): a re-grade takes a published
    entry off the board and makes its checks anew. Re-grading everything (no actor) treats every entry alike.
    """
    if actor is not None:
        submission = Submission.objects.select_related("team").filter(pk=submission_id).first()
        if submission is not None:
            refuse_own_entry(submission=submission, actor=actor, doing="re-grade")
    if Submission.objects.filter(pk=submission_id, origin=Submission.Origin.IMPORT).exists():
        return False
    # A published entry leaves the board while it is re-graded: the board's history says why.
    with transaction.atomic(), board_cause(kind="regrade", reason=REGRADE_REASON):
        if not Run.objects.filter(submission_id=submission_id).exists():
            return _report_only_regrade(submission_id)
        if not submission_transition(
            submission_id=submission_id,
            to=S.GRADING,
            expected=REGRADABLE,
            reason=REGRADE_REASON,
        ):
            return False
        # Each run starts afresh: its attempts (the watchdog's count of lost workers) and a grading error of ours.
        Run.objects.filter(submission_id=submission_id).update(
            status=Run.Status.PENDING, queued_at=None, claimed_at=None, attempts=0, grading_error=""
        )
        Flag.objects.filter(submission_id=submission_id, resolution="", decision="").delete()
        # A grading error was ours, decided or not: the re-grade answers it, and raises it again if it recurs.
        Flag.objects.filter(submission_id=submission_id, code="grading_error").delete()
        verdict = Submission.objects.filter(pk=submission_id).values_list("comparability", flat=True).first()
        Submission.objects.filter(pk=submission_id).update(
            progress_done=0, notified_at=None, comparability=not_comparable(verdict)
        )
        # The scheduler sends its runs among everyone else's, fairly.
        transaction.on_commit(runs_dispatch)
    return True


def _report_only_regrade(submission_id: int) -> bool:

    if submission_transition(submission_id=submission_id, to=S.GRADING, expected=(S.IN_REVIEW, S.PUBLISHED)):
        submission_transition(submission_id=submission_id, to=S.CHECKING, expected=(S.GRADING,))
        queue.finish_after_commit(submission_id=submission_id)
        return True
    return False


def submissions_regrade_all() -> int:
    """Re-grade every submission that has results; returns how many were queued."""
    ids = (
        Submission.objects.filter(status__in=REGRADABLE)
        .exclude(origin=Submission.Origin.IMPORT)
        .values_list("pk", flat=True)
    )
    return sum(submission_regrade(submission_id=pk) for pk in list(ids))
