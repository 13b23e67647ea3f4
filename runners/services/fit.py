"""What the registered workers can run, as a team meets it: a request that fits no worker is refused at once
(it would wait in the queue for nothing and count against the quota), queued tasks that fit none say so in
their reason, and the hosted-runs form starts from what fits and says what a run gets on each backend.

"Available" is a worker that reported its capacity, whose token is not revoked, whose declared hardware a
maintainer approved (runners/services/approval.py) and that was heard from (registered or beat) within
HOSTED_WORKER_LOST_SECONDS: a worker that never polls promises nothing.
"""

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from runners.models import GpuWorker, HostedTask

WAITING = "waiting: "  # the prefix of the reasons written here; only those (or none) are replaced


def _gpus(count: int) -> str:
    return f"{count} GPU{'' if count == 1 else 's'}"


def available_workers() -> list[GpuWorker]:
    seen_since = timezone.now() - timedelta(seconds=settings.HOSTED_WORKER_LOST_SECONDS)
    return list(
        GpuWorker.objects.filter(
            registered_at__isnull=False, revoked_at__isnull=True, approved_at__isnull=False, beat_at__gte=seen_since
        ).order_by("-gpus", "name")
    )


def task_cpus(worker: GpuWorker) -> float:
    """The CPUs one task gets: the board's standard share, or less on a smaller worker."""
    share = worker.cpus / max(worker.slots, 1) if worker.cpus else settings.HOSTED_CPUS_PER_RUN
    return float(min(settings.HOSTED_CPUS_PER_RUN, share))


def task_memory_gb(worker: GpuWorker) -> float:
    share = worker.memory_gb / max(worker.slots, 1) if worker.memory_gb else settings.HOSTED_MEMORY_GB_PER_RUN
    return float(min(settings.HOSTED_MEMORY_GB_PER_RUN, share))


def unfit_message(*, gpus: int, workers: list[GpuWorker]) -> str | None:
    """Why a task of `gpus` GPUs cannot run on any available worker, or None when one can hold it (or when no
    worker is available now: then nothing is known, and the task waits for one)."""
    largest = max((worker.gpus for worker in workers), default=None)
    if largest is None or gpus <= largest:
        return None
    return f"no worker has {_gpus(gpus)}; the largest has {largest}"


def queued_reason(*, gpus: int, workers: list[GpuWorker]) -> str:
    """What a queued task's Reason says while it waits for something other than a free slot ("" when it fits)."""
    hours = f"{settings.HOSTED_QUEUE_TIMEOUT_SECONDS / 3600:g} h"
    if not workers:
        return (
            f"{WAITING}no approved worker was heard from in the last {settings.HOSTED_WORKER_LOST_SECONDS} s; the "
            f"task starts when one is, or fails after {hours} in the queue (a failed run, or one cancelled before any "
            "of its tasks started, costs no quota)"
        )
    why = unfit_message(gpus=gpus, workers=workers)
    if why is None:
        return ""
    return (
        f"{WAITING}{why} now; the task starts if a larger worker registers, or fails after {hours} in the queue "
        "(a failed run costs no quota). Cancel it and ask again with fewer GPUs per run."
    )


def queued_reasons_refresh() -> int:
    """Bring the Reason of every queued task up to date with the available workers (after a worker registered
    with a new capacity, was approved, or went silent): a task no worker can hold says so, one that fits again is
    cleared. A reason of another kind (a requeue's) is left as it is. Returns how many tasks changed."""
    workers = available_workers()
    queued = HostedTask.objects.filter(status=HostedTask.Status.QUEUED)
    changed = 0
    for gpus in set(queued.values_list("hosted_run__gpus_per_run", flat=True)):
        reason = queued_reason(gpus=gpus, workers=workers)
        changed += (
            queued.filter(hosted_run__gpus_per_run=gpus)
            .filter(Q(reason="") | Q(reason__startswith=WAITING))
            .exclude(reason=reason)
            .update(reason=reason)
        )
    return changed


@dataclass(frozen=True, kw_only=True)
class Offer:
    """What the available workers offer a hosted run, for the form."""

    workers: list[GpuWorker]

    @property
    def largest_gpus(self) -> int | None:
        return max((worker.gpus for worker in self.workers), default=None)

    @property
    def default_gpus(self) -> int:
        """The board's standard one GPU when a worker has one; else 0, which every worker (and none) can run."""
        return min(1, self.largest_gpus or 0)

    def environments(self) -> list[str]:
        """One sentence per kind of worker there is: what a run gets there, as the backends make it."""
        network = (
            "the worker machine's network (this portal allows it: HOSTED_ALLOW_NETWORK)"
            if settings.HOSTED_ALLOW_NETWORK
            else "no network"
        )
        lines: dict[str, str] = {}
        for worker in self.workers:
            if worker.backend == "docker":
                lines[worker.name] = (
                    f"a Docker container of the image with {network}, at most {task_cpus(worker):g} CPUs and "
                    f"{task_memory_gb(worker):g} GB of memory (no swap), {settings.HOSTED_SHM_GB} GB of /dev/shm, "
                    "the GPUs asked for, no new privileges, as the image's own user"
                )
            elif worker.sandbox == "off":
                lines[worker.name] = (
                    "a plain process on the worker machine, as the worker's own user with its files and "
                    "network, and no CPU or memory limit (its operator runs trusted agents only)"
                )
            else:
                lines[worker.name] = (
                    f"not a container: the start.sh of the agent folder named like the image (its operator "
                    f"installs agents), in a bubblewrap sandbox with {network}, a uid of its own (not root), its own "
                    "processes only, a root filesystem of /usr and a few /etc files, every GPU of the machine when it "
                    f"asks for any (the sandbox cannot pick some), at most {settings.HOSTED_PROCESSES_PER_RUN} "
                    f"processes and {task_memory_gb(worker):g} GB of memory, CPU time of the time limit times "
                    f"{task_cpus(worker):g} CPUs, {settings.HOSTED_SHM_GB} GB of /dev/shm and as much of /tmp"
                )
        if len(lines) > 1:
            return [f"{name}: {what}" for name, what in lines.items()]
        return [what[0].upper() + what[1:] for what in lines.values()]


def hosted_offer() -> Offer:
    return Offer(workers=available_workers())
