"""What /healthz and the status page say about each part of the portal.

One read, a few queries, nothing cached: the database, the broker, the grading workers (their pool processes'
heartbeats, grading/services/workers.py), the scheduler (celery beat: the grading watchdog it sends stamps a
row when it finishes), the GPU workers (registered and beating) and the work waiting for them. Each part is
`ok`, `down` (the portal cannot do its work: /healthz answers 503 naming it), `late` (a warning; 200), `none`
(nothing of the kind, which is fine) or `unknown` (the database is down, so it cannot be read). What it shows is
public: counts and ages, never a name, a team, a file or a submission.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.db.models import Count, Max, Min, Q
from django.utils import timezone

from grading.models import PeriodicStamp, Run, Submission, WorkerHeartbeat
from portal.celery import app as celery_app
from runners.models import GpuWorker, HostedTask

OK, DOWN, LATE, NONE = "ok", "down", "late", "none"
WATCHDOG = "grading.watchdog"
# Submissions waiting for a short step (validation, checking) that a grading worker's process takes.
WAITING_STEPS = (Submission.Status.RECEIVED, Submission.Status.VALIDATING, Submission.Status.CHECKING)


@dataclass(frozen=True)
class Part:
    name: str
    state: str
    detail: str  # one line for people
    facts: dict = field(default_factory=dict)  # the numbers behind it

    def as_dict(self) -> dict:
        return {"state": self.state, "detail": self.detail, **self.facts}


@dataclass(frozen=True)
class Health:
    parts: list[Part]
    checked_at: datetime

    @property
    def down(self) -> list[str]:
        return [part.name for part in self.parts if part.state == DOWN]

    @property
    def late(self) -> list[str]:
        return [part.name for part in self.parts if part.state == LATE]

    @property
    def status(self) -> str:
        return "unavailable" if self.down else "degraded" if self.late else "ok"

    def as_dict(self) -> dict:
        body: dict = {
            "status": self.status,
            # One word per part ("ok", or the state and why), as before; "parts" has the numbers.
            "checks": {p.name: p.state if p.state in (OK, NONE) else f"{p.state}: {p.detail}" for p in self.parts},
            "parts": {part.name: part.as_dict() for part in self.parts},
            "checked_at": self.checked_at.isoformat(),
        }
        if self.down:
            body["down"] = self.down
        if self.late:
            body["late"] = self.late
        return body


def _error(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}".strip()[:300]


def _age(now: datetime, then: datetime | None) -> float | None:
    return None if then is None else round(max((now - then).total_seconds(), 0.0), 1)


def _ago(seconds: float | None) -> str:
    return "never" if seconds is None else f"{seconds:.0f} s ago"


def database_part() -> Part:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return Part("database", DOWN, _error(exc))
    return Part("database", OK, f"{connection.vendor} answers")


def broker_part() -> Part:
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
            # The filesystem transport "connects" without touching disk; opening a channel does.
            _ = conn.default_channel
            transport = conn.transport_cls
    except Exception as exc:
        return Part("broker", DOWN, _error(exc))
    return Part("broker", OK, f"{transport} answers", {"transport": transport})


def grading_parts(now: datetime) -> list[Part]:
    """The grading workers, the work waiting for them and the scheduler, in five queries."""
    lost = settings.WORKER_LOST_SECONDS
    beats = WorkerHeartbeat.objects.aggregate(
        alive=Count("pk", filter=Q(beat_at__gte=now - timedelta(seconds=lost))), last=Max("beat_at")
    )
    runs = Run.objects.filter(submission__status=Submission.Status.GRADING).aggregate(
        waiting=Count("pk", filter=Q(status__in=(Run.Status.PENDING, Run.Status.QUEUED))),
        oldest_queued=Min("queued_at", filter=Q(status=Run.Status.QUEUED)),
        grading=Count("pk", filter=Q(status=Run.Status.GRADING)),
    )
    steps = Submission.objects.filter(status__in=WAITING_STEPS).aggregate(
        n=Count("pk"), oldest=Min("status_changed_at")
    )
    alive, last_beat = beats["alive"], _age(now, beats["last"])
    waiting, grading = runs["waiting"], runs["grading"]
    oldest_run, oldest_step = _age(now, runs["oldest_queued"]), _age(now, steps["oldest"])
    facts = {"alive": alive, "last_beat_seconds": last_beat, "lost_after_seconds": lost, "runs_grading": grading}
    if alive:
        workers = Part(
            "grading_workers",
            OK,
            f"{alive} worker process(es) beat within {lost} s; {grading} run(s) being graded",
            facts,
        )
    else:
        workers = Part(
            "grading_workers",
            DOWN,
            f"no grading worker process has beaten for {lost} s (last beat: {_ago(last_beat)})",
            facts,
        )
    queue_facts = {
        "runs_waiting": waiting,
        "oldest_queued_run_seconds": oldest_run,
        "submissions_waiting": steps["n"],
        "oldest_waiting_submission_seconds": oldest_step,
    }
    work = f"{waiting} run(s) and {steps['n']} submission step(s) wait"
    if (waiting or steps["n"]) and not alive:
        queue = Part("grading_queue", DOWN, f"{work}, and no grading worker is alive to take them", queue_facts)
    else:
        oldest = (
            f" (oldest queued run: {_ago(oldest_run)}, oldest step: {_ago(oldest_step)})"
            if waiting or steps["n"]
            else ""
        )
        queue = Part("grading_queue", OK, work + oldest, queue_facts)
    return [workers, queue, scheduler_part(now, alive=alive, grading=grading)]


def scheduler_part(now: datetime, *, alive: int, grading: int) -> Part:
    period = settings.CELERY_BEAT_SCHEDULE["grading-watchdog"]["schedule"]
    finished = PeriodicStamp.objects.filter(task=WATCHDOG).values_list("finished_at", flat=True).first()
    age = _age(now, finished)
    facts = {"watchdog_finished_seconds": age, "every_seconds": period}
    if age is None:
        return Part("scheduler", LATE, "the watchdog (sent by celery beat) has not finished once yet", facts)
    if age <= 3 * period:
        return Part("scheduler", OK, f"the watchdog finished {_ago(age)}; celery beat sends it every {period} s", facts)
    why = (
        "every live worker process is grading, so it waits for one"
        if alive and grading >= alive
        else "celery beat may be down, or no worker takes the default queue"
    )
    return Part("scheduler", LATE, f"the watchdog last finished {_ago(age)}, not every {period} s: {why}", facts)


def gpu_part(now: datetime) -> Part:
    """GPU workers, and the hosted tasks waiting for one: down when tasks wait that no live worker can take."""
    since = now - timedelta(seconds=settings.HOSTED_WORKER_LOST_SECONDS)
    registered = GpuWorker.objects.filter(revoked_at__isnull=True, registered_at__isnull=False)
    workers = registered.aggregate(
        n=Count("pk"),
        alive=Count("pk", filter=Q(beat_at__gte=since)),
        gpus=Max("gpus", filter=Q(beat_at__gte=since)),
        last=Max("beat_at"),
    )
    most_gpus = workers["gpus"] if workers["gpus"] is not None else -1
    tasks = HostedTask.objects.filter(status=HostedTask.Status.QUEUED).aggregate(
        n=Count("pk"),
        oldest=Min("queued_at"),
        unfit=Count("pk", filter=Q(hosted_run__gpus_per_run__gt=most_gpus)),
    )
    facts = {
        "registered": workers["n"],
        "alive": workers["alive"],
        "last_beat_seconds": _age(now, workers["last"]),
        "tasks_waiting": tasks["n"],
        "oldest_waiting_task_seconds": _age(now, tasks["oldest"]),
        "tasks_no_live_worker_fits": tasks["unfit"],
    }
    lost = settings.HOSTED_WORKER_LOST_SECONDS
    if tasks["n"] and not workers["alive"]:
        return Part(
            "gpu_workers", DOWN, f"{tasks['n']} hosted task(s) wait and no GPU worker beat within {lost} s", facts
        )
    if tasks["unfit"]:
        return Part(
            "gpu_workers",
            DOWN,
            f"{tasks['unfit']} hosted task(s) wait for more GPUs than any live worker has ({most_gpus})",
            facts,
        )
    if not workers["n"]:
        return Part("gpu_workers", NONE, "no GPU worker is registered, and no hosted task waits", facts)
    if not workers["alive"]:
        return Part("gpu_workers", LATE, f"{workers['n']} registered, none beat within {lost} s", facts)
    return Part(
        "gpu_workers",
        OK,
        f"{workers['alive']} of {workers['n']} beat within {lost} s; {tasks['n']} task(s) wait",
        facts,
    )


def health_report(*, now: datetime | None = None) -> Health:
    now = now or timezone.now()
    database = database_part()
    parts = [database, broker_part()]
    if database.state == OK:
        parts += [*grading_parts(now), gpu_part(now)]
    else:  # nothing below can be read without the database
        parts += [
            Part(name, "unknown", "the database is down")
            for name in ("grading_workers", "grading_queue", "scheduler", "gpu_workers")
        ]
    return Health(parts=parts, checked_at=now)


def worker_processes(*, now: datetime | None = None) -> list[dict]:
    """For maintainers: each grading worker process that beat in the last hour, with its age and state."""
    now = now or timezone.now()
    lost = timedelta(seconds=settings.WORKER_LOST_SECONDS)
    rows = WorkerHeartbeat.objects.filter(beat_at__gte=now - timedelta(hours=1)).order_by("-beat_at")
    return [
        {"name": row.name, "beat_seconds": _age(now, row.beat_at), "alive": row.beat_at >= now - lost} for row in rows
    ]
