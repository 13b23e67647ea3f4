"""A maintainer's approval of a GPU worker: a new worker, or one whose declared hardware changed, gets no task
and promises teams no capacity until a maintainer approved the hardware it declares.

Any worker token could declare 8 H100s; the approval page shows what the worker measured of itself (the
driver's GPUs and their memory, its CPUs, its memory) beside what it declares, and the maintainer approves
exactly the declaration they saw (its fingerprint travels with the form), so a worker that declares other
hardware meanwhile is not approved by a look at the old one.
"""

import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from portal.refusals import Refused
from runners.models import GpuWorker
from runners.services.fit import queued_reasons_refresh

logger = logging.getLogger(__name__)

# What a worker declares of its hardware; a change of any of these sends it back to pending. (Its software
# version is not hardware: a worker upgraded in place stays approved.)
HARDWARE_FIELDS = ("gpus", "gpu_model", "gpu_memory_gb", "cpus", "memory_gb", "slots", "backend", "sandbox")
# A declaration over what was measured by more than this share: the page marks the line.
TOLERANCE = 0.1


class ApprovalRefused(Refused):
    """An approval that cannot be given as asked (409)."""


def declared_hardware(worker: GpuWorker) -> dict[str, Any]:
    return {name: getattr(worker, name) for name in HARDWARE_FIELDS}


def hardware_fingerprint(hardware: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(hardware, sort_keys=True, default=str).encode()).hexdigest()[:16]


def approval_after_register(worker: GpuWorker) -> None:
    """On the worker's (unsaved) row, as it registers: the operator's own local worker is approved as it is;
    any other keeps its approval only while it declares the hardware that was approved."""
    hardware = declared_hardware(worker)
    if worker.auto_approve:
        worker.approved_hardware, worker.approved_at, worker.approved_by = hardware, timezone.now(), None
    elif worker.approved_at is not None and worker.approved_hardware != hardware:
        worker.approved_at, worker.approved_by = None, None
        logger.warning("worker %s declares other hardware than was approved: pending approval again", worker.name)


def worker_approve(*, worker_id: int, by: User, fingerprint: str) -> GpuWorker:
    """Approve the hardware the worker declares now, if it is the declaration the maintainer saw."""
    with transaction.atomic():
        worker = GpuWorker.objects.select_for_update().filter(pk=worker_id).first()
        if worker is None:
            raise ApprovalRefused(status=404, code="not_found", message=f"No worker {worker_id}.")
        if worker.revoked_at is not None:
            raise ApprovalRefused(
                status=409, code="revoked", message=f"{worker.name}'s token is revoked: issue a new one first."
            )
        if worker.registered_at is None:
            raise ApprovalRefused(
                status=409,
                code="not_registered",
                message=f"{worker.name} has not registered yet: there is no hardware to approve.",
            )
        hardware = declared_hardware(worker)
        if hardware_fingerprint(hardware) != fingerprint:
            raise ApprovalRefused(
                status=409,
                code="hardware_changed",
                message=f"{worker.name} declared other hardware since this page was loaded: nothing was approved. "
                "Look at what it declares and measures now, and approve again.",
            )
        worker.approved_hardware, worker.approved_at, worker.approved_by = hardware, timezone.now(), by
        worker.save(update_fields=["approved_hardware", "approved_at", "approved_by"])
    logger.info("worker %s approved by %s: %s", worker.name, by.username, hardware)
    queued_reasons_refresh()  # queued tasks may fit now
    return worker


def worker_approval_withdraw(*, worker_id: int, by: User) -> GpuWorker:
    """Back to pending: it finishes what it runs but takes nothing new."""
    worker = GpuWorker.objects.filter(pk=worker_id).first()
    if worker is None:
        raise ApprovalRefused(status=404, code="not_found", message=f"No worker {worker_id}.")
    GpuWorker.objects.filter(pk=worker_id).update(approved_at=None, approved_by=None)
    logger.info("worker %s: approval withdrawn by %s", worker.name, by.username)
    queued_reasons_refresh()
    worker.refresh_from_db()
    return worker


@dataclass(frozen=True, kw_only=True)
class HardwareLine:
    what: str
    declared: str
    measured: str
    differs: bool


def _more(declared: float, measured: float) -> bool:
    """Declares more than it measured (beyond rounding): offering less than it has is the operator's choice."""
    return declared > measured * (1 + TOLERANCE)


def hardware_lines(worker: GpuWorker) -> list[HardwareLine]:
    """Declared against measured, line by line, for the approval page; "not measured" where the worker sent
    nothing (an older worker, or a machine without the driver)."""
    measured = worker.measured or {}
    gpus = measured.get("gpus")
    gpu_list: list[dict[str, Any]] = gpus if isinstance(gpus, list) else []
    not_measured = "not measured"
    models = sorted({str(gpu.get("model", "")) for gpu in gpu_list})
    memories = [float(gpu.get("memory_gb") or 0) for gpu in gpu_list]
    cpus, memory = measured.get("cpus"), measured.get("memory_gb")
    has_gpus = isinstance(gpus, list)
    return [
        HardwareLine(
            what="GPUs",
            declared=str(worker.gpus),
            measured=str(len(gpu_list)) if has_gpus else not_measured,
            differs=has_gpus and len(gpu_list) != worker.gpus,
        ),
        HardwareLine(
            what="GPU model",
            declared=worker.gpu_model or "—",
            measured=(", ".join(models) or "none") if has_gpus else not_measured,
            differs=has_gpus
            and bool(worker.gpus)
            and not any(worker.gpu_model.lower() in model.lower() for model in models if worker.gpu_model),
        ),
        HardwareLine(
            what="GPU memory (GB each)",
            declared=f"{worker.gpu_memory_gb:g}",
            measured=(f"{min(memories):g}" if memories else "—") if has_gpus else not_measured,
            differs=bool(memories) and _more(worker.gpu_memory_gb, min(memories)),
        ),
        HardwareLine(
            what="CPUs",
            declared=f"{worker.cpus:g}",
            measured=f"{float(cpus):g}" if isinstance(cpus, int | float) else not_measured,
            differs=isinstance(cpus, int | float) and _more(worker.cpus, float(cpus)),
        ),
        HardwareLine(
            what="Memory (GB)",
            declared=f"{worker.memory_gb:g}",
            measured=f"{float(memory):g}" if isinstance(memory, int | float) else not_measured,
            differs=isinstance(memory, int | float) and _more(worker.memory_gb, float(memory)),
        ),
    ]
