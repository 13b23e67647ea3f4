"""What GPU workers do through the worker API: register, beat, claim a task, check a format, finish.

A worker holds a token of its own (runners/auth.py), no database credentials and no answers. Each
call here is one conditional update, so a repeated or late call (a re-queued task's old attempt, a
message delivered twice) changes nothing.
"""

import logging
import shutil
import tempfile
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files import File
from django.core.files.storage import storages
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from competitions.models import CompetitionPack
from grading.models import Submission
from grading.services.grade_file import grade_file
from portal.accounts.keys import hash_key, new_key
from runners import queue
from runners.models import FormatCheck, GpuWorker, HostedRun, HostedTask
from runners.secrets import env_decrypt
from runners.services.hosted import hosted_run_graded, hosted_run_progress

logger = logging.getLogger(__name__)
T = HostedTask.Status
OUTCOMES = {
    "exited": T.DONE,
    "timed_out": T.TIMED_OUT,
    "over_cap": T.OVER_CAP,
    "failed": T.FAILED,
    "cancelled": T.CANCELLED,
}
OUTPUT_TAIL_CHARS = 8000


class WorkerRefused(Exception):
    """A worker's call that cannot be honoured; status and code go to the worker (409: skip this task)."""

    def __init__(self, *, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def worker_token_issue(*, name: str) -> tuple[GpuWorker, str]:
    """A new worker (or a new token for one, revoking the old): the key is shown once, only its hash kept."""
    key = new_key()
    worker, _ = GpuWorker.objects.update_or_create(
        name=name, defaults={"token_hash": hash_key(key), "token_prefix": key[:12], "revoked_at": None}
    )
    return worker, key


@dataclass(frozen=True, kw_only=True)
class Capacity:
    gpus: int
    gpu_model: str
    gpu_memory_gb: float
    cpus: float
    memory_gb: float
    slots: int
    backend: str
    version: str


def worker_register(*, worker: GpuWorker, capacity: Capacity) -> GpuWorker:
    now = timezone.now()
    for name, value in vars(capacity).items():
        setattr(worker, name, value)
    worker.registered_at = worker.beat_at = now
    worker.save()
    logger.info("worker %s registered: %s", worker.name, capacity)
    return worker


def worker_beat(*, worker: GpuWorker, running: list[dict[str, Any]]) -> list[dict[str, int]]:
    """Record a heartbeat and the live state of the worker's tasks; answer which of them to stop."""
    GpuWorker.objects.filter(pk=worker.pk).update(beat_at=timezone.now())
    for item in running:
        HostedTask.objects.filter(pk=item["task_id"], attempt=item["attempt"], worker=worker, status=T.RUNNING).update(
            elapsed_seconds=item["elapsed_seconds"], output_tail=item["output_tail"][-OUTPUT_TAIL_CHARS:]
        )
    return [
        {"task_id": pk, "attempt": attempt}
        for pk, attempt in HostedTask.objects.filter(
            worker=worker, status=T.RUNNING, cancel_requested=True
        ).values_list("pk", "attempt")
    ]


def _held(task: HostedTask, worker: GpuWorker, attempt: int) -> None:
    if task.worker_id != worker.pk or task.attempt != attempt or task.status != T.RUNNING:
        raise WorkerRefused(
            status=409, code="not_held", message=f"task {task.pk} attempt {attempt} is not running on {worker.name}"
        )


def task_claim(*, worker: GpuWorker, task_id: int, attempt: int, public_data_url: str) -> dict[str, Any]:
    """Take a queued task when it fits this worker's free capacity, and answer what the worker runs."""
    with transaction.atomic():
        worker = GpuWorker.objects.select_for_update().get(pk=worker.pk)  # one claim at a time per worker
        task = HostedTask.objects.select_related("hosted_run", "competition__pack").filter(pk=task_id).first()
        if task is None or task.status != T.QUEUED or task.attempt != attempt:
            raise WorkerRefused(
                status=409, code="not_queued", message=f"task {task_id} attempt {attempt} is not queued"
            )
        run = task.hosted_run
        if worker.registered_at is None:
            # Its capacity is unknown until it registers (it does on start): try again in a moment.
            raise WorkerRefused(
                status=409, code="does_not_fit", message=f"{worker.name} has not registered its capacity yet"
            )
        busy = HostedTask.objects.filter(worker=worker, status=T.RUNNING)
        gpus_busy = busy.aggregate(n=Sum("hosted_run__gpus_per_run"))["n"] or 0
        if busy.count() >= worker.slots or gpus_busy + run.gpus_per_run > worker.gpus:
            raise WorkerRefused(
                status=409,
                code="does_not_fit",
                message=f"{worker.name} has {worker.gpus - gpus_busy} of {worker.gpus} GPUs and "
                f"{worker.slots - busy.count()} of {worker.slots} slots free; the task needs {run.gpus_per_run} GPUs",
            )
        now = timezone.now()
        taken = HostedTask.objects.filter(pk=task.pk, status=T.QUEUED, attempt=attempt).update(
            status=T.RUNNING, worker=worker, started_at=now, cancel_requested=False, output_tail=""
        )
        if not taken:  # another worker's claim (or a cancel) got there between the read and this update
            raise WorkerRefused(
                status=409, code="not_queued", message=f"task {task_id} attempt {attempt} is not queued"
            )
    hosted_run_progress(hosted_run_id=run.pk)
    pack = task.competition.pack
    logger.info("task %s attempt %s claimed by %s", task.pk, attempt, worker.name)
    env = env_decrypt(run.env_encrypted)
    return {
        "task_id": task.pk,
        "attempt": attempt,
        "hosted_run_id": run.pk,
        "competition_id": task.competition.slug,
        "seed": task.seed,
        "image": run.image,
        "env": env,
        "secret_names": sorted(env),
        "time_limit_seconds": run.time_limit_hours * 3600,
        "gpus": run.gpus_per_run,
        "cpus": task_cpus(worker),
        "memory_gb": task_memory_gb(worker),
        "shm_gb": settings.HOSTED_SHM_GB,
        "network": settings.HOSTED_ALLOW_NETWORK,
        "max_output_bytes": settings.HOSTED_MAX_OUTPUT_BYTES,
        "public_data": {"url": public_data_url, "sha256": pack.public_sha256, "bytes": pack.public_bytes},
    }


def task_cpus(worker: GpuWorker) -> float:
    """The CPUs one task gets: the board's standard share, or less on a smaller worker."""
    share = worker.cpus / max(worker.slots, 1) if worker.cpus else settings.HOSTED_CPUS_PER_RUN
    return float(min(settings.HOSTED_CPUS_PER_RUN, share))


def task_memory_gb(worker: GpuWorker) -> float:
    share = worker.memory_gb / max(worker.slots, 1) if worker.memory_gb else settings.HOSTED_MEMORY_GB_PER_RUN
    return float(min(settings.HOSTED_MEMORY_GB_PER_RUN, share))


def task_format_check(*, worker: GpuWorker, task_id: int, attempt: int, upload: UploadedFile) -> dict[str, Any]:
    """The agent's only oracle: is this submission valid, and if not why. Never a score. Every call is kept."""
    task = HostedTask.objects.select_related("competition__pack").filter(pk=task_id).first()
    if task is None:
        raise WorkerRefused(status=404, code="not_found", message=f"no task {task_id}")
    _held(task, worker, attempt)
    limit = task.competition.pack.max_submission_bytes or settings.BUNDLE_MAX_SUBMISSION_BYTES
    size = upload.size or 0
    if size > limit:
        valid, reason = False, f"the file is {size} bytes; a submission for {task.competition.slug} is at most {limit}"
    else:
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "submission.csv"
            with path.open("wb") as out:
                for chunk in upload.chunks(1 << 20):
                    out.write(chunk)
            report = grade_file(competition=task.competition, submission_path=path, display_path="submission.csv")
        valid, reason = report.valid_submission, report.reason or ""
    FormatCheck.objects.create(task=task, attempt=attempt, valid=valid, reason=reason, bytes=size)
    return {"valid": valid, "reason": reason or None}


def task_finish(
    *, worker: GpuWorker, task_id: int, outcome: dict[str, Any], archive: UploadedFile | None
) -> HostedTask:
    """Keep what the worker collected and end the task; once every task of the run ended, it is assembled."""
    attempt = outcome.get("attempt")
    status = OUTCOMES.get(outcome.get("status", ""))
    if not isinstance(attempt, int) or status is None:
        raise WorkerRefused(
            status=400, code="invalid", message=f"outcome needs attempt (int) and status ({', '.join(OUTCOMES)})"
        )
    task = HostedTask.objects.filter(pk=task_id).first()
    if task is None:
        raise WorkerRefused(status=404, code="not_found", message=f"no task {task_id}")
    _held(task, worker, attempt)
    archive_path, archive_bytes = "", 0
    if archive is not None and status != T.OVER_CAP:
        if (archive.size or 0) > settings.HOSTED_MAX_OUTPUT_BYTES:
            status = T.OVER_CAP
        else:
            archive_path = storages["private"].save(f"hosted/{task.hosted_run_id}/{task.pk}-{attempt}.tar.gz", archive)
            archive_bytes = archive.size or 0
    reason = str(outcome.get("reason") or "")[:2000]
    exit_code = outcome.get("exit_code")

    def seconds(key: str) -> float | None:
        value = outcome.get(key)
        return float(value) if isinstance(value, int | float) and value >= 0 else None

    updated = HostedTask.objects.filter(pk=task.pk, attempt=attempt, worker=worker, status=T.RUNNING).update(
        status=status,
        reason=reason,
        exit_code=exit_code if isinstance(exit_code, int) else None,
        elapsed_seconds=seconds("elapsed_seconds"),
        setup_seconds=seconds("setup_seconds"),
        collect_seconds=seconds("collect_seconds"),
        finished_at=timezone.now(),
        archive_path=archive_path,
        archive_bytes=archive_bytes,
    )
    if not updated and archive_path:
        storages["private"].delete(archive_path)
    logger.info("task %s attempt %s finished on %s: %s", task.pk, attempt, worker.name, status)
    hosted_run_progress(hosted_run_id=task.hosted_run_id)
    task.refresh_from_db()
    return task


def public_data_open(*, slug: str) -> tuple[File, str, int]:
    """The public data archive of a competition of the current benchmark: (file, sha256, bytes)."""
    pack = CompetitionPack.objects.filter(competition__benchmark__is_current=True, competition__slug=slug).first()
    if pack is None or not pack.public_archive_path:
        raise WorkerRefused(status=404, code="not_found", message=f"no public data for {slug}")
    return storages["private"].open(pack.public_archive_path, "rb"), pack.public_sha256, pack.public_bytes


def hosted_watchdog(*, now=None) -> dict[str, int]:
    """Tasks whose worker stopped beating go back to the queue (a new attempt) or fail after
    HOSTED_MAX_ATTEMPTS; tasks no worker took within HOSTED_QUEUE_TIMEOUT_SECONDS fail with the reason;
    runs whose submission reached a final status are done. Safe to run anywhere, any number of times."""
    now = now or timezone.now()
    lost_before = now - timedelta(seconds=settings.HOSTED_WORKER_LOST_SECONDS)
    counts = {"requeued": 0, "failed": 0, "expired": 0, "done": 0}
    lost = HostedTask.objects.filter(status=T.RUNNING).filter(worker__beat_at__lt=lost_before).select_related("worker")
    touched: set[int] = set()
    for task in lost:
        worker_name = task.worker.name if task.worker else "its worker"
        if task.attempt >= settings.HOSTED_MAX_ATTEMPTS:
            changed = HostedTask.objects.filter(pk=task.pk, attempt=task.attempt, status=T.RUNNING).update(
                status=T.FAILED,
                finished_at=now,
                reason=f"{worker_name} stopped sending heartbeats; given up after {task.attempt} attempts",
            )
            counts["failed"] += changed
        else:
            with transaction.atomic():
                changed = HostedTask.objects.filter(pk=task.pk, attempt=task.attempt, status=T.RUNNING).update(
                    status=T.QUEUED,
                    attempt=task.attempt + 1,
                    worker=None,
                    queued_at=now,
                    started_at=None,
                    reason=f"{worker_name} stopped sending heartbeats during attempt {task.attempt}; queued again",
                )
                if changed:
                    queue.task_enqueue_after_commit(task_id=task.pk, attempt=task.attempt + 1)
            counts["requeued"] += changed
        logger.warning("task %s: %s lost (attempt %s)", task.pk, worker_name, task.attempt)
        touched.add(task.hosted_run_id)
    expired_before = now - timedelta(seconds=settings.HOSTED_QUEUE_TIMEOUT_SECONDS)
    for task in HostedTask.objects.filter(status=T.QUEUED, queued_at__lt=expired_before):
        counts["expired"] += HostedTask.objects.filter(pk=task.pk, status=T.QUEUED).update(
            status=T.FAILED,
            finished_at=now,
            reason=f"no worker with {task.hosted_run.gpus_per_run} free GPUs took it within "
            f"{settings.HOSTED_QUEUE_TIMEOUT_SECONDS // 3600 or 1} h",
        )
        touched.add(task.hosted_run_id)
    for run_id in touched:
        hosted_run_progress(hosted_run_id=run_id)
    for run_id in HostedRun.objects.filter(
        status=HostedRun.Status.GRADING, submission__status__in=Submission.FINAL_STATUSES
    ).values_list("pk", flat=True):
        hosted_run_graded(hosted_run_id=run_id)
        counts["done"] += 1
    return counts


def hosted_files_delete(*, hosted_run: HostedRun) -> None:
    """The collected archives, once they are inside the submission's bundle."""
    for name in hosted_run.tasks.exclude(archive_path="").values_list("archive_path", flat=True):
        try:
            storages["private"].delete(name)
        except OSError:
            pass
    shutil.rmtree(Path(settings.PRIVATE_ROOT) / "hosted" / str(hosted_run.pk), ignore_errors=True)
