"""The server ends what its GPU workers do not: tasks past their time limit, tasks of a worker that went silent
(queued again as a new attempt, or failed), tasks no worker took in time, and runs whose submission settled.

Every change is one conditional update through the transition table (runners/services/transitions.py), so the
pass is safe to run anywhere, any number of times (runners/tasks.py runs it on Celery beat).
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from grading.models import Submission
from runners import queue
from runners.models import HostedRun, HostedTask
from runners.services.fit import queued_reasons_refresh
from runners.services.hosted import hosted_run_graded, hosted_run_progress
from runners.services.transitions import hosted_tasks_transition

logger = logging.getLogger(__name__)
T = HostedTask.Status


def _lost(task: HostedTask, *, now: datetime, why: str) -> int:
    """A running task its worker lost: queued again as a new attempt (with a fresh capability), or failed
    after HOSTED_MAX_ATTEMPTS. 1 when this call changed it."""
    this_attempt = HostedTask.objects.filter(pk=task.pk, attempt=task.attempt)
    if task.attempt >= settings.HOSTED_MAX_ATTEMPTS:
        return hosted_tasks_transition(
            tasks=this_attempt,
            to=T.FAILED,
            expected=(T.RUNNING,),
            finished_at=now,
            reason=f"{why}; given up after {task.attempt} attempts",
        )
    with transaction.atomic():
        changed = hosted_tasks_transition(
            tasks=this_attempt,
            to=T.QUEUED,
            attempt=task.attempt + 1,
            worker=None,
            queued_at=now,
            started_at=None,
            seen_at=None,
            reason=f"{why} during attempt {task.attempt}; queued again",
        )
        if changed:
            queue.task_enqueue_after_commit(task_id=task.pk, attempt=task.attempt + 1)
    return changed


def hosted_watchdog(*, now: datetime | None = None) -> dict[str, int]:
    """The server ends what its workers do not: a task running past its time limit plus
    HOSTED_OVERTIME_GRACE_SECONDS fails; a task whose worker stopped beating, or beats on without listing it,
    for HOSTED_WORKER_LOST_SECONDS goes back to the queue (a new attempt) or fails after HOSTED_MAX_ATTEMPTS;
    tasks no worker took within HOSTED_QUEUE_TIMEOUT_SECONDS fail; each with its reason. Queued tasks marked
    resend (queued before claims carried a capability) get a fresh message. Runs whose
    submission reached a final status are done: grading's signal does it at once (runners/apps.py), this pass
    is the safety net (runs whose submission ended before the receiver was connected, a receiver that failed).
    Safe to run anywhere, any number of times."""
    now = now or timezone.now()
    lost_before = now - timedelta(seconds=settings.HOSTED_WORKER_LOST_SECONDS)
    counts = {"requeued": 0, "failed": 0, "expired": 0, "overtime": 0, "resent": 0, "done": 0, "reasons": 0}
    touched: set[int] = set()
    running = list(HostedTask.objects.filter(status=T.RUNNING).select_related("worker", "hosted_run"))
    for task in running:
        started = task.started_at or now
        overdue = (now - started).total_seconds() - task.hosted_run.time_limit_hours * 3600
        if overdue > settings.HOSTED_OVERTIME_GRACE_SECONDS:
            counts["overtime"] += hosted_tasks_transition(
                tasks=HostedTask.objects.filter(pk=task.pk, attempt=task.attempt),
                to=T.FAILED,
                expected=(T.RUNNING,),
                finished_at=now,
                reason=f"timed out: still running {overdue / 60:.0f} min after its time limit of "
                f"{task.hosted_run.time_limit_hours:g} h, and its worker reported no end; ended by the portal",
            )
            logger.warning("task %s attempt %s ended by the portal: past its time limit", task.pk, task.attempt)
            touched.add(task.hosted_run_id)
            continue
        worker_name = task.worker.name if task.worker else "its worker"
        silent = task.worker is None or task.worker.beat_at is None or task.worker.beat_at < lost_before
        unlisted = (task.seen_at or started) < lost_before
        if silent:
            why = f"{worker_name} stopped sending heartbeats"
        elif unlisted:
            why = f"{worker_name} kept beating but no longer reported the task"
        else:
            continue
        changed = _lost(task, now=now, why=why)
        counts["failed" if task.attempt >= settings.HOSTED_MAX_ATTEMPTS else "requeued"] += changed
        logger.warning("task %s attempt %s lost: %s", task.pk, task.attempt, why)
        touched.add(task.hosted_run_id)
    for task_id, attempt in HostedTask.objects.filter(status=T.QUEUED, resend=True).values_list("pk", "attempt"):
        with transaction.atomic():
            if HostedTask.objects.filter(pk=task_id, attempt=attempt, status=T.QUEUED, resend=True).update(
                resend=False
            ):
                queue.task_enqueue_after_commit(task_id=task_id, attempt=attempt)
                counts["resent"] += 1
    expired_before = now - timedelta(seconds=settings.HOSTED_QUEUE_TIMEOUT_SECONDS)
    for task in HostedTask.objects.filter(status=T.QUEUED, queued_at__lt=expired_before).select_related("hosted_run"):
        counts["expired"] += hosted_tasks_transition(
            tasks=HostedTask.objects.filter(pk=task.pk),
            to=T.FAILED,
            expected=(T.QUEUED,),
            finished_at=now,
            reason=f"no worker with {task.hosted_run.gpus_per_run} free GPUs took it within "
            f"{settings.HOSTED_QUEUE_TIMEOUT_SECONDS // 3600 or 1} h",
        )
        touched.add(task.hosted_run_id)
    for run_id in touched:
        hosted_run_progress(hosted_run_id=run_id)
    counts["reasons"] = queued_reasons_refresh()  # a worker revoked or gone from the table: queued tasks say so
    for run_id in HostedRun.objects.filter(
        status=HostedRun.Status.GRADING, submission__status__in=Submission.SETTLED_STATUSES
    ).values_list("pk", flat=True):
        hosted_run_graded(hosted_run_id=run_id)
        counts["done"] += 1
    return counts
