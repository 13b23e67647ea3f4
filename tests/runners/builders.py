"""Small builders for hosted-run tests: a worker with its token, a request, what a worker collects."""

import io
import json
import tarfile

from django.utils import timezone
from rest_framework.test import APIClient

from runners.capability import task_capability
from runners.models import GpuWorker
from runners.services.approval import declared_hardware
from runners.services.fit import queued_reasons_refresh
from runners.services.workers import Capacity, worker_register, worker_token_issue

COMPETITION = "spooky-author-identification"
SECRET = "sk-test-9f8e7d6c5b4a-never-shown"


def approve(worker: GpuWorker) -> GpuWorker:
    """A maintainer's approval of what the worker declares now (the approval page's own path is tested in
    tests/runners/test_worker_approval.py)."""
    worker.refresh_from_db()
    GpuWorker.objects.filter(pk=worker.pk).update(
        approved_hardware=declared_hardware(worker), approved_at=timezone.now()
    )
    queued_reasons_refresh()
    worker.refresh_from_db()
    return worker


def worker_client(
    *, name: str = "gpu-box-1", gpus: int = 2, slots: int = 2, approved: bool = True
) -> tuple[GpuWorker, APIClient]:
    """A registered worker (approved unless told otherwise) and an API client that speaks for it."""
    worker, key = worker_token_issue(name=name)
    worker_register(
        worker=worker,
        capacity=Capacity(
            gpus=gpus,
            gpu_model="A10",
            gpu_memory_gb=24,
            cpus=8,
            memory_gb=64,
            slots=slots,
            backend="process",
            version="",
        ),
    )
    if approved:
        worker = approve(worker)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Worker {key}")
    return worker, client


def hosted_body(**overrides) -> dict:
    body = {
        "image": "example-agent:latest",
        "split": "low",
        "seeds": 1,
        "time_limit_hours": 1,
        "gpus_per_run": 1,
        "env": {"OPENAI_API_KEY": SECRET},
        "competitions": [COMPETITION],
        "agent": {"name": "Example agent", "source_url": "https://example.org/agent"},
        "llms": ["none"],
    }
    body.update(overrides)
    return body


def collected_archive(*, files: dict[str, bytes]) -> io.BytesIO:
    """A tar.gz as a worker's collect step makes it: submission/, logs/, code/ and run.log at the top."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buffer.seek(0)
    buffer.name = "collected.tar.gz"
    return buffer


def outcome(attempt: int = 1, status: str = "exited", **more) -> str:
    return json.dumps({"attempt": attempt, "status": status, "exit_code": 0, "elapsed_seconds": 12.5, **more})


def claim_body(task_id: int, attempt: int = 1) -> dict:
    """What a worker sends to claim an attempt: the attempt and its queue message's capability."""
    return {"attempt": attempt, "capability": task_capability(task_id=task_id, attempt=attempt)}
