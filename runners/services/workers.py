"""What GPU workers do through the worker API: register, beat, claim a task, check a format, finish (the
server's side of what they fail to do is runners/services/watchdog.py).

A worker holds a token of its own (runners/auth.py), no database credentials and no answers. Each
call here is one conditional update, so a repeated or late call (a re-queued task's old attempt, a
message delivered twice) changes nothing.
"""

import logging
import math
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
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
from grading.services.grade_file import FormatCheckFailed, format_check_isolated
from portal.accounts.keys import hash_key, new_key
from portal.refusals import Refused
from runners.capability import capability_matches
from runners.models import FormatCheck, GpuWorker, HostedRun, HostedTask
from runners.redaction import redact, secret_values
from runners.secrets import env_decrypt
from runners.services.approval import approval_after_register
from runners.services.fit import WAITING, queued_reasons_refresh, task_cpus, task_memory_gb
from runners.services.hosted import hosted_run_progress
from runners.services.transitions import hosted_tasks_transition

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
OUTPUT_TAIL_LIMIT = 65536  # the most a worker may send (as in a heartbeat); OUTPUT_TAIL_CHARS of it are kept


class WorkerRefused(Refused):
    """A worker's call that cannot be honoured (409: skip this task)."""


def _invalid(field: str, message: str) -> WorkerRefused:
    return WorkerRefused(status=400, code="invalid", message=f"{field}: {message}", field=field)


# --- what a worker sends: redacted, cleaned of its folders, range-checked -------------------------------

# An absolute path on the worker's machine (its work dir, its agents dir, a traceback's file) shows only its
# last part; the agent's own paths inside its container (/home/...) are the team's to see.
_WORKER_PATH = re.compile(r"(?<![\w:/.~-])/(?!home/)(?:[\w.@+-]+/)+([\w.@+-]*)")
EXIT_CODES = range(-255, 256)
REASON_CHARS = 2000


def run_secrets(run: HostedRun) -> dict[str, str]:
    env = env_decrypt(run.env_encrypted)
    return secret_values(env, env)


def worker_reason(text: str, *, secrets: dict[str, str], paths: bool = True) -> str:
    """A reason a worker sent, as the portal keeps it: the run's secret values and their disguises replaced by
    "[secret NAME]" (the worker does it first; this holds if it did not), the worker's folders shown by their
    last part only (paths=True), its first REASON_CHARS characters."""
    text = redact(text, secrets)
    if paths:
        text = _WORKER_PATH.sub(lambda match: f"…/{match.group(1)}", text)
    return text[:REASON_CHARS]


def worker_tail(text: str, *, secrets: dict[str, str]) -> str:
    """An agent's output tail, redacted like a reason and cut to its last OUTPUT_TAIL_CHARS characters. A
    secret the worker's cut split in two at its start is not recognised here (the worker drops such pieces)."""
    return redact(text, secrets)[-OUTPUT_TAIL_CHARS:]


def _seconds_limit(run: HostedRun) -> float:
    return run.time_limit_hours * 3600 + settings.HOSTED_OVERTIME_GRACE_SECONDS


def _checked_seconds(value: object, *, field: str, run: HostedRun, optional: bool) -> float | None:
    """A duration a worker measured: finite, from 0 to the run's time limit plus the grace; else a 400."""
    if value is None and optional:
        return None
    limit = _seconds_limit(run)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _invalid(field, f"must be a finite number of seconds from 0 to {limit:g}")
    if not 0 <= value <= limit:
        raise _invalid(
            field, f"{value:g} s is outside 0 to {limit:g} s (the run's time limit plus HOSTED_OVERTIME_GRACE_SECONDS)"
        )
    return float(value)


def worker_token_issue(*, name: str, trusted: bool = False) -> tuple[GpuWorker, str]:
    """A new worker (or a new token for one, revoking the old): the key is shown once, only its hash kept. A new
    token may go to another machine: the worker waits for approval again, unless the operator vouches for the
    machine (trusted: the hardware it declares is approved as it registers, runners/services/approval.py)."""
    key = new_key()
    worker, _ = GpuWorker.objects.update_or_create(
        name=name,
        defaults={
            "token_hash": hash_key(key),
            "token_prefix": key[:12],
            "revoked_at": None,
            "approved_at": None,
            "approved_by": None,
            "auto_approve": trusted,
        },
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
    sandbox: str = ""
    # What the worker measured of itself (runners/worker/measure.py): shown to the maintainer who approves it.
    measured: dict[str, Any] = field(default_factory=dict)


def worker_register(*, worker: GpuWorker, capacity: Capacity) -> GpuWorker:
    """Record what the worker declares (and measured); a new declaration of hardware waits for approval."""
    now = timezone.now()
    for name, value in vars(capacity).items():
        setattr(worker, name, value)
    worker.registered_at = worker.beat_at = now
    approval_after_register(worker)
    worker.save()
    logger.info("worker %s registered (%s): %s", worker.name, worker_approval_state(worker), capacity)
    queued_reasons_refresh()  # its capacity may have shrunk (or grown): queued tasks say whether any fits now
    return worker


def worker_approval_state(worker: GpuWorker) -> str:
    return "approved" if worker.approved_at is not None else "pending approval"


def worker_beat(*, worker: GpuWorker, running: list[dict[str, Any]]) -> list[dict[str, int]]:
    """Record a heartbeat and the live state of the worker's tasks; answer which of them to stop: those the
    team cancelled, and those it lists that are no longer its (queued again or ended by the portal).
    A bad number refuses the whole beat (400 naming the field) and records nothing of it."""
    listed = {(item["task_id"], item["attempt"]) for item in running}
    held = {
        (task.pk, task.attempt): task
        for task in HostedTask.objects.select_related("hosted_run").filter(
            pk__in={task_id for task_id, _ in listed}, worker=worker, status=T.RUNNING
        )
    }
    for index, item in enumerate(running):
        task = held.get((item["task_id"], item["attempt"]))
        if task is not None:
            _checked_seconds(
                item["elapsed_seconds"], field=f"running[{index}].elapsed_seconds", run=task.hosted_run, optional=False
            )
    now = timezone.now()
    GpuWorker.objects.filter(pk=worker.pk).update(beat_at=now)
    secrets: dict[int, dict[str, str]] = {}
    for item in running:
        task = held.get((item["task_id"], item["attempt"]))
        if task is None:
            continue
        if task.hosted_run_id not in secrets:
            secrets[task.hosted_run_id] = run_secrets(task.hosted_run)
        tail = worker_tail(item["output_tail"], secrets=secrets[task.hosted_run_id])
        HostedTask.objects.filter(pk=task.pk, attempt=task.attempt, worker=worker, status=T.RUNNING).update(
            elapsed_seconds=float(item["elapsed_seconds"]), output_tail=tail, seen_at=now
        )
    cancelled = HostedTask.objects.filter(worker=worker, status=T.RUNNING, cancel_requested=True)
    stop = set(cancelled.values_list("pk", "attempt")) | (listed - set(held))
    return [{"task_id": pk, "attempt": attempt} for pk, attempt in sorted(stop)]


def _held(task: HostedTask, worker: GpuWorker, attempt: int) -> None:
    if task.worker_id != worker.pk or task.attempt != attempt or task.status != T.RUNNING:
        raise WorkerRefused(
            status=409, code="not_held", message=f"task {task.pk} attempt {attempt} is not running on {worker.name}"
        )


def task_claim(
    *, worker: GpuWorker, task_id: int, attempt: int, capability: object, public_data_url: Callable[[str], str]
) -> dict[str, Any]:
    """Take a queued task when it fits this worker's free capacity, and answer what the worker runs.

    The claim must carry the capability of the attempt's queue message (runners/capability.py); without it
    the answer says nothing about the task, not even whether it exists. public_data_url(slug) is the
    absolute url of a competition's public data."""
    if not capability_matches(task_id=task_id, attempt=attempt, capability=capability):
        raise WorkerRefused(
            status=403,
            code="capability_refused" if capability else "capability_required",
            message=f"a claim of task {task_id} attempt {attempt} must carry the capability of that attempt's "
            "queue message (the message's third argument); a worker token alone claims nothing",
        )
    with transaction.atomic():
        worker = GpuWorker.objects.select_for_update().get(pk=worker.pk)  # one claim at a time per worker
        task = (
            HostedTask.objects.select_related("hosted_run__registration", "competition__pack")
            .filter(pk=task_id)
            .first()
        )
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
        if worker.approved_at is None:
            # The message goes back to the queue (the worker treats this as does_not_fit), for approved workers.
            raise WorkerRefused(
                status=409,
                code="not_approved",
                message=f"{worker.name} waits for a maintainer to approve the hardware it declares "
                "(the workers page); it gets no task until then",
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
        taken = hosted_tasks_transition(
            tasks=HostedTask.objects.filter(pk=task.pk, attempt=attempt),
            to=T.RUNNING,
            worker=worker,
            started_at=now,
            seen_at=now,
            cancel_requested=False,
            output_tail="",
        )
        if not taken:  # another worker's claim (or a cancel) got there between the read and this update
            raise WorkerRefused(
                status=409, code="not_queued", message=f"task {task_id} attempt {attempt} is not queued"
            )
        HostedTask.objects.filter(pk=task.pk, reason__startswith=WAITING).update(
            reason=""
        )  # claimed: no longer waiting
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
        "processes": settings.HOSTED_PROCESSES_PER_RUN,
        "network": settings.HOSTED_ALLOW_NETWORK,
        "max_output_bytes": settings.HOSTED_MAX_OUTPUT_BYTES,
        # The run's registration: the worker writes its nonce as the first line of run.log (SPEC section 9).
        "registration": (
            {"id": run.registration.pk, "nonce": run.registration.nonce} if run.registration is not None else None
        ),
        "public_data": {
            "url": public_data_url(task.competition.slug),
            "sha256": pack.public_sha256,
            "bytes": pack.public_bytes,
        },
    }


def _format_check_allowed(task: HostedTask, attempt: int, size: int) -> FormatCheck:
    """Count the call against the task's limits and keep it (as not yet answered), or refuse it with a 429
    whose reason the agent reads from validate_submission.sh. A refused call is not kept: it was no check."""
    with transaction.atomic():
        HostedTask.objects.select_for_update().filter(pk=task.pk).first()  # concurrent calls count one by one
        calls = FormatCheck.objects.filter(task=task, attempt=attempt)
        total = calls.count()
        if total >= settings.HOSTED_FORMAT_CHECKS_PER_TASK:
            raise WorkerRefused(
                status=429,
                code="format_checks_exhausted",
                message=f"this run made its {total} format checks, the most one run may make "
                f"(HOSTED_FORMAT_CHECKS_PER_TASK); what it leaves in /home/submission is graded at the end as it is",
            )
        window_start = timezone.now() - timedelta(minutes=1)
        recent = list(calls.filter(at__gte=window_start).order_by("at").values_list("at", flat=True))
        if len(recent) >= settings.HOSTED_FORMAT_CHECKS_PER_MINUTE:
            wait = max(1, math.ceil((recent[0] - window_start).total_seconds()))
            raise WorkerRefused(
                status=429,
                code="format_checks_rate_limited",
                message=f"at most {settings.HOSTED_FORMAT_CHECKS_PER_MINUTE} format checks a minute: try again "
                f"in {wait} s (this run has made {total} of its {settings.HOSTED_FORMAT_CHECKS_PER_TASK})",
            )
        return FormatCheck.objects.create(task=task, attempt=attempt, valid=False, reason="being checked", bytes=size)


def task_format_check(*, worker: GpuWorker, task_id: int, attempt: int, upload: UploadedFile) -> dict[str, Any]:
    """The agent's only oracle: is this submission valid, and if not why. Never a score. Every call is kept.

    The check runs in a process of its own, bounded in memory and time (grading.services.grade_file.
    format_check_isolated): the web process never runs a grader on a team's file nor loads the answers."""
    task = HostedTask.objects.select_related("competition__pack", "hosted_run").filter(pk=task_id).first()
    if task is None:
        raise WorkerRefused(status=404, code="not_found", message=f"no task {task_id}")
    _held(task, worker, attempt)
    limit = task.competition.pack.max_submission_bytes or settings.BUNDLE_MAX_SUBMISSION_BYTES
    size = upload.size or 0
    call = _format_check_allowed(task, attempt, size)
    valid: bool
    reason: str | None
    if size > limit:
        valid, reason = False, f"the file is {size} bytes; a submission for {task.competition.slug} is at most {limit}"
    else:
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "submission.csv"
            with path.open("wb") as out:
                for chunk in upload.chunks(1 << 20):
                    out.write(chunk)
            try:
                valid, reason = format_check_isolated(
                    competition=task.competition,
                    submission_path=path,
                    timeout_seconds=settings.HOSTED_FORMAT_CHECK_TIMEOUT_SECONDS,
                    memory_bytes=settings.HOSTED_FORMAT_CHECK_MEMORY_GB * 1024**3,
                )
            except FormatCheckFailed as exc:
                valid, reason = False, f"{exc}, so this file could not be judged now (at the end it is graded as usual)"
    # The reason can quote the file, and the file what the agent wrote: the run's secrets never stay in it.
    reason = worker_reason(reason or "", secrets=run_secrets(task.hosted_run), paths=False) or None
    FormatCheck.objects.filter(pk=call.pk).update(valid=valid, reason=reason or "")
    return {"valid": valid, "reason": reason}


def _checked_outcome(outcome: dict[str, Any], run: HostedRun) -> dict[str, Any]:
    """The outcome's fields as the task keeps them; a wrong type or a value out of range is a 400 naming the
    field (outcome.<key>), never clamped: a worker that sends one is broken or hostile."""
    exit_code = outcome.get("exit_code")
    if exit_code is not None and (
        isinstance(exit_code, bool) or not isinstance(exit_code, int) or exit_code not in EXIT_CODES
    ):
        raise _invalid("outcome.exit_code", "must be null or a whole number from -255 to 255")
    reason = outcome.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise _invalid("outcome.reason", "must be null or text")
    tail = outcome.get("output_tail")
    if tail is not None and (not isinstance(tail, str) or len(tail) > OUTPUT_TAIL_LIMIT):
        raise _invalid("outcome.output_tail", f"must be null or text of at most {OUTPUT_TAIL_LIMIT} characters")
    # Without one (an older worker) the last heartbeat's tail stays.
    kept_tail = {} if tail is None else {"output_tail": worker_tail(tail, secrets=run_secrets(run))}
    return {
        **kept_tail,
        "exit_code": exit_code,
        "reason": worker_reason(reason or "", secrets=run_secrets(run)),
        **{
            key: _checked_seconds(outcome.get(key), field=f"outcome.{key}", run=run, optional=True)
            for key in ("elapsed_seconds", "setup_seconds", "collect_seconds")
        },
    }


def task_finish(
    *, worker: GpuWorker, task_id: int, outcome: dict[str, Any], archive: UploadedFile | None
) -> HostedTask:
    """Keep what the worker collected and end the task; once every task of the run ended, it is assembled."""
    attempt = outcome.get("attempt")
    status = OUTCOMES.get(outcome.get("status", "")) if isinstance(outcome.get("status"), str) else None
    if isinstance(attempt, bool) or not isinstance(attempt, int):
        raise _invalid("outcome.attempt", "a whole number is required")
    if status is None:
        raise _invalid("outcome.status", f"must be one of {', '.join(OUTCOMES)}")
    task = HostedTask.objects.select_related("hosted_run").filter(pk=task_id).first()
    if task is None:
        raise WorkerRefused(status=404, code="not_found", message=f"no task {task_id}")
    _held(task, worker, attempt)
    fields = _checked_outcome(outcome, task.hosted_run)
    archive_path, archive_bytes = "", 0
    if archive is not None and status != T.OVER_CAP:
        if (archive.size or 0) > settings.HOSTED_MAX_OUTPUT_BYTES:
            status = T.OVER_CAP
        else:
            archive_path = storages["private"].save(f"hosted/{task.hosted_run_id}/{task.pk}-{attempt}.tar.gz", archive)
            archive_bytes = archive.size or 0
    updated = hosted_tasks_transition(
        tasks=HostedTask.objects.filter(pk=task.pk, attempt=attempt, worker=worker),
        to=status,
        expected=(T.RUNNING,),
        archive_path=archive_path,
        archive_bytes=archive_bytes,
        **fields,
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
