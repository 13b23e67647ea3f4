"""Celery tasks of the pipeline. They take ids, claim work by conditional updates, and are safe to run twice."""

import logging
from collections.abc import Callable
from datetime import timedelta

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import OperationalError
from django.utils import timezone

from grading import queue
from grading.engine.heap import release_memory
from grading.models import PeriodicStamp, Submission
from grading.services import finish, pipeline, registrations, scheduling
from grading.services.workers import heartbeats_prune

logger = logging.getLogger(__name__)
S = Submission.Status
MAX_RUN_ATTEMPTS = scheduling.MAX_RUN_ATTEMPTS
# Database hiccups are passing failures: retry a few times, then give up with a reason.
TRANSIENT = (OperationalError,)


def _submission_step(step: Callable[..., object], submission_id: int, doing: str) -> None:
    """Run a step; a passing failure is retried by Celery, anything else fails the submission with a reason."""
    try:
        step(submission_id=submission_id)
    except TRANSIENT:
        raise
    except Exception as exc:
        logger.exception("%s submission %s failed", doing, submission_id)
        pipeline.submission_fail(
            submission_id=submission_id, reason=f"The server failed while {doing}: {type(exc).__name__}."
        )


@shared_task(name=queue.VALIDATE_SUBMISSION, bind=True, autoretry_for=TRANSIENT, max_retries=3, retry_backoff=True)
def validate_submission(self: Task, submission_id: int) -> None:
    _submission_step(pipeline.submission_validate, submission_id, "validating")


@shared_task(
    name=queue.GRADE_RUN,
    bind=True,
    autoretry_for=TRANSIENT,
    max_retries=3,
    retry_backoff=True,
    soft_time_limit=settings.GRADING_SOFT_TIME_LIMIT,
    time_limit=settings.GRADING_HARD_TIME_LIMIT,
)
def grade_run(self: Task, run_id: int) -> None:
    # Redis gives a message back when the process that held it died unacknowledged.
    redelivered = bool((self.request.delivery_info or {}).get("redelivered"))
    try:
        pipeline.run_grade(run_id=run_id, redelivered=redelivered)
    except SoftTimeLimitExceeded:
        pipeline.run_give_up(
            run_id=run_id, reason=f"grading took longer than {settings.GRADING_SOFT_TIME_LIMIT} s and was stopped"
        )
    except TRANSIENT:
        if self.request.retries < self.max_retries:
            _release_for_retry(run_id)
        raise
    except Exception as exc:
        # An error of ours in one run (a grader's bug, answers we cannot read): tried again, perhaps on another
        # process, then recorded for that run alone; the rest of the submission is graded all the same.
        tries = self.request.retries
        logger.exception("grading run %s failed (try %s of %s)", run_id, tries + 1, settings.GRADING_ERROR_RETRIES + 1)
        if tries < settings.GRADING_ERROR_RETRIES:
            _release_for_retry(run_id)
            raise self.retry(
                countdown=settings.GRADING_ERROR_RETRY_SECONDS * (tries + 1),
                max_retries=settings.GRADING_ERROR_RETRIES,
            ) from exc
        pipeline.run_grading_error(run_id=run_id, reason=pipeline.grading_error_reason(exc, attempts=tries + 1))
    finally:
        release_memory()


def _release_for_retry(run_id: int) -> None:
    """Hand the run back to the queue, so the retry (on any process) can claim it; when even this fails, the
    watchdog re-queues it once the hard time limit has passed."""
    try:
        scheduling.run_release(run_id=run_id)
    except TRANSIENT:
        logger.warning("run %s could not be released for its retry", run_id)


@shared_task(name=queue.FINISH_SUBMISSION, bind=True, autoretry_for=TRANSIENT, max_retries=3, retry_backoff=True)
def finish_submission(self: Task, submission_id: int) -> None:
    _submission_step(finish.submission_finish, submission_id, "checking")


@shared_task
def watchdog() -> dict:
    """Move stuck work along: re-queue runs whose worker died, re-send lost messages and steps, fail what is
    hopeless, then fill the grading queue."""
    now = timezone.now()
    requeued, given_up = pipeline.runs_requeue_lost(now=now)
    runs_resent, released = scheduling.runs_resend_lost(now=now)
    resent = failed = 0
    lost = now - timedelta(minutes=10)
    for submission_id in Submission.objects.filter(status=S.RECEIVED, status_changed_at__lt=lost).values_list(
        "pk", flat=True
    ):
        queue.validate_now(submission_id=submission_id)
        resent += 1
    for submission_id in Submission.objects.filter(status=S.VALIDATING, status_changed_at__lt=lost).values_list(
        "pk", flat=True
    ):
        if pipeline.submission_transition(submission_id=submission_id, to=S.RECEIVED, expected=(S.VALIDATING,)):
            queue.validate_now(submission_id=submission_id)
            resent += 1
    for submission_id in Submission.objects.filter(status=S.CHECKING, status_changed_at__lt=lost).values_list(
        "pk", flat=True
    ):
        queue.finish_now(submission_id=submission_id)
        resent += 1
    deadline = now - timedelta(minutes=settings.SUBMISSION_DEADLINE_MINUTES)
    for submission in Submission.objects.filter(
        status__in=(S.RECEIVED, S.VALIDATING, S.GRADING, S.CHECKING), status_changed_at__lt=deadline
    ):
        pipeline.submission_fail(
            submission_id=submission.pk,
            reason=f"It stayed in '{submission.status}' for more than {settings.SUBMISSION_DEADLINE_MINUTES} minutes; "
            "the watchdog stopped it. It does not count against your quota: upload the bundle again.",
        )
        failed += 1
    heartbeats_prune(now=now)
    # A registration whose deadline passed unnamed counts against its agent's entries from now on (SPEC §9).
    lapsed = registrations.registrations_lapse(now=now)
    dispatched = len(scheduling.runs_dispatch())
    # The trace celery beat leaves: /healthz reads when the watchdog it sends last finished.
    PeriodicStamp.objects.update_or_create(task="grading.watchdog", defaults={"finished_at": timezone.now()})
    return {
        "requeued": requeued,
        "given_up": given_up,
        "runs_resent": runs_resent,
        "released": released,
        "resent": resent,
        "failed": failed,
        "registrations_lapsed": lapsed,
        "dispatched": dispatched,
    }
