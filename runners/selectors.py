"""Hosted runs' reads: a team sees its own runs; operators see the workers."""

from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Count, Prefetch, Q, QuerySet
from django.http import Http404
from django.utils import timezone

from portal.accounts.models import Team
from portal.accounts.selectors import teams_for_user
from runners.models import GpuWorker, HostedRun, HostedTask
from runners.services.approval import declared_hardware, hardware_fingerprint, hardware_lines


def _visible(*, user: User) -> QuerySet[HostedRun]:
    return HostedRun.objects.filter(team__in=teams_for_user(user=user)).select_related("team", "submission")


def _with_tasks(runs: QuerySet[HostedRun]) -> QuerySet[HostedRun]:
    """Each run's tasks as run.task_list, with their workers and format-check counts, in one more query."""
    tasks = (
        HostedTask.objects.select_related("competition", "worker")
        .annotate(format_check_count=Count("format_checks"))
        .order_by("competition__slug", "seed")
    )
    return runs.prefetch_related(Prefetch("tasks", queryset=tasks, to_attr="task_list"))


def hosted_run_list(*, user: User, team: Team | None = None) -> list[HostedRun]:
    runs = _visible(user=user)
    if team is not None:
        runs = runs.filter(team=team)
    return list(_with_tasks(runs)[:50])


def hosted_run_get(*, user: User, hosted_run_id: int) -> HostedRun:
    """Only a member of the run's team sees it; anyone else gets the same 404 as for a run that does not exist."""
    run = _with_tasks(_visible(user=user).filter(pk=hosted_run_id)).first()
    if run is None:
        raise Http404(f"No hosted run {hosted_run_id} of your teams.")
    return run


def worker_list() -> list[GpuWorker]:
    """Every worker with its running tasks and whether it still beats."""
    lost_before = timezone.now() - timedelta(seconds=settings.HOSTED_WORKER_LOST_SECONDS)
    annotated = GpuWorker.objects.annotate(running=Count("tasks", filter=Q(tasks__status=HostedTask.Status.RUNNING)))
    workers: list[GpuWorker] = list(annotated.order_by("name"))
    for worker in workers:
        worker.alive = worker.beat_at is not None and worker.beat_at >= lost_before  # type: ignore[attr-defined]
    return workers


def worker_approval_list() -> list[GpuWorker]:
    """The registered workers, pending ones first, each with its declared and measured hardware line by line
    (.lines), the fingerprint of its declaration (.fingerprint) and whether it still beats (.alive)."""
    workers = [worker for worker in worker_list() if worker.registered_at is not None and worker.revoked_at is None]
    for worker in workers:
        worker.lines = hardware_lines(worker)  # type: ignore[attr-defined]
        worker.fingerprint = hardware_fingerprint(declared_hardware(worker))  # type: ignore[attr-defined]
    return sorted(workers, key=lambda worker: (worker.approved_at is not None, worker.name))
